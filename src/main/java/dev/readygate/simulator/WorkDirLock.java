package dev.readygate.simulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One simulator per work directory: an exclusive OS lock on {@value #FILE}, taken before the simulator writes anything
 * there and held until it closes (it dies with the process). A second simulator in the same directory would overwrite
 * the first one's engine container start id, snapshot and GPU files under a running engine, and readygate would read
 * them as that engine's: it is refused instead, naming the holder.
 */
final class WorkDirLock implements AutoCloseable {

    /** The lock file's name in the work directory. */
    static final String FILE = "simulator.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private WorkDirLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the work directory (creating it), or throws naming the simulator that holds it.
     *
     * @throws IllegalStateException when the directory cannot be created or another simulator holds it
     */
    static WorkDirLock take(Path workDir, Instant now) {
        Path file = workDir.resolve(FILE);
        FileChannel channel;
        try {
            Files.createDirectories(workDir);
            channel = FileChannel.open(
                    file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException ex) {
            throw new IllegalStateException(
                    "readygate.simulator.work-dir: cannot create " + workDir + ": " + ex.getMessage(), ex);
        }
        try {
            FileLock lock = tryLock(channel);
            if (lock == null) {
                String holder = Files.readString(file, StandardCharsets.UTF_8).strip();
                channel.close();
                throw new IllegalStateException("readygate.simulator.work-dir: " + workDir
                        + " is in use by another simulator (" + (holder.isEmpty() ? "holder unknown" : holder)
                        + "): stop it, or give this one its own work-dir (the demo's is under readygate.state-dir)");
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(("pid " + ProcessHandle.current().pid() + " since " + now + "\n")
                    .getBytes(StandardCharsets.UTF_8)));
            channel.force(false);
            return new WorkDirLock(channel, lock);
        } catch (IOException ex) {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot lock " + file, ex);
        }
    }

    /** The lock, or null when another process (or another simulator in this JVM) holds it. */
    private static @Nullable FileLock tryLock(FileChannel channel) throws IOException {
        try {
            return channel.tryLock();
        } catch (OverlappingFileLockException ex) {
            return null;
        }
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing a channel that failed: nothing left to release.
        }
    }

    /** Releases the directory (the file stays: a lock file without a lock holds nothing). */
    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // The channel's close below releases it too.
        }
        closeQuietly(channel);
    }
}
