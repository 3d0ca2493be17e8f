package dev.readygate.evidence;

import java.time.Clock;
import java.time.Instant;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;

/**
 * The preload daemon's log as evidence: when it last said its weights are cached and served ({@code Weight cache
 * daemon READY}).
 */
final class DaemonLog {

    private static final Logger logger = LoggerFactory.getLogger(DaemonLog.class);

    private final @Nullable LogTail tail;
    private final VllmLogParser parser;
    private final Clock clock;
    private volatile @Nullable Instant readyAt;

    /** {@code tail} null: no daemon log configured. */
    public DaemonLog(@Nullable LogTail tail, VllmLogParser parser, Clock clock) {
        this.tail = tail;
        this.parser = parser;
        this.clock = clock;
    }

    /** Reads the log, from the beginning, until disposed. */
    public Disposable follow() {
        if (tail == null) {
            return Disposables.disposed();
        }
        return tail.lines(true)
                .subscribe(this::line, error -> logger.warn("Daemon log tail stopped: {}", error.toString()));
    }

    void line(String line) {
        if (parser.parse(line) instanceof LogEvent.DaemonReady ready) {
            readyAt = ready.at() != null ? ready.at() : clock.instant();
        }
    }

    /** When the daemon last logged that every rank serves, or null. */
    public @Nullable Instant readyAt() {
        return readyAt;
    }
}
