package dev.readygate.memory;

import java.util.Locale;

/** What readygate watches GPU memory across restart cycles for. */
public enum MemorySignal {
    /** Memory at readiness grows from cycle to cycle with the same configuration and path. */
    LEAK_ACROSS_RESTARTS,
    /** After the engine stopped, memory stayed held by a process that should have let it go. */
    HELD_AFTER_STOP,
    /** After a checkpoint switch, the preload daemon still holds the old checkpoint's weights. */
    STALE_CACHE,
    /** {@code kv_cache_size_tokens} dropped from one cycle to a later one with the same configuration. */
    KV_CACHE_SHRINKING;

    /** The snake_case name used in {@code /status}, logs and metrics. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
