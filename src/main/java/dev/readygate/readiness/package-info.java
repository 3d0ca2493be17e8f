/**
 * The readiness state machine: one pure transition function ({@link dev.readygate.readiness.ReadinessRules}) over
 * {@link dev.readygate.readiness.EngineState}s and {@link dev.readygate.readiness.Observation}s, the engine starts
 * ({@link dev.readygate.readiness.StartRules}: where each begins and ends), and a small holder that stamps them and
 * publishes changes. No I/O, no Spring.
 */
@NullMarked
package dev.readygate.readiness;

import org.jspecify.annotations.NullMarked;
