package dev.readygate.probe;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which of vLLM's extra endpoints the engine has. OpenAI-compatible servers without {@code /tokenize},
 * {@code /version} or {@code /metrics} are served in a degraded mode, shown in {@code /status}. Learned from
 * {@code NOT_SUPPORTED} answers; reset when the engine restarts (it may be another server now).
 */
public final class EngineCapabilities {

    private final AtomicBoolean tokenize = new AtomicBoolean(true);
    private final AtomicBoolean version = new AtomicBoolean(true);
    private final AtomicBoolean metrics = new AtomicBoolean(true);

    public boolean tokenize() {
        return tokenize.get();
    }

    public boolean version() {
        return version.get();
    }

    public boolean metrics() {
        return metrics.get();
    }

    void lackTokenize() {
        tokenize.set(false);
    }

    void lackVersion() {
        version.set(false);
    }

    void lackMetrics() {
        metrics.set(false);
    }

    void reset() {
        tokenize.set(true);
        version.set(true);
        metrics.set(true);
    }

    /** What {@code /status} shows: each endpoint, and what readygate does without it. */
    public Map<String, String> describe() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("tokenize", tokenize() ? "available" : "missing: prompts calibrated from usage, not varied");
        out.put("version", version() ? "available" : "missing: vLLM version unknown");
        out.put(
                "metrics",
                metrics()
                        ? "available"
                        : "missing: no restart detection by process start time, no busy detection, heavy probes not "
                                + "deferred to idle times");
        return out;
    }
}
