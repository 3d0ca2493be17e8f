/**
 * GPU memory across restart cycles: the moments of each engine start (before it, at readiness, after the stop) joined
 * to its record by start id, and the signals read from them (leaks across restarts, memory held after a stop, stale
 * caches, KV cache shrink).
 */
@NullMarked
package dev.readygate.memory;

import org.jspecify.annotations.NullMarked;
