package dev.readygate.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * A readygate state directory as {@code kill -9} leaves it: its files as they stand at that moment (the kernel keeps
 * every completed write), without the lock, which dies with the process. A test copies the directory of a running
 * readygate and starts the next one on the copy: the next readygate after a kill, while the first may be let go.
 */
public final class KilledStateDir {

    private KilledStateDir() {}

    /** Copies {@code state}'s files to {@code copy}, all but {@code readygate.lock}. */
    public static Path copy(Path state, Path copy) throws IOException {
        Files.createDirectories(copy);
        try (Stream<Path> files = Files.list(state)) {
            for (Path file : files.toList()) {
                if (!file.getFileName().toString().equals("readygate.lock") && Files.isRegularFile(file)) {
                    try {
                        Files.copy(file, copy.resolve(file.getFileName()));
                    } catch (NoSuchFileException ex) {
                        // Gone since the listing (a temporary file renamed onto its target): at a kill the disk holds
                        // the target as it was or as the rename left it, and the listing has the target.
                    }
                }
            }
        }
        return copy;
    }
}
