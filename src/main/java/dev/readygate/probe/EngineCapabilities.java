package dev.readygate.probe;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which of vLLM's extra endpoints the engine of one start has. OpenAI-compatible servers without {@code /tokenize},
 * {@code /version} or {@code /metrics} are served in a degraded mode, shown in {@code /status}. Learned from
 * {@code NOT_SUPPORTED} answers; a new start begins with all of them (it may be another server now).
 *
 * @param tokenize whether {@code /tokenize} answers
 * @param version whether {@code /version} answers
 * @param metrics whether {@code /metrics} answers
 */
public record EngineCapabilities(boolean tokenize, boolean version, boolean metrics) {

    /** What a start is assumed to have until it answers otherwise. */
    public static final EngineCapabilities ALL = new EngineCapabilities(true, true, true);

    EngineCapabilities withoutTokenize() {
        return new EngineCapabilities(false, version, metrics);
    }

    EngineCapabilities withoutVersion() {
        return new EngineCapabilities(tokenize, false, metrics);
    }

    EngineCapabilities withoutMetrics() {
        return new EngineCapabilities(tokenize, version, false);
    }

    /** What {@code /status} shows: each endpoint, and what readygate does without it. */
    public Map<String, String> describe() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("tokenize", tokenize ? "available" : "missing: prompts calibrated from usage, not varied");
        out.put("version", version ? "available" : "missing: vLLM version unknown");
        out.put(
                "metrics",
                metrics
                        ? "available"
                        : "missing: no restart detection by process start time, no busy detection, heavy probes not "
                                + "deferred to idle times");
        return out;
    }
}
