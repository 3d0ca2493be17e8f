package dev.readygate.restart;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectReader;

/**
 * Reads an opened history file line by line and finds the place of each valid record. Holds one line at a time; a
 * torn, invalid or oversized line is skipped, with one WARN per file naming the file and the line numbers (never the
 * line's content); the same invalid lines of the same file are logged at DEBUG on later reads.
 */
final class HistoryIndexer {

    private static final Logger logger = LoggerFactory.getLogger(RestartHistory.class);

    /** How many invalid lines of one file the warning lists by number. */
    private static final int LISTED_INVALID_LINES = 10;

    /** The longest line read as a record (a record is a few KiB); a longer one is skipped as invalid. */
    static final int MAX_LINE = 1024 * 1024;

    /** How much of a file is read at once. */
    private static final int CHUNK = 64 * 1024;

    private final ObjectReader lineReader;
    // The invalid lines already warned about, by file: a torn line stays in its file.
    private final Set<String> warned = new HashSet<>();

    HistoryIndexer(ObjectReader lineReader) {
        this.lineReader = lineReader;
    }

    /**
     * Reads the {@code fileIndex}-th file of {@code export} up to its size when opened, and hands each valid record's
     * place to {@code kept}, in file order.
     */
    void index(HistoryExport export, int fileIndex, Consumer<HistoryExport.Location> kept) throws IOException {
        HistoryExport.Opened file = export.files().get(fileIndex);
        FileChannel channel = file.channel();
        long size = file.size();
        List<String> invalid = new ArrayList<>();
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK);
        ByteArrayOutputStream line = new ByteArrayOutputStream();
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
            boolean known;
            synchronized (warned) {
                known = !warned.add(file.path() + " " + invalid);
            }
            String message = "Skipped {} invalid line(s) in the restart history {} (torn by a crash mid-write, or"
                    + " not a restart record): {}";
            if (known) {
                logger.debug(message, invalid.size(), file.path(), listed(invalid));
            } else {
                logger.warn(message, invalid.size(), file.path(), listed(invalid));
            }
        }
    }

    /** Adds {@code bytes[from, to)} to the line unless it grew past {@value #MAX_LINE} bytes; returns whether it did. */
    private static boolean collect(ByteArrayOutputStream line, byte[] bytes, int from, int to, boolean oversized) {
        if (oversized || line.size() + (to - from) > MAX_LINE) {
            line.reset();
            return true;
        }
        line.write(bytes, from, to - from);
        return false;
    }

    private void judge(
            ByteArrayOutputStream line,
            boolean oversized,
            int lineNumber,
            int fileIndex,
            long lineStart,
            List<String> invalid,
            Consumer<HistoryExport.Location> kept) {
        if (oversized) {
            invalid.add("line " + lineNumber + " (longer than " + MAX_LINE / 1024 + " KiB)");
            return;
        }
        byte[] content = line.toByteArray();
        if (blank(content)) {
            return;
        }
        try {
            RestartRecord record = RecordJson.read(lineReader.readTree(content, 0, content.length));
            kept.accept(new HistoryExport.Location(
                    fileIndex,
                    lineStart,
                    content.length,
                    record.id(),
                    record.when().engineStart()));
        } catch (JacksonException ex) {
            // Never Jackson's message: it may quote the line.
            invalid.add("line " + lineNumber + " (not JSON)");
        } catch (JsonSchema.InvalidRecordException ex) {
            invalid.add("line " + lineNumber + " (" + ex.getMessage() + ")");
        }
    }

    private static boolean blank(byte[] content) {
        for (byte b : content) {
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
}
