package dev.readygate.gateway;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What the recorded starts say of the start in progress, for the admission of a request the engine cannot take now:
 * the path it is expected to take and how long it is expected to run still ({@link RetryAfter}). The recorded starts
 * are read at most once each {@link #HISTORY_KEPT}: a flood of refused requests reads them once.
 */
final class StartExpectations {

    /** How long the recorded starts are reused before they are read again. */
    static final Duration HISTORY_KEPT = Duration.ofSeconds(1);

    private final Supplier<List<RestartRecord>> history;
    private final AtomicReference<Recorded> recorded = new AtomicReference<>();

    /** @param history the recorded starts, oldest first */
    StartExpectations(Supplier<List<RestartRecord>> history) {
        this.history = history;
    }

    /** When a client refused during the start on {@code path} should come back. */
    RetryAfter retryAfter(RestartPath path, @Nullable EngineStart start, Instant now) {
        return RetryAfter.of(latencies(recorded(now), path), spent(start, now));
    }

    /**
     * The path the current start is expected to take: its provisional path once known; while the engine is down
     * between starts (a crash, a stop) and nothing of the next start is known, the path the latest recorded start took
     * (an engine restarts the way it last started: a preload daemon that served the last start holds the weights
     * still; a wake is not a way a process starts). A request held on that expectation is decided again once the new
     * start's path is known.
     */
    RestartPath path(EngineState state, RestartPath provisional, Instant now) {
        if (provisional != RestartPath.UNKNOWN || !(state instanceof EngineState.Down)) {
            return provisional;
        }
        // A wake is no way a new process starts: the latest start of a process says how the next one will.
        return recorded(now).reversed().stream()
                .map(record -> record.pathEvidence().path())
                .filter(path -> path != RestartPath.WAKE)
                .findFirst()
                .orElse(provisional);
    }

    /** The recorded starts, as read at {@code readAt}. */
    private record Recorded(Instant readAt, List<RestartRecord> history) {}

    /** The recorded starts, read again at most once each {@link #HISTORY_KEPT} (a flood of refusals reads it once). */
    private List<RestartRecord> recorded(Instant now) {
        Recorded kept = recorded.get();
        if (kept != null
                && !now.isBefore(kept.readAt())
                && now.isBefore(kept.readAt().plus(HISTORY_KEPT))) {
            return kept.history();
        }
        List<RestartRecord> read = history.get();
        recorded.set(new Recorded(now, read));
        return read;
    }

    /** The measured readiness latencies of the path's latest {@value RetryAfter#RECENT_STARTS} recorded starts. */
    static List<Duration> latencies(List<RestartRecord> history, RestartPath path) {
        List<Duration> measured = history.stream()
                .filter(record -> record.pathEvidence().path() == path)
                .filter(record -> record.verdict().readinessLatency() != null
                        && !record.verdict().readinessLatencyBound())
                .map(record -> record.verdict().readinessLatency())
                .toList();
        return measured.subList(Math.max(0, measured.size() - RetryAfter.RECENT_STARTS), measured.size());
    }

    private static Duration spent(@Nullable EngineStart start, Instant now) {
        if (start == null || now.isBefore(start.since())) {
            return Duration.ZERO;
        }
        return Duration.between(start.since(), now);
    }
}
