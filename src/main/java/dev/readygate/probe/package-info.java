/**
 * Verifying the engine: the representative and canary probes, where the canary's expected answer comes from, and the
 * probe schedule that turns engine calls into readiness observations.
 */
@NullMarked
package dev.readygate.probe;

import org.jspecify.annotations.NullMarked;
