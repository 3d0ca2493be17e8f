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
    /** No evidence either way. */
    UNKNOWN;

    /** The label value in metrics, records and {@code /status}: {@code preload_hit}, ... */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
