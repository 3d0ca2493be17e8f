package dev.readygate.restart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
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
 * most a torn last line; the next append first ends such a line so the new record starts on a line of its own. A write
 * that fails part-way (a full disk) is cut back to the file's length before it, so it leaves no torn line. A start
 * may be appended more than once (in progress, then when it ends): the last line with an {@code id} wins.
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

    /** The longest line read as a record (a record is a few KiB); a longer one is skipped as invalid. */
    static final int MAX_LINE = 1024 * 1024;

    /** How much of a file is read at once. */
    private static final int CHUNK = 64 * 1024;

    /** How many of the latest ids {@link #count()} remembers to tell a record written again from a new one. */
    private static final int RECENT_IDS = 1024;

    private final Path file;
    private final Path directory;
    private final long maxFileSize;
    private final int maxRotatedFiles;
    private final HistoryFiles files;
    private final JsonMapper json;
    private final ObjectWriter lineWriter;
    private final ObjectReader lineReader;
    private final Set<String> warned = new HashSet<>();
    // Records whose first line is in the current file (0) and in each rotated file (n): count() sums them.
    private final List<Long> firstLines = new ArrayList<>();
    private volatile long count = -1;
    private final java.util.SequencedSet<String> recentIds = new java.util.LinkedHashSet<>();

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
        this.maxRotatedFiles = maxRotatedFiles;
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
     * Every record kept, oldest first, one per id (its last version, at its first position). Blocking; holds every
     * record in memory: for the whole history use {@link #export()}.
     *
     * @throws UncheckedIOException when a file that exists cannot be read
     */
    public List<RestartRecord> load() {
        return latest(Integer.MAX_VALUE);
    }

    /**
     * The latest {@code count} records kept, oldest first, as {@link #load()} orders them. Reads the files line by
     * line and holds only the records it returns (and the place of every other). Blocking.
     *
     * @throws UncheckedIOException when a file that exists cannot be read
     */
    public List<RestartRecord> latest(int count) {
        try (Export export = export()) {
            List<Location> locations = export.locations();
            List<RestartRecord> records = new ArrayList<>(Math.min(count, locations.size()));
            for (Location location : locations.subList(Math.max(0, locations.size() - count), locations.size())) {
                RestartRecord record = export.read(location);
                if (record != null) {
                    records.add(record);
                }
            }
            return List.copyOf(records);
        }
    }

    /**
     * How many records the history keeps (one per id), as of the last full read ({@link #latest}, {@link #export})
     * and the appends since; -1 before the first read. Exact but for a record rewritten after its first line's file
     * was rotated away, which the next full read corrects.
     */
    public long count() {
        // Without the monitor: /status asks on an event loop, and an append holds it through its write to disk.
        return count;
    }

    /** Sums {@link #firstLines} into {@link #count}. Caller holds this object's monitor. */
    private void recount() {
        count = firstLines.isEmpty()
                ? -1
                : firstLines.stream().mapToLong(Long::longValue).sum();
    }

    /**
     * The whole history as it stands now, for reading it record by record: the files are opened (and indexed: the
     * place of each record's last version, at its first position) now; rotation and appends afterwards change
     * nothing of what it reads. Holds the place of each record (about 200 bytes: its id, file, offset, length and
     * engine start), never the records. Blocking; the caller
     * closes it.
     *
     * @throws UncheckedIOException when a file that exists cannot be read
     */
    public Export export() {
        List<FileChannel> channels = new ArrayList<>();
        List<Path> paths = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        synchronized (this) {
            try {
                for (Path path : files.oldestFirst()) {
                    try {
                        FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
                        channels.add(channel);
                        paths.add(path);
                        sizes.add(channel.size());
                    } catch (NoSuchFileException ex) {
                        // Rotated away meanwhile, or not written yet.
                    }
                }
            } catch (IOException ex) {
                Export.closeAll(channels);
                throw new UncheckedIOException("cannot read the restart history " + file, ex);
            }
        }
        Export export = new Export(paths, channels, sizes);
        try {
            Map<String, Location> index = new LinkedHashMap<>();
            long[] firstInFile = new long[paths.size()];
            for (int i = 0; i < paths.size(); i++) {
                int fileIndex = i;
                index(export, i, location -> {
                    if (index.putIfAbsent(location.id(), location) == null) {
                        firstInFile[fileIndex]++;
                    } else {
                        // The last version's content, at the first version's place.
                        index.replace(location.id(), location);
                    }
                });
            }
            export.locations = List.copyOf(index.values());
            remember(export, firstInFile);
            return export;
        } catch (IOException ex) {
            export.close();
            throw new UncheckedIOException("cannot read the restart history " + file, ex);
        } catch (RuntimeException ex) {
            export.close();
            throw ex;
        }
    }

    /** Keeps what a full read counted, per file, for {@link #count()}; and the ids appends may write again. */
    private synchronized void remember(Export export, long[] firstInFile) {
        firstLines.clear();
        // firstLines.get(0) is the current file's count, get(n) file .n's.
        for (int i = export.paths.size() - 1; i >= 0; i--) {
            Path path = export.paths.get(i);
            int number = path.equals(file) ? 0 : rotatedNumber(path);
            while (firstLines.size() <= number) {
                firstLines.add(0L);
            }
            firstLines.set(number, firstInFile[i]);
        }
        if (firstLines.isEmpty()) {
            firstLines.add(0L);
        }
        recentIds.clear();
        List<Location> locations = export.locations;
        locations
                .subList(Math.max(0, locations.size() - RECENT_IDS), locations.size())
                .forEach(location -> recentIds.add(location.id()));
        recount();
    }

    private int rotatedNumber(Path path) {
        return Integer.parseInt(path.getFileName()
                .toString()
                .substring(file.getFileName().toString().length() + 1));
    }

    /** Where a record's (last) line is in an {@link Export}'s files. */
    record Location(int file, long offset, int length, String id, Instant engineStart) {}

    /**
     * The history's files, opened at one moment, and where each kept record is in them, oldest first. Reading a
     * record reads its line again (a positional read on the opened file), so only the place of each is held.
     */
    public final class Export implements AutoCloseable {

        private final List<Path> paths;
        private final List<FileChannel> channels;
        private final List<Long> sizes;
        private List<Location> locations = List.of();

        private Export(List<Path> paths, List<FileChannel> channels, List<Long> sizes) {
            this.paths = List.copyOf(paths);
            this.channels = List.copyOf(channels);
            this.sizes = List.copyOf(sizes);
        }

        /** Every kept record's place, oldest first. */
        List<Location> locations() {
            return locations;
        }

        /** The record at {@code location}, or null when its line no longer reads as one. Blocking. */
        @Nullable
        RestartRecord read(Location location) {
            ByteBuffer buffer = ByteBuffer.allocate(location.length());
            FileChannel channel = channels.get(location.file());
            try {
                while (buffer.hasRemaining()) {
                    if (channel.read(buffer, location.offset() + buffer.position()) < 0) {
                        return null;
                    }
                }
            } catch (IOException ex) {
                throw new UncheckedIOException("cannot read the restart history " + paths.get(location.file()), ex);
            }
            try {
                return RestartRecordReader.read(lineReader.readTree(buffer.array(), 0, location.length()));
            } catch (JacksonException | RestartRecordReader.InvalidRecordException ex) {
                return null;
            }
        }

        @Override
        public void close() {
            closeAll(channels);
        }

        private static void closeAll(List<FileChannel> channels) {
            for (FileChannel channel : channels) {
                try {
                    channel.close();
                } catch (IOException ex) {
                    logger.debug("Cannot close a restart history file: {}", ex.toString());
                }
            }
        }
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
                rotated();
            }
            write(line);
            appended(record.id());
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot append to the restart history " + file, ex);
        }
    }

    /** One record as the JSON object its history line holds, without the line's end. */
    byte[] json(RestartRecord record) {
        return lineWriter.writeValueAsBytes(new RestartRecordView(record).json(json));
    }

    private byte[] line(RestartRecord record) {
        byte[] object = json(record);
        byte[] line = new byte[object.length + 1];
        System.arraycopy(object, 0, line, 0, object.length);
        line[object.length] = '\n';
        return line;
    }

    /** The counts {@link #count()} sums after a rotation: a new current file; files past the last are gone. */
    private void rotated() {
        if (firstLines.isEmpty()) {
            return;
        }
        while (firstLines.size() > maxRotatedFiles) {
            firstLines.removeLast();
        }
        firstLines.addFirst(0L);
        recount();
    }

    /** Counts a new id for {@link #count()}; a record written again is not a new one. */
    private void appended(String id) {
        if (firstLines.isEmpty() || !recentIds.add(id)) {
            return;
        }
        firstLines.set(0, firstLines.getFirst() + 1);
        if (recentIds.size() > RECENT_IDS) {
            recentIds.removeFirst();
        }
        recount();
    }

    /**
     * Reads the {@code fileIndex}-th file of {@code export} line by line, up to its size when opened, and hands each
     * valid record's place to {@code kept}. Holds one line at a time; a torn, invalid or oversized line is skipped,
     * with one WARN per file naming the lines (never their content).
     */
    private void index(Export export, int fileIndex, java.util.function.Consumer<Location> kept) throws IOException {
        Path path = export.paths.get(fileIndex);
        FileChannel channel = export.channels.get(fileIndex);
        long size = export.sizes.get(fileIndex);
        List<String> invalid = new ArrayList<>();
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK);
        java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
        boolean oversized = false;
        long position = 0;
        long lineStart = 0;
        int lineNumber = 0;
        while (position < size) {
            chunk.clear();
            chunk.limit((int) Math.min(CHUNK, size - position));
            int read = channel.read(chunk, position);
            if (read < 0) {
                break;
            }
            byte[] bytes = chunk.array();
            int from = 0;
            for (int i = 0; i < read; i++) {
                if (bytes[i] != '\n') {
                    continue;
                }
                lineNumber++;
                oversized = collect(line, bytes, from, i, oversized);
                judge(line, oversized, lineNumber, fileIndex, lineStart, invalid, kept);
                line.reset();
                oversized = false;
                from = i + 1;
                lineStart = position + i + 1;
            }
            oversized = collect(line, bytes, from, read, oversized);
            position += read;
        }
        if (line.size() > 0 || oversized) {
            lineNumber++;
            judge(line, oversized, lineNumber, fileIndex, lineStart, invalid, kept);
        }
        if (!invalid.isEmpty()) {
            // A torn line stays in its file: warned about once, not on every read.
            boolean known;
            synchronized (this) {
                known = !warned.add(path + " " + invalid);
            }
            String message = "Skipped {} invalid line(s) in the restart history {} (torn by a crash mid-write, or"
                    + " not a restart record): {}";
            if (known) {
                logger.debug(message, invalid.size(), path, listed(invalid));
            } else {
                logger.warn(message, invalid.size(), path, listed(invalid));
            }
        }
    }

    /** Adds {@code bytes[from, to)} to the line unless it grew past {@value #MAX_LINE} bytes; returns whether it did. */
    private static boolean collect(
            java.io.ByteArrayOutputStream line, byte[] bytes, int from, int to, boolean oversized) {
        if (oversized || line.size() + (to - from) > MAX_LINE) {
            line.reset();
            return true;
        }
        line.write(bytes, from, to - from);
        return false;
    }

    private void judge(
            java.io.ByteArrayOutputStream line,
            boolean oversized,
            int lineNumber,
            int fileIndex,
            long lineStart,
            List<String> invalid,
            java.util.function.Consumer<Location> kept) {
        if (oversized) {
            invalid.add("line " + lineNumber + " (longer than " + MAX_LINE / 1024 + " KiB)");
            return;
        }
        byte[] content = line.toByteArray();
        if (blank(content, 0, content.length)) {
            return;
        }
        try {
            RestartRecord record = RestartRecordReader.read(lineReader.readTree(content, 0, content.length));
            kept.accept(new Location(fileIndex, lineStart, content.length, record.id(), record.engineStart()));
        } catch (JacksonException ex) {
            // Never Jackson's message: it may quote the line.
            invalid.add("line " + lineNumber + " (not JSON)");
        } catch (RestartRecordReader.InvalidRecordException ex) {
            invalid.add("line " + lineNumber + " (" + ex.getMessage() + ")");
        }
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
            try {
                while (buffer.hasRemaining()) {
                    position += channel.write(buffer, position);
                }
                channel.force(true);
            } catch (IOException ex) {
                // A full disk takes part of the line: cut the file back to its last whole record, so no torn line
                // stays (truncating frees, so it works on a full disk).
                try {
                    channel.truncate(tail.size());
                    channel.force(true);
                } catch (IOException suppressed) {
                    ex.addSuppressed(suppressed);
                }
                throw ex;
            }
        }
        if (created) {
            files.syncDirectory();
        }
    }
}
