/** GPU memory across restart cycles: leaks across restarts, memory held after a stop, stale caches, KV cache shrink. */
@NullMarked
package dev.readygate.memory;

import org.jspecify.annotations.NullMarked;
