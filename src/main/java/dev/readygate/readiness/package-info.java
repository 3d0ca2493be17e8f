/**
 * The readiness state machine: one pure transition function ({@link dev.readygate.readiness.ReadinessRules}) over
 * {@link dev.readygate.readiness.EngineState}s and {@link dev.readygate.readiness.Observation}s, and a small holder
 * that publishes changes. No I/O, no Spring in the domain types.
 */
@NullMarked
package dev.readygate.readiness;

import org.jspecify.annotations.NullMarked;
