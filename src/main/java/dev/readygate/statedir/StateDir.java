package dev.readygate.statedir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * readygate's state directory: the one place that knows whether this readygate may write there and whether its
 * writes work.
 *
 * <p><b>One writer.</b> At start it takes an exclusive lock on {@value #LOCK_FILE} ({@link FileChannel#tryLock()}, an
 * OS lock: it dies with the process, so a readygate killed with {@code kill -9} leaves no stale lock behind, only the
 * file). When another readygate holds it, this one <em>runs read-only</em>: it gates readiness as usual, keeps what it
 * would write in memory, and says so once in the log and in {@code /status} ({@link StateDirProblem#LOCKED}); it
 * tries the lock again before each write, and becomes the writer once the other has exited.
 *
 * <p><b>Writes never block readiness.</b> Every write to the directory goes through {@link #write}: a failure (a
 * read-only, full or vanished directory) is never thrown to the caller, but kept per {@link Store} as a named
 * {@link StateDirProblem} with its detail, counted, and logged once per change (a failure, a different failure, a
 * recovery).
 *
 * <p>Thread-safe. {@link #write} blocks (file I/O): callers run it off event loops.
 */
public final class StateDir implements AutoCloseable {

    /** The lock file's name in the state directory. */
    public static final String LOCK_FILE = "readygate.lock";

    private static final Logger logger = LoggerFactory.getLogger(StateDir.class);

    private final Path directory;
    private final Clock clock;
    // Written under this object's monitor; read without it (/status and the metrics read them on event loops, and a
    // write may hold the monitor through file I/O).
    private final Map<Store, StoreStatus> stores = new ConcurrentHashMap<>();
    private final Map<Store, Map<StateDirProblem, AtomicLong>> failures = new EnumMap<>(Store.class);
    private @Nullable FileChannel lockChannel;
    private volatile @Nullable FileLock lock;
    private volatile @Nullable String holder;
    private volatile boolean lockedByOther;
    private final boolean readsOnly;

    /** A write to the state directory, which may fail with an I/O error. */
    @FunctionalInterface
    public interface Write {
        void run() throws IOException;
    }

    /**
     * How one store's writes stand.
     *
     * @param problem why the last write failed; null when it succeeded (or none was tried)
     * @param since when the current problem began, or when writes last began to work
     * @param detail the file system's message for the last failure; empty when none
     * @param lastWrite when the last write succeeded; null when none did
     */
    public record StoreStatus(
            @Nullable StateDirProblem problem,
            Instant since,
            String detail,
            @Nullable Instant lastWrite) {}

    /** Opens the state directory (creating it when needed) and tries to become its writer. Never throws. */
    public StateDir(Path directory, Clock clock) {
        this(directory, clock, false);
    }

    /**
     * The state directory for reading alone ({@code readygate check}): it creates nothing (no directory, no lock
     * file), takes no lock and refuses every write.
     */
    public static StateDir readingOnly(Path directory, Clock clock) {
        return new StateDir(directory, clock, true);
    }

    private StateDir(Path directory, Clock clock, boolean readsOnly) {
        this.directory = directory.toAbsolutePath();
        this.clock = clock;
        this.readsOnly = readsOnly;
        Instant now = clock.instant();
        for (Store store : Store.values()) {
            stores.put(store, new StoreStatus(null, now, "", null));
            Map<StateDirProblem, AtomicLong> counts = new EnumMap<>(StateDirProblem.class);
            for (StateDirProblem problem : StateDirProblem.values()) {
                counts.put(problem, new AtomicLong());
            }
            failures.put(store, counts);
        }
        if (!readsOnly) {
            synchronized (this) {
                tryLock(true);
            }
        }
    }

    /** The directory. */
    public Path directory() {
        return directory;
    }

    /** Whether this readygate holds the lock (may write), rather than running read-only. */
    public boolean writer() {
        return lock != null;
    }

    /** Who holds the lock when this readygate does not: what the holder wrote in the lock file, or null. */
    public @Nullable String holder() {
        return lockedByOther ? holder : null;
    }

    /** Whether another readygate holds the lock, so that this one runs read-only. */
    public boolean readOnly() {
        return lockedByOther;
    }

    /** How each store's writes stand. */
    public Map<Store, StoreStatus> status() {
        return Map.copyOf(stores);
    }

    /** How many writes to {@code store} failed with {@code problem}. */
    public long failures(Store store, StateDirProblem problem) {
        return failures.get(store).get(problem).get();
    }

    /** Whether {@code store}'s writes are failing with {@code problem} now (1) or not (0). */
    public boolean failing(Store store, StateDirProblem problem) {
        return stores.get(store).problem() == problem;
    }

    /**
     * Runs {@code write} when this readygate is the directory's writer, and records how it went. Blocking.
     *
     * @return whether it was written
     */
    public boolean write(Store store, Write write) {
        if (readsOnly) {
            return false;
        }
        synchronized (this) {
            // Without the lock file (a read-only or full directory) the write is tried anyway: it fails and says why.
            if (lock == null && tryLock(false) == Lock.OTHER_HOLDS) {
                failed(store, StateDirProblem.LOCKED, lockedDetail());
                return false;
            }
        }
        try {
            write.run();
        } catch (IOException | UncheckedIOException ex) {
            failed(store, StateDirProblem.of(ex), String.valueOf(ex.getMessage()));
            return false;
        }
        succeeded(store);
        return true;
    }

    private String lockedDetail() {
        return "another readygate holds " + directory.resolve(LOCK_FILE) + (holder == null ? "" : " (" + holder + ")");
    }

    private synchronized void succeeded(Store store) {
        StoreStatus before = stores.get(store);
        Instant now = clock.instant();
        if (before.problem() != null) {
            logger.info(
                    "Writing {} in the state directory {} works again ({} until {})",
                    store.file(),
                    directory,
                    before.problem().value(),
                    now);
            stores.put(store, new StoreStatus(null, now, "", now));
        } else {
            stores.put(store, new StoreStatus(null, before.since(), "", now));
        }
    }

    private synchronized void failed(Store store, StateDirProblem problem, String detail) {
        failures.get(store).get(problem).incrementAndGet();
        degraded(store, problem, detail);
    }

    /** Records that writes to {@code store} fail (or would: found at start) with {@code problem}. */
    private synchronized void degraded(Store store, StateDirProblem problem, String detail) {
        StoreStatus before = stores.get(store);
        if (before.problem() == problem) {
            stores.put(store, new StoreStatus(problem, before.since(), detail, before.lastWrite()));
            return;
        }
        stores.put(store, new StoreStatus(problem, clock.instant(), detail, before.lastWrite()));
        if (problem == StateDirProblem.LOCKED) {
            // Said once at start, for every store.
            return;
        }
        logger.warn(
                "Cannot write {} in the state directory {}: {} ({}); readygate goes on gating readiness, but {}",
                store.file(),
                directory,
                problem.value(),
                detail,
                store.consequence());
    }

    /** What trying the lock found. */
    private enum Lock {
        HELD,
        OTHER_HOLDS,
        NO_LOCK_FILE
    }

    /** Tries to take the lock. Caller holds this object's monitor. */
    private Lock tryLock(boolean atStart) {
        try {
            Files.createDirectories(directory);
            FileChannel channel = lockChannel;
            if (channel == null || !channel.isOpen()) {
                channel = FileChannel.open(
                        directory.resolve(LOCK_FILE),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
                lockChannel = channel;
            }
            FileLock acquired;
            try {
                acquired = channel.tryLock();
            } catch (OverlappingFileLockException ex) {
                // Another readygate in this JVM (tests) holds it.
                acquired = null;
            }
            if (acquired == null) {
                holder = readHolder(channel);
                if (!lockedByOther) {
                    logger.warn(
                            "Another readygate holds the state directory {} ({}): this one runs read-only. It gates"
                                    + " readiness as usual, but writes neither the restart history nor canary"
                                    + " baselines (it keeps them in memory) until the other exits; it then takes"
                                    + " over.",
                            directory,
                            holder == null ? "lock file " + directory.resolve(LOCK_FILE) : holder);
                    for (Store store : Store.values()) {
                        degraded(store, StateDirProblem.LOCKED, lockedDetail());
                    }
                }
                lockedByOther = true;
                return Lock.OTHER_HOLDS;
            }
            lock = acquired;
            writeHolder(channel);
            if (lockedByOther) {
                logger.info(
                        "Took over the state directory {}: the readygate that held it ({}) is gone", directory, holder);
                // Every store may be written now, not only the one whose write took over.
                Instant now = clock.instant();
                stores.replaceAll((store, status) -> status.problem() == StateDirProblem.LOCKED
                        ? new StoreStatus(null, now, "", status.lastWrite())
                        : status);
            }
            lockedByOther = false;
            return Lock.HELD;
        } catch (IOException | UncheckedIOException ex) {
            // Not writable at all: every write will fail and say why; there is no other writer to keep out.
            closeChannel();
            StateDirProblem problem = StateDirProblem.of(ex);
            if (atStart) {
                for (Store store : Store.values()) {
                    degraded(store, problem, String.valueOf(ex.getMessage()));
                }
            }
            return Lock.NO_LOCK_FILE;
        }
    }

    /**
     * Replaces {@code file} with {@code bytes} so that a reader, or the next readygate after a crash, sees the old
     * content or the new, never part of either: written to {@code <file>.tmp}, forced to the disk, then renamed over
     * it. Blocking; the temporary file is removed when the write fails.
     */
    public static void replaceAtomically(Path file, byte[] bytes) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            try (FileChannel channel = FileChannel.open(
                    temporary,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                channel.force(true);
            }
            try {
                Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException ex) {
                Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException ex) {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException suppressed) {
                ex.addSuppressed(suppressed);
            }
            throw ex;
        }
    }

    private static @Nullable String readHolder(FileChannel channel) {
        try {
            ByteBuffer buffer = ByteBuffer.allocate(512);
            int read = channel.read(buffer, 0);
            String text = read <= 0 ? "" : new String(buffer.array(), 0, read, StandardCharsets.UTF_8).strip();
            return text.isEmpty() ? null : text;
        } catch (IOException ex) {
            return null;
        }
    }

    private void writeHolder(FileChannel channel) {
        String who = "pid " + ProcessHandle.current().pid() + " on " + hostName() + ", since " + clock.instant() + " ("
                + ManagementFactory.getRuntimeMXBean().getName() + ")";
        try {
            channel.truncate(0);
            ByteBuffer buffer = ByteBuffer.wrap((who + "\n").getBytes(StandardCharsets.UTF_8));
            long position = 0;
            while (buffer.hasRemaining()) {
                position += channel.write(buffer, position);
            }
        } catch (IOException ex) {
            // Only the message a second instance shows suffers.
            logger.debug("Cannot write the holder into {}: {}", directory.resolve(LOCK_FILE), ex.toString());
        }
    }

    private static String hostName() {
        String host = System.getenv("HOSTNAME");
        if (host != null && !host.isBlank()) {
            return host;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException ex) {
            return "unknown host";
        }
    }

    private void closeChannel() {
        FileChannel channel = lockChannel;
        lockChannel = null;
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ex) {
                logger.debug("Cannot close {}: {}", directory.resolve(LOCK_FILE), ex.toString());
            }
        }
    }

    /** Releases the lock (the file stays: removing it could let two readygates lock two different files). */
    @Override
    public synchronized void close() {
        FileLock held = lock;
        lock = null;
        if (held != null) {
            try {
                held.release();
            } catch (IOException ex) {
                logger.debug("Cannot release {}: {}", directory.resolve(LOCK_FILE), ex.toString());
            }
        }
        closeChannel();
    }
}
