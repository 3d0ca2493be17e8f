package dev.readygate.readiness;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One engine start, as the readiness domain stamps it: from its process's header in the engine log, or without one
 * the first state in which the engine answers, until it goes away, restarts or readygate stops ({@link StartRules}). Everything learned about the engine is kept per start id.
 *
 * @param id unique across readygate's restarts (a random UUID)
 * @param since when the start began, as far as readiness knows: when the old engine was seen going away, the process
 *     start time a restart carried, or when this start was first seen
 * @param source where {@code since} came from
 * @param firstSeen whether this is the first start readygate saw (it started while the engine ran or loaded)
 * @param slept for a wake (the engine woke from vLLM's sleep mode: the same process serving again), the sleep it
 *     woke from; null for a start of an engine process
 */
public record EngineStart(
        String id,
        Instant since,
        StartSource source,
        boolean firstSeen,
        @Nullable Slept slept) {

    public EngineStart {
        if (id.isBlank()) {
            throw new IllegalArgumentException("a start needs an id");
        }
    }

    /** A start of an engine process. */
    public EngineStart(String id, Instant since, StartSource source, boolean firstSeen) {
        this(id, since, source, firstSeen, null);
    }

    /** Whether this start is a wake from sleep, not a new engine process. */
    public boolean wake() {
        return slept != null;
    }

    /**
     * The sleep a wake woke from.
     *
     * @param level vLLM's sleep level (1: weights offloaded to CPU memory, 2: discarded), 0 when not told
     * @param fellAsleep when readygate first saw the engine asleep ({@code vllm:engine_sleep_state})
     * @param wokeAt when readygate first saw it awake again
     */
    public record Slept(int level, Instant fellAsleep, Instant wokeAt) {

        /** How long the engine slept, as readygate saw it. */
        public Duration asleep() {
            return wokeAt.isBefore(fellAsleep) ? Duration.ZERO : Duration.between(fellAsleep, wokeAt);
        }
    }
}
