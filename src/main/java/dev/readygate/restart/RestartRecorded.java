package dev.readygate.restart;

/**
 * Published when an engine start was attributed and recorded: ready, never ready, or not ready for now (a latched
 * failure while the engine runs, recorded again when the start ends).
 *
 * @param record the record as kept
 * @param completed false for a verdict that may still change
 */
public record RestartRecorded(RestartRecord record, boolean completed) {}
