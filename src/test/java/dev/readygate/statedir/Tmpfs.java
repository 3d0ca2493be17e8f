package dev.readygate.statedir;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real, small file system for tests of a read-only or full state directory: a {@code tmpfs} mounted on a
 * directory, which can be remounted read-only and filled to the last byte. Needs root ({@code mount}), as CI has; a
 * test that uses it fails, with this said, where it cannot mount.
 */
public final class Tmpfs implements AutoCloseable {

    private final Path mountPoint;
    private final Path filler;

    private Tmpfs(Path mountPoint) {
        this.mountPoint = mountPoint;
        this.filler = mountPoint.resolve(".filler");
    }

    /** Mounts a tmpfs of {@code size} (e.g. {@code 256k}) on {@code mountPoint}, created when needed. */
    public static Tmpfs mount(Path mountPoint, String size) throws IOException {
        Files.createDirectories(mountPoint);
        run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0777", "tmpfs", mountPoint.toString());
        return new Tmpfs(mountPoint);
    }

    public Path path() {
        return mountPoint;
    }

    /** Remounts it read-only: writes fail with {@code Read-only file system} (EROFS), for root too. */
    public void readOnly() {
        run("mount", "-o", "remount,ro", mountPoint.toString());
    }

    /** Remounts it read-write. */
    public void readWrite() {
        run("mount", "-o", "remount,rw", mountPoint.toString());
    }

    /** Fills it to the last byte: writes then fail with {@code No space left on device} (ENOSPC). */
    public void fill() throws IOException {
        byte[] block = new byte[4096];
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(block);
                out.flush();
            }
        } catch (IOException ex) {
            if (!String.valueOf(ex.getMessage()).contains("No space left")) {
                throw ex;
            }
        }
        // What is left is smaller than a block: take it byte by byte.
        try (OutputStream out = Files.newOutputStream(filler, java.nio.file.StandardOpenOption.APPEND)) {
            while (true) {
                out.write(0);
                out.flush();
            }
        } catch (IOException ex) {
            if (!String.valueOf(ex.getMessage()).contains("No space left")) {
                throw ex;
            }
        }
    }

    /** Frees what {@link #fill()} took. */
    public void free() throws IOException {
        Files.deleteIfExists(filler);
    }

    @Override
    public void close() {
        run("umount", "-l", mountPoint.toString());
    }

    private static void run(String... command) {
        List<String> args = new ArrayList<>(List.of(command));
        try {
            Process process = new ProcessBuilder(args).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                fail(String.join(" ", args) + " failed (" + output.strip() + "): this test needs a real small file"
                        + " system, which needs root to mount (CI runs as root)");
            }
        } catch (IOException ex) {
            fail(String.join(" ", args) + " could not run: " + ex.getMessage());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            fail("interrupted: " + String.join(" ", args));
        }
    }
}
