package dev.readygate.restart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectReader;

/**
 * The history's files, opened at one moment, and where each kept record is in them, oldest first. Rotation and appends
 * afterwards change nothing of what it reads. Reading a record reads its line again (a positional read on the opened
 * file), so only the place of each is held (about 200 bytes: its id, file, offset, length and engine start). Blocking;
 * the caller closes it.
 */
final class HistoryExport implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(HistoryExport.class);

    /** Where a record's (last) line is in an export's files. */
    record Location(int file, long offset, int length, String id, Instant engineStart) {}

    /** One opened file: where it is and its size when opened (what is read of it). */
    record Opened(Path path, FileChannel channel, long size) {}

    private final List<Opened> files;
    private final ObjectReader lineReader;
    private List<Location> locations = List.of();

    private HistoryExport(List<Opened> files, ObjectReader lineReader) {
        this.files = List.copyOf(files);
        this.lineReader = lineReader;
    }

    /**
     * Opens {@code paths} (oldest first) for reading; a path that is gone (rotated away meanwhile, or not written yet)
     * is left out.
     *
     * @throws UncheckedIOException when a file that exists cannot be opened
     */
    static HistoryExport open(List<Path> paths, ObjectReader lineReader, Path history) {
        List<Opened> opened = new ArrayList<>();
        try {
            for (Path path : paths) {
                Path directory = path.toAbsolutePath().getParent();
                if (directory != null && !java.nio.file.Files.isDirectory(directory)) {
                    // The state directory is missing, or a file stands in its place: nothing was written there.
                    continue;
                }
                try {
                    FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
                    opened.add(new Opened(path, channel, channel.size()));
                } catch (NoSuchFileException ex) {
                    // Rotated away meanwhile, or not written yet.
                }
            }
        } catch (IOException ex) {
            opened.forEach(file -> close(file.channel()));
            throw new UncheckedIOException("cannot read the restart history " + history, ex);
        }
        return new HistoryExport(opened, lineReader);
    }

    /** The opened files, oldest first. */
    List<Opened> files() {
        return files;
    }

    /** Every kept record's place, oldest first. */
    List<Location> locations() {
        return locations;
    }

    void indexed(List<Location> locations) {
        this.locations = List.copyOf(locations);
    }

    /** The record at {@code location}, or null when its line no longer reads as one. Blocking. */
    @Nullable
    RestartRecord read(Location location) {
        ByteBuffer buffer = ByteBuffer.allocate(location.length());
        Opened file = files.get(location.file());
        try {
            while (buffer.hasRemaining()) {
                if (file.channel().read(buffer, location.offset() + buffer.position()) < 0) {
                    return null;
                }
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot read the restart history " + file.path(), ex);
        }
        try {
            return RecordJson.read(lineReader.readTree(buffer.array(), 0, location.length()));
        } catch (JacksonException | JsonSchema.InvalidRecordException ex) {
            return null;
        }
    }

    @Override
    public void close() {
        files.forEach(file -> close(file.channel()));
    }

    private static void close(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ex) {
            logger.debug("Cannot close a restart history file: {}", ex.toString());
        }
    }
}
