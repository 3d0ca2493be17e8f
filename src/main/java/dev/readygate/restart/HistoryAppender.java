package dev.readygate.restart;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Appends records to the history's current file, one line each, written with a single write and forced to disk. A
 * torn last line (a crash mid-write) is ended first so the new record starts on a line of its own; a write that fails
 * part-way (a full disk) is cut back to the file's length before it. Rotates first when the line would take the file
 * past its maximum size (a line larger than that is still written, alone in its file). Blocking; called by
 * {@link RestartHistory} under its lock.
 */
final class HistoryAppender {

    private final Path file;
    private final long maxFileSize;
    private final HistoryFiles files;
    private final JsonMapper json;
    private final ObjectWriter lineWriter;

    HistoryAppender(Path file, long maxFileSize, HistoryFiles files, JsonMapper json) {
        this.file = file;
        this.maxFileSize = maxFileSize;
        this.files = files;
        this.json = json;
        this.lineWriter = json.writer().without(SerializationFeature.INDENT_OUTPUT);
    }

    /**
     * Appends {@code record} as one line, creating the directory when needed; {@code rotated} runs when the files
     * rotated first (before the write, which may still fail).
     */
    void append(RestartRecord record, Runnable rotated) throws IOException {
        byte[] line = line(record);
        Files.createDirectories(file.getParent());
        Tail tail = tail();
        if (tail.size() > 0 && tail.size() + tail.separator() + line.length > maxFileSize) {
            files.rotate();
            rotated.run();
        }
        write(line);
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
