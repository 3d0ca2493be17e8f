package dev.readygate.readiness;

/**
 * Published after the engine state changed kind or reason (not on every observation).
 *
 * @param previous the state before
 * @param current the state now
 * @param cause the observation that caused the change
 */
public record EngineStateChanged(EngineState previous, EngineState current, Observation cause) {}
