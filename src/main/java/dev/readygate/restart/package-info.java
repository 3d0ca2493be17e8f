/**
 * Engine restarts: noticing every engine start, attributing its restart path (cold, preload hit, preload fallback,
 * snapshot restore) from the evidence the engine leaves (log lines, the preload daemon, snapshot artifacts, metrics),
 * timing its phases until verified readiness, and keeping a record of every start.
 */
@NullMarked
package dev.readygate.restart;

import org.jspecify.annotations.NullMarked;
