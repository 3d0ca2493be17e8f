package dev.readygate.evidence;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Follows a log file on a shared volume as {@code tail -F} does, by polling (file-system events do not cross shared
 * volumes): waits for the file to appear, reads the lines appended to it, and follows it through rotation (renamed
 * and replaced: the old file is read to its end through the open channel, then the new one from its start) and
 * truncation in place ({@code copytruncate}: read again from the start).
 *
 * <p>Lines are decoded as UTF-8, invalid bytes replaced; {@code \n} and {@code \r\n} end them; an unfinished last
 * line waits for its end. A line longer than {@code maxLineLength} bytes is cut: its first {@code maxLineLength}
 * bytes are kept (without a split character) and the rest is dropped up to its end. Reading follows demand, so memory
 * stays bounded by one read buffer and one line whatever the file's size or the subscriber's speed.
 *
 * <p>Every file operation runs on one worker of the given scheduler, which must allow blocking (e.g.
 * {@code Schedulers.boundedElastic()}; on a non-blocking one such as {@code Schedulers.parallel()} the lines fail with
 * an {@link IllegalStateException} before any file is touched); lines are emitted from it. Cancelling closes the
 * file.
 *
 * <p>Like {@code tail -F}, it cannot tell a truncation that the writer refilled beyond the read offset within one
 * poll interval from growth, and lines written to a rotated file after the switch to the new file are not read.
 */
final class LogTail {

    private static final Logger logger = LoggerFactory.getLogger(LogTail.class);

    private static final int READ_BUFFER_BYTES = 64 * 1024;

    private static final int INITIAL_LINE_BYTES = 256;

    private final Path file;
    private final Duration pollInterval;
    private final int maxLineLength;
    private final Scheduler scheduler;
    private final Set<Follower> followers = ConcurrentHashMap.newKeySet();
    private volatile @Nullable Instant modifiedAt;

    /**
     * @param file the log file; it need not exist yet
     * @param pollInterval how often the file is checked for new lines, rotation and truncation
     * @param maxLineLength lines longer than this are cut to it
     * @param scheduler where the file is read: must allow blocking
     */
    public LogTail(Path file, Duration pollInterval, DataSize maxLineLength, Scheduler scheduler) {
        if (pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException("pollInterval must be positive, was " + pollInterval);
        }
        if (maxLineLength.toBytes() < 1 || maxLineLength.toBytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(
                    "maxLineLength must be between 1B and " + (Integer.MAX_VALUE - 8) + "B, was " + maxLineLength);
        }
        this.file = file;
        this.pollInterval = pollInterval;
        this.maxLineLength = (int) maxLineLength.toBytes();
        this.scheduler = scheduler;
    }

    /** The lines appended after subscription (a file that appears later is read from its start). */
    public Flux<String> lines() {
        return lines(false);
    }

    /**
     * The file's lines, each subscription following the file on its own.
     *
     * @param fromStart whether to read the file from its start rather than from its end at subscription
     */
    public Flux<String> lines(boolean fromStart) {
        return Flux.create(sink -> new Follower(sink, fromStart).start(), FluxSink.OverflowStrategy.BUFFER);
    }

    /**
     * Reads, in every subscription, what the file holds now rather than at the next poll; completes once those lines
     * were emitted (as far as subscribers asked for them).
     */
    public Mono<Void> catchUp() {
        return Flux.fromIterable(List.copyOf(followers))
                .flatMap(Follower::catchUp)
                .then();
    }

    /**
     * The file's modification time when it was last opened or read to its end, or null before then: the lines read
     * were written at about that time at the latest (a parser anchors the year of vLLM's timestamps on it).
     */
    public @Nullable Instant modifiedAt() {
        return modifiedAt;
    }

    /** One subscription's reading state, touched only on its worker (except {@link #done}). */
    private final class Follower {

        private final FluxSink<String> sink;
        private final Scheduler.Worker worker;
        private final AtomicBoolean pollScheduled = new AtomicBoolean();
        private final ByteBuffer chunk = ByteBuffer.allocate(READ_BUFFER_BYTES).flip();
        private byte[] line = new byte[Math.min(INITIAL_LINE_BYTES, maxLineLength)];
        private int lineLength;
        private boolean lineCut;
        private @Nullable FileChannel channel;
        private @Nullable Object fileKey;
        /** The file offset of the next byte to read into {@link #chunk}. */
        private long position;

        private boolean firstLook = true;
        private final boolean fromStart;
        private boolean waitingLogged;
        private @Nullable String lastProblem;
        private volatile boolean done;

