package dev.readygate.readiness;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Published after the engine state changed kind or reason, or the engine start changed (not on every observation).
 *
 * @param previous the state before
 * @param current the state now
 * @param cause the observation that caused the change
 * @param previousStart the engine start before, or null
 * @param start the engine start now, or null while there is none (nothing answers, or readygate stops)
 */
public record EngineStateChanged(
        EngineState previous,
        EngineState current,
        Observation cause,
        @Nullable EngineStart previousStart,
        @Nullable EngineStart start) {

    /** A change outside any engine start. */
    public EngineStateChanged(EngineState previous, EngineState current, Observation cause) {
        this(previous, current, cause, null, null);
    }

    /** Whether a start began with this change ({@link #start()}). */
    public boolean startBegan() {
        return start != null && !Objects.equals(start, previousStart);
    }

    /** The start this change ended, or null. */
    public @Nullable EngineStart ended() {
        return previousStart != null && !Objects.equals(previousStart, start) ? previousStart : null;
    }
}
