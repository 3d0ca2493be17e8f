package dev.readygate.simulator;

import java.util.Arrays;
import java.util.Locale;

/** How a simulated engine start loads its weights: the four restart paths of vLLM 0.31. */
public enum StartupPath {
    /** Weights loaded from disk, full engine initialization. */
    COLD,
    /** Weights mapped from the {@code vllm preload} daemon ({@code --load-format ipc_cache}). */
    PRELOAD_HIT,
    /** The engine asked for the weight cache, could not use it, and loaded from disk. */
    PRELOAD_FALLBACK,
    /** A CRIU initialized-engine snapshot restored ({@code vllm snapshot restore}). */
    SNAPSHOT_RESTORE;

    /** The kebab-case name used on the admin API, in scenarios and in configuration. */
    public String value() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static StartupPath fromValue(String value) {
        String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        return Arrays.stream(values())
                .filter(path -> path.name().equals(normalized))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown startup path '" + value + "' (expected one of "
                        + Arrays.stream(values()).map(StartupPath::value).toList() + ")"));
    }
}
