/**
 * Engine restarts: each engine start's timeline (its phases until verified readiness, and its outcome, a pure fold),
 * its restart path (cold, preload hit, preload fallback, snapshot restore) attributed from the evidence it left, and
 * a record of every start, kept in a history file and rendered as JSON, CSV and {@code /status}.
 */
@NullMarked
package dev.readygate.restart;

import org.jspecify.annotations.NullMarked;
