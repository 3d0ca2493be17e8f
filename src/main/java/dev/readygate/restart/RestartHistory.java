package dev.readygate.restart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.util.unit.DataSize;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * The restart history: every engine start's {@link RestartRecord}, one JSON object per line, in an append-only file
 * (by default {@code <state-dir>/restarts.jsonl}) that survives readygate's restarts.
 *
 * <p><b>Appending</b> ({@link HistoryAppender}). Each record is one line written with a single write and forced to
 * disk, so a crash leaves at most a torn last line; the next append first ends such a line. A write that fails
 * part-way (a full disk) leaves no torn line. A start may be appended more than once (in progress, then when it ends):
 * the last line with an {@code id} wins.
 *
 * <p><b>Rotation</b> ({@link HistoryFiles}). When an append would take the file past {@code maxFileSize},
 * {@code restarts.jsonl.(N-1)} becomes {@code .N}, ..., the file becomes {@code .1}, and files numbered
 * {@code maxRotatedFiles} or beyond are dropped first. A single record larger than {@code maxFileSize} is still
 * written, alone in its file.
 *
 * <p><b>Reading</b> ({@link HistoryExport}, {@link HistoryIndexer}). The rotated files are read oldest first
 * ({@code .N} ... {@code .1}), then the file, line by line. A torn or invalid line is skipped, with one WARN per file
 * naming the file and the line numbers (never the line's content). Records keep the position of their id's first line
 * and the content of its last.
 *
 * <p>The JSON shape of a record is {@link RestartRecordView}'s: component names as field names, instants and the
 * readiness latency as ISO-8601 strings, {@code path} as {@link RestartPath#value()}.
 *
 * <p><b>Blocking.</b> Every method but {@link #count()} does blocking file I/O: callers on an event loop run them on a
 * blocking-capable scheduler. Thread-safe within one JVM (appends, rotation and opening the files for a read hold this
 * object's monitor); one readygate per file, as one per state directory.
 */
public final class RestartHistory {

    /** The history's file name in the state directory. */
    public static final String FILE_NAME = "restarts.jsonl";

    private final Path file;
    private final HistoryFiles files;
    private final HistoryAppender appender;
    private final HistoryIndexer indexer;
    private final HistoryCount count;
    private final ObjectReader lineReader;
    /** Records kept but not written (the state directory refused them), by id, in the order first refused. */
    private final Map<String, RestartRecord> unwritten = new LinkedHashMap<>();

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
        this.files = new HistoryFiles(absolute, parent, maxRotatedFiles);
        this.appender = new HistoryAppender(absolute, maxFileSize.toBytes(), files, json);
        this.lineReader = json.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        this.indexer = new HistoryIndexer(lineReader);
        this.count = new HistoryCount(absolute, maxRotatedFiles);
    }

    /** The current file. */
    public Path file() {
        return file;
    }

    /**
     * Every record kept, oldest first, one per id (its last version, at its first position). Blocking; holds every
     * record in memory: for the whole history, {@link RestartExport} streams it.
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
        try (HistoryExport export = export()) {
            List<HistoryExport.Location> locations = export.locations();
            List<RestartRecord> records = new ArrayList<>(Math.min(count, locations.size()));
            for (HistoryExport.Location location :
                    locations.subList(Math.max(0, locations.size() - count), locations.size())) {
                RestartRecord record = export.read(location);
                if (record != null) {
                    records.add(record);
                }
            }
            return List.copyOf(records);
        }
    }

    /**
     * How many records the history keeps (one per id), as of the last full read ({@link #latest}, an export) and the
     * appends since; -1 before the first read. Exact but for a record rewritten after its first line's file was
     * rotated away, which the next full read corrects.
     */
    public long count() {
        // Without the monitor: /status asks on an event loop, and an append holds it through its write to disk.
        return count.value();
    }

    /**
     * The whole history as it stands now, for reading it record by record: the files are opened (and indexed: the
     * place of each record's last version, at its first position) now; rotation and appends afterwards change
     * nothing of what it reads. Blocking; the caller closes it.
     *
     * @throws UncheckedIOException when a file that exists cannot be read
     */
    HistoryExport export() {
        HistoryExport export;
        synchronized (this) {
            export = HistoryExport.open(files.oldestFirst(), lineReader, file);
        }
        try {
            List<HistoryExport.Opened> opened = export.files();
            Map<String, HistoryExport.Location> index = new LinkedHashMap<>();
            long[] firstInFile = new long[opened.size()];
            for (int i = 0; i < opened.size(); i++) {
                int fileIndex = i;
                indexer.index(export, i, location -> {
                    if (index.putIfAbsent(location.id(), location) == null) {
                        firstInFile[fileIndex]++;
                    } else {
                        // The last version's content, at the first version's place.
                        index.replace(location.id(), location);
                    }
                });
            }
            export.indexed(List.copyOf(index.values()));
            synchronized (this) {
                count.read(opened.stream().map(HistoryExport.Opened::path).toList(), firstInFile, export.locations());
            }
            return export;
        } catch (IOException ex) {
            export.close();
            throw new UncheckedIOException("cannot read the restart history " + file, ex);
        } catch (RuntimeException ex) {
            export.close();
            throw ex;
        }
    }

    /** One record as the JSON object its history line holds, without the line's end (the JSON export's rows). */
    byte[] json(RestartRecord record) {
        return appender.json(record);
    }

    /**
     * Appends a record as one line, forced to disk, rotating first when the file would grow past its maximum size.
     * Creates the directory when needed. Blocking.
     *
     * @throws UncheckedIOException when the record cannot be written
     */
    public synchronized void append(RestartRecord record) {
        try {
            appender.append(record, count::rotated);
            count.appended(record.id());
            synchronized (unwritten) {
                // Only this version: a newer one handed over meanwhile is still on its way.
                unwritten.remove(record.id(), record);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot append to the restart history " + file, ex);
        }
    }

    /**
     * Notes a record handed to the history's writer: until its write succeeds, the exports add it from memory, so that
     * a start just kept (and shown by {@code /status}) is never missing from them while its line is on its way to the
     * file. A write that fails leaves it noted ({@link #notWritten}).
     */
    public void writing(RestartRecord record) {
        notWritten(record);
    }

    /**
     * Notes a record readygate keeps but could not write (the state directory is degraded or held by another
     * readygate): the exports add it from memory, and say so, until a write of it succeeds. At most the records
     * readygate keeps in memory are noted.
     */
    public void notWritten(RestartRecord record) {
        synchronized (unwritten) {
            unwritten.put(record.id(), record);
            while (unwritten.size() > RestartRecords.KEPT) {
                unwritten.remove(unwritten.keySet().iterator().next());
            }
        }
    }

    /** The records noted by {@link #notWritten} and not written since, oldest first. */
    List<RestartRecord> unwritten() {
        synchronized (unwritten) {
            return List.copyOf(unwritten.values());
        }
    }
}
