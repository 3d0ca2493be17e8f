package dev.readygate.readiness;

import java.time.Instant;

/**
 * One engine start, as the readiness domain stamps it: from its process's header in the engine log, or without one
 * the first state in which the engine answers, until it goes away, restarts or readygate stops ({@link StartRules}). Everything learned about the engine is kept per start id.
 *
 * @param id unique across readygate's restarts (a random UUID)
 * @param since when the start began, as far as readiness knows: when the old engine was seen going away, the process
 *     start time a restart carried, or when this start was first seen
 * @param source where {@code since} came from
 * @param firstSeen whether this is the first start readygate saw (it started while the engine ran or loaded)
 */
public record EngineStart(String id, Instant since, StartSource source, boolean firstSeen) {

    public EngineStart {
        if (id.isBlank()) {
            throw new IllegalArgumentException("a start needs an id");
        }
    }
}