        Follower(FluxSink<String> sink, boolean fromStart) {
            this.sink = sink;
            this.fromStart = fromStart;
            this.worker = scheduler.createWorker();
        }

        void start() {
            sink.onDispose(this::stop);
            if (done) {
                return;
            }
            followers.add(this);
            try {
                worker.schedulePeriodically(this::poll, 0, pollInterval.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException ex) {
                if (!done) {
                    sink.error(ex);
                }
                return;
            }
            // A new request is served at once rather than at the next poll.
            sink.onRequest(requested -> requestPoll());
        }

        private void requestPoll() {
            if (done || !pollScheduled.compareAndSet(false, true)) {
                return;
            }
            try {
                worker.schedule(() -> {
                    pollScheduled.set(false);
                    poll();
                });
            } catch (RejectedExecutionException ex) {
                // The worker is gone: the subscription ended.
            }
        }

        /** A poll now, on the worker; completes after it (at once when the subscription is over). */
        Mono<Void> catchUp() {
            return Mono.create(caught -> {
                try {
                    worker.schedule(() -> {
                        poll();
                        caught.success();
                    });
                } catch (RejectedExecutionException ex) {
                    // The worker is gone: the subscription ended, there is nothing to read for it.
                    caught.success();
                }
            });
        }

        /** Cancelled (or failed): the file is closed on the worker, after a poll in progress. */
        private void stop() {
            done = true;
            followers.remove(this);
            try {
                worker.schedule(() -> {
                    close();
                    worker.dispose();
                });
            } catch (RejectedExecutionException ex) {
                // The scheduler shut down and no thread of it is left: close here rather than leak the file.
                close();
                worker.dispose();
            }
        }

        /** Synchronized because not every scheduler's worker runs its tasks one at a time. */
        private synchronized void close() {
            closeChannel();
        }

        /** Synchronized because not every scheduler's worker runs its tasks one at a time. */
        private synchronized void poll() {
            if (done) {
                return;
            }
            if (Schedulers.isInNonBlockingThread()) {
                sink.error(new IllegalStateException("LogTail reads " + file + " on "
                        + Thread.currentThread().getName()
                        + ", a thread that must not block: give it a scheduler that allows blocking, such as "
                        + "Schedulers.boundedElastic()"));
                return;
            }
            try {
                drain();
                lastProblem = null;
            } catch (IOException ex) {
                if (!done) {
                    report(ex);
                }
                // Opened again at the next poll: the same file carries on where it was, a new one from its start.
                closeChannel();
            } catch (RuntimeException ex) {
                sink.error(ex);
            }
        }

        private void drain() throws IOException {
            if (firstLook && channel == null) {
                // "From the end" means the end at subscription, whenever the first request comes.
                open();
            }
            while (!done && sink.requestedFromDownstream() > 0) {
                if (chunk.hasRemaining()) {
                    emitLines();
                    continue;
                }
                FileChannel reading = channel;
                if (reading == null) {
                    reading = open();
                    if (reading == null) {
                        return;
                    }
                }
                chunk.clear();
                int read = reading.read(chunk, position);
                chunk.flip();
                if (read > 0) {
                    position += read;
                } else if (!followChange(reading)) {
                    return;
                }
            }
        }

        /** Splits the buffered bytes into lines and emits them while there is demand. */
        private void emitLines() {
            byte[] bytes = chunk.array();
            int from = chunk.position();
            int limit = chunk.limit();
            while (from < limit) {
                int newline = indexOf(bytes, from, limit);
                int end = newline < 0 ? limit : newline;
                append(bytes, from, end - from);
                if (newline < 0) {
                    from = limit;
                    continue;
                }
                from = newline + 1;
                chunk.position(from);
                sink.next(takeLine());
                if (done || sink.requestedFromDownstream() <= 0) {
                    return;
                }
            }
            chunk.position(from);
        }

        /**
         * At the end of the open file: whether the path now names another file (rotation) or the file shrank below
         * the read offset (truncation), in which case reading goes on from the new start.
         */
        private boolean followChange(FileChannel reading) throws IOException {
            long size = reading.size();
            if (size < position) {
                logger.info(
                        "{} was truncated (size {} < offset {}): reading it again from its start",
                        file,
                        size,
                        position);
                position = 0;
                return true;
            }
            BasicFileAttributes attributes = attributes();
            if (attributes == null) {
                // Moved away and not replaced yet: the open channel still reads whatever the writer adds.
                return false;
            }
            modifiedAt = attributes.lastModifiedTime().toInstant();
            boolean replaced = fileKey != null ? !fileKey.equals(attributes.fileKey()) : attributes.size() < position;
            if (!replaced) {
                return false;
            }
            logger.info("{} was replaced (rotated): read the old file to its end at offset {}", file, position);
            switchFile();
            return true;
        }

        /** Opens the file, or returns null when it does not exist (yet). */
        private @Nullable FileChannel open() throws IOException {
            BasicFileAttributes before = attributes();
            if (before == null) {
                waiting();
                return null;
            }
            FileChannel opened;
            try {
                opened = FileChannel.open(file, StandardOpenOption.READ);
            } catch (NoSuchFileException ex) {
                waiting();
                return null;
            }
            BasicFileAttributes after = attributes();
            if (after == null || !Objects.equals(before.fileKey(), after.fileKey())) {
                // Replaced while it was being opened: which file the channel reads is unknown; try again later.
                opened.close();
                return null;
            }
            modifiedAt = after.lastModifiedTime().toInstant();
            long size = opened.size();
            boolean sameFile = fileKey != null && fileKey.equals(after.fileKey()) && size >= position;
            if (!sameFile) {
                if (fileKey != null) {
                    switchFile();
                }
                position = firstLook && !fromStart ? size : 0;
            }
            firstLook = false;
            waitingLogged = false;
            channel = opened;
            fileKey = after.fileKey();
            logger.info("Following {} from offset {}", file, position);
            return opened;
        }

        private void waiting() {
            firstLook = false;
            if (!waitingLogged) {
                waitingLogged = true;
                logger.info("Waiting for {} to appear", file);
            }
        }

        /**
         * Leaves the current file for the one now at the path: its unfinished last line will never be finished, so it
         * is a line of its own.
         */
        private void switchFile() {
            if (lineLength > 0 || lineCut) {
                sink.next(takeLine());
            }
            closeChannel();
            fileKey = null;
            position = 0;
        }

        private @Nullable BasicFileAttributes attributes() throws IOException {
            try {
                return Files.readAttributes(file, BasicFileAttributes.class);
            } catch (NoSuchFileException ex) {
                return null;
            }
        }

        private void append(byte[] bytes, int from, int length) {
            int room = maxLineLength - lineLength;
            int taken = Math.min(room, length);
            if (taken < length) {
                lineCut = true;
            }
            if (taken <= 0) {
                return;
            }
            if (lineLength + taken > line.length) {
                int capacity = (int) Math.min(maxLineLength, Math.max((long) line.length * 2, lineLength + taken));
                line = Arrays.copyOf(line, capacity);
            }
            System.arraycopy(bytes, from, line, lineLength, taken);
            lineLength += taken;
        }

        private String takeLine() {
            int length = lineLength;
            if (lineCut) {
                length = withoutSplitCharacter(line, length);
            } else if (length > 0 && line[length - 1] == '\r') {
                length--;
            }
            String text = new String(line, 0, length, StandardCharsets.UTF_8);
            lineLength = 0;
            lineCut = false;
            if (line.length > READ_BUFFER_BYTES) {
                // A long line passed: do not keep its buffer for the short ones.
                line = new byte[Math.min(INITIAL_LINE_BYTES, maxLineLength)];
            }
            return text;
        }

        private void report(IOException ex) {
            String problem = ex.toString();
            if (!problem.equals(lastProblem)) {
                lastProblem = problem;
                logger.warn("Cannot read {}: {}; trying again every {}", file, problem, pollInterval);
            }
        }

        private void closeChannel() {
            FileChannel open = channel;
            channel = null;
            if (open != null) {
                try {
                    open.close();
                } catch (IOException ex) {
                    logger.debug("Cannot close {}", file, ex);
                }
            }
        }
    }

    private static int indexOf(byte[] bytes, int from, int limit) {
        for (int i = from; i < limit; i++) {
            if (bytes[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    /** {@code length} less a UTF-8 sequence that the cut left incomplete at the end. */
    static int withoutSplitCharacter(byte[] bytes, int length) {
        int lead = length - 1;
        while (lead >= 0 && length - lead <= 3 && (bytes[lead] & 0xC0) == 0x80) {
            lead--;
        }
        if (lead < 0) {
            return length;
        }
        int first = bytes[lead] & 0xFF;
        int needed = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1;
        return length - lead < needed ? lead : length;
    }
}
