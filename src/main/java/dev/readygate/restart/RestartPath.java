package dev.readygate.restart;

import java.util.Locale;

/** How an engine start got its weights: the restart paths of vLLM 0.31, or unknown. */
public enum RestartPath {
    /** Weights loaded from disk, full engine initialization. */
    COLD,
    /** Weights mapped from the {@code vllm preload} daemon. */
    PRELOAD_HIT,
    /** The weight cache was asked for and not used: weights loaded from disk. */
    PRELOAD_FALLBACK,
    /** A CRIU initialized-engine snapshot was restored. */
    SNAPSHOT_RESTORE,
    /**
     * The engine woke from vLLM's sleep mode: the same process, its weights back from CPU memory (sleep level 1) or
     * reloaded (level 2); not an engine restart, and no weights from disk.
     */
    WAKE,
    /** No evidence either way. */
    UNKNOWN;

    /** The label value in metrics, records and {@code /status}: {@code preload_hit}, ... */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
