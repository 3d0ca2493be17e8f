package dev.readygate.restart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The restart history's files: the current one and its rotated siblings {@code <name>.1} (the newest) to
 * {@code <name>.N}. Blocking file I/O, called by {@link RestartHistory} under its lock.
 */
final class HistoryFiles {

    private static final Logger logger = LoggerFactory.getLogger(HistoryFiles.class);

    private final Path file;
    private final Path directory;
    private final int maxRotated;

    HistoryFiles(Path file, Path directory, int maxRotated) {
        this.file = file;
        this.directory = directory;
        this.maxRotated = maxRotated;
    }

    /** The kept files, oldest first: {@code .N} ... {@code .1}, then the current one. */
    List<Path> oldestFirst() {
        List<Path> files = new ArrayList<>();
        rotatedNumbers().stream()
                .filter(number -> number <= maxRotated)
                .sorted(Comparator.reverseOrder())
                .forEach(number -> files.add(rotated(number)));
        files.add(file);
        return files;
    }

    /**
     * {@code .(N-1)} becomes {@code .N}, ..., the current file becomes {@code .1}; files numbered {@code maxRotated} or
     * beyond are dropped first (with none kept, the current file is dropped).
     */
    void rotate() throws IOException {
        List<Integer> numbers = rotatedNumbers();
        for (int number : numbers) {
            if (number >= maxRotated) {
                Files.deleteIfExists(rotated(number));
            }
        }
        List<Integer> kept = numbers.stream()
                .filter(number -> number < maxRotated)
                .sorted(Comparator.reverseOrder())
                .toList();
        for (int number : kept) {
            move(rotated(number), rotated(number + 1));
        }
        if (maxRotated > 0) {
            move(file, rotated(1));
        } else {
            Files.deleteIfExists(file);
        }
        syncDirectory();
        logger.debug("Rotated the restart history {}", file);
    }

    private Path rotated(int number) {
        return file.resolveSibling(file.getFileName() + "." + number);
    }

    /** The numbers of the rotated files present, in no particular order. */
    private List<Integer> rotatedNumbers() {
        String prefix = file.getFileName() + ".";
        List<Integer> numbers = new ArrayList<>();
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(directory, prefix + "*")) {
            for (Path sibling : siblings) {
                String suffix = sibling.getFileName().toString().substring(prefix.length());
                if (!suffix.isEmpty()
                        && suffix.length() <= 9
                        && suffix.chars().allMatch(c -> c >= '0' && c <= '9')
                        && !suffix.startsWith("0")) {
                    numbers.add(Integer.parseInt(suffix));
                }
            }
        } catch (NoSuchFileException | java.nio.file.NotDirectoryException ex) {
            // No directory (or a file in its place): no rotated files.
            return List.of();
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot list the restart history's rotated files in " + directory, ex);
        }
        return numbers;
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException ex) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Makes a created or renamed file's directory entry durable, where the platform allows it (Linux does). */
    void syncDirectory() {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | UnsupportedOperationException ex) {
            logger.debug("Cannot sync the directory {}: {}", directory, ex.toString());
        }
    }
}
