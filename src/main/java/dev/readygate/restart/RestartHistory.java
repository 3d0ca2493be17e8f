package dev.readygate.restart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.unit.DataSize;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The restart history: every engine start's {@link RestartRecord}, one JSON object per line, in an append-only file
 * (by default {@code <state-dir>/restarts.jsonl}) that survives readygate's restarts.
 *
 * <p><b>Appending.</b> Each record is one line written with a single write and forced to disk, so a crash leaves at
 * most a torn last line; the next append first ends such a line so the new record starts on a line of its own. A
 * start may be appended more than once (in progress, then when it ends): the last line with an {@code id} wins.
 *
 * <p><b>Rotation.</b> When an append would take the file past {@code maxFileSize}, {@code restarts.jsonl.(N-1)} becomes
 * {@code .N}, ..., the file becomes {@code .1}, and files numbered {@code maxRotatedFiles} or beyond are dropped
 * first. A single record larger than {@code maxFileSize} is still written, alone in its file.
 *
 * <p><b>Loading.</b> The rotated files are read oldest first ({@code .N} ... {@code .1}), then the file. A torn or
 * invalid line is skipped, with one WARN per file naming the file and the line numbers (never the line's content);
 * the same invalid lines of the same file are logged at DEBUG on later loads.
 * Records keep the position of their id's first line and the content of its last.
 *
 * <p>The JSON shape of a record is {@link RestartRecordView}'s: component names as field names, instants and the
 * readiness latency as ISO-8601 strings, {@code path} as {@link RestartPath#value()}.
 *
 * <p><b>Blocking.</b> Every method but the exports does blocking file I/O: callers on an event loop run them on a
 * blocking-capable scheduler ({@code Mono.fromCallable(history::load).subscribeOn(Schedulers.boundedElastic())}).
 * Thread-safe within one JVM (methods are synchronized); one readygate per file, as one per state directory.
 */
public final class RestartHistory {

    /** The history's file name in the state directory. */
    public static final String FILE_NAME = "restarts.jsonl";

    private static final Logger logger = LoggerFactory.getLogger(RestartHistory.class);

    /** How many invalid lines of one file the warning lists by number. */
    private static final int LISTED_INVALID_LINES = 10;

    private final Path file;
    private final Path directory;
    private final long maxFileSize;
    private final HistoryFiles files;
    private final JsonMapper json;
    private final ObjectWriter lineWriter;
    private final ObjectReader lineReader;
    private final Set<String> warned = new HashSet<>();

    /**
     * A history kept in {@code file}.
     *
     * @param file the current file; rotated files are its siblings {@code <name>.1}, {@code <name>.2}, ...
     * @param maxFileSize the size an append may not take the current file past (it rotates first)
     * @param maxRotatedFiles how many rotated files are kept; 0 drops the file's records when it rotates
     * @param json the mapper for the lines (any indentation it is configured with is not used for lines)
     */
    public RestartHistory(Path file, DataSize maxFileSize, int maxRotatedFiles, JsonMapper json) {
        Path absolute = file.toAbsolutePath();
        Path parent = absolute.getParent();
        if (parent == null || absolute.getFileName() == null) {
            throw new IllegalArgumentException("restart history file " + file + " has no directory");
        }
        if (maxFileSize.toBytes() <= 0) {
            throw new IllegalArgumentException("restart history maxFileSize must be positive, was " + maxFileSize);
        }
        if (maxRotatedFiles < 0) {
            throw new IllegalArgumentException(
                    "restart history maxRotatedFiles must not be negative, was " + maxRotatedFiles);
        }
        this.file = absolute;
        this.directory = parent;
        this.maxFileSize = maxFileSize.toBytes();
        this.files = new HistoryFiles(absolute, parent, maxRotatedFiles);
        this.json = json;
        this.lineWriter = json.writer().without(SerializationFeature.INDENT_OUTPUT);
        this.lineReader = json.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    /** The current file. */
    public Path file() {
        return file;
    }

    /**
     * Every record kept, oldest first, one per id (its last version, at its first position). Blocking.
     *
     * @throws UncheckedIOException when a file that exists cannot be read
     */
    public synchronized List<RestartRecord> load() {
        Map<String, RestartRecord> records = new LinkedHashMap<>();
        for (Path path : files.oldestFirst()) {
            read(path).forEach(record -> records.put(record.id(), record));
        }
        return List.copyOf(records.values());
    }

    /**
     * Appends a record as one line, forced to disk, rotating first when the file would grow past its maximum size.
     * Creates the directory when needed. Blocking.
     *
     * @throws UncheckedIOException when the record cannot be written
     */
    public synchronized void append(RestartRecord record) {
        byte[] line = line(record);
        try {
            Files.createDirectories(directory);
            Tail tail = tail();
            if (tail.size() > 0 && tail.size() + tail.separator() + line.length > maxFileSize) {
                files.rotate();
            }
            write(line);
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot append to the restart history " + file, ex);
        }
    }

    private byte[] line(RestartRecord record) {
        byte[] object = lineWriter.writeValueAsBytes(new RestartRecordView(record).json(json));
        byte[] line = new byte[object.length + 1];
        System.arraycopy(object, 0, line, 0, object.length);
        line[object.length] = '\n';
        return line;
    }

    private List<RestartRecord> read(Path path) {
        byte[] content;
        try {
            content = Files.readAllBytes(path);
        } catch (NoSuchFileException ex) {
            return List.of();
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot read the restart history " + path, ex);
        }
        List<RestartRecord> records = new ArrayList<>();
        List<String> invalid = new ArrayList<>();
        int lineNumber = 0;
        int start = 0;
        while (start < content.length) {
            int end = start;
            while (end < content.length && content[end] != '\n') {
                end++;
            }
            lineNumber++;
            if (!blank(content, start, end)) {
                try {
                    records.add(RestartRecordReader.read(lineReader.readTree(content, start, end - start)));
                } catch (JacksonException ex) {
                    // Never Jackson's message: it may quote the line.
                    invalid.add("line " + lineNumber + " (not JSON)");
                } catch (RestartRecordReader.InvalidRecordException ex) {
                    invalid.add("line " + lineNumber + " (" + ex.getMessage() + ")");
                }
            }
            start = end + 1;
        }
        if (!invalid.isEmpty()) {
            // A torn line stays in its file: warned about once, not on every load.
            boolean known = !warned.add(path + " " + invalid);
            String message = "Skipped {} invalid line(s) in the restart history {} (torn by a crash mid-write, or"
                    + " not a restart record): {}";
            if (known) {
                logger.debug(message, invalid.size(), path, listed(invalid));
            } else {
                logger.warn(message, invalid.size(), path, listed(invalid));
            }
        }
        return records;
    }

    private static boolean blank(byte[] content, int start, int end) {
        for (int i = start; i < end; i++) {
            byte b = content[i];
            if (b != ' ' && b != '\t' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    private static String listed(List<String> invalid) {
        String listed = invalid.stream().limit(LISTED_INVALID_LINES).collect(Collectors.joining(", "));
        return invalid.size() > LISTED_INVALID_LINES
                ? listed + " and " + (invalid.size() - LISTED_INVALID_LINES) + " more"
                : listed;
    }

    /**
     * The current file's size and whether its last line is torn (no final newline).
     *
     * @param separator 1 when a newline must precede the next line, else 0
     */
    private record Tail(long size, int separator) {}

    private Tail tail() throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            return tail(channel);
        } catch (NoSuchFileException ex) {
            return new Tail(0, 0);
        }
    }

    private static Tail tail(FileChannel channel) throws IOException {
        long size = channel.size();
        if (size == 0) {
            return new Tail(0, 0);
        }
        ByteBuffer last = ByteBuffer.allocate(1);
        while (last.hasRemaining()) {
            if (channel.read(last, size - 1) < 0) {
                throw new IOException("restart history shrank while being read");
            }
        }
        return new Tail(size, last.get(0) == '\n' ? 0 : 1);
    }

    private void write(byte[] line) throws IOException {
        boolean created = Files.notExists(file);
        try (FileChannel channel =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            Tail tail = tail(channel);
            ByteBuffer buffer = ByteBuffer.allocate(tail.separator() + line.length);
            if (tail.separator() == 1) {
                buffer.put((byte) '\n');
            }
            buffer.put(line).flip();
            long position = tail.size();
            while (buffer.hasRemaining()) {
                position += channel.write(buffer, position);
            }
            channel.force(true);
        }
        if (created) {
            files.syncDirectory();
        }
    }
}
