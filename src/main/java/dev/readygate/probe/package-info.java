/**
 * Verifying the engine: the representative and canary probes, where the canary's expected answer comes from, the
 * probe schedule that turns engine calls into readiness observations, and what is known of each engine start.
 */
@NullMarked
package dev.readygate.probe;

import org.jspecify.annotations.NullMarked;
