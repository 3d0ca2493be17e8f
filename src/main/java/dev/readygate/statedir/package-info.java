/**
 * The state directory: one writer per directory (a lock file), and the health of what readygate writes there (the
 * restart history, learned canary baselines). Nothing here decides readiness: a state directory that cannot be
 * written is a degraded reason in {@code /status}, a metric and a log line, never a reason to stop gating.
 */
@NullMarked
package dev.readygate.statedir;

import org.jspecify.annotations.NullMarked;
