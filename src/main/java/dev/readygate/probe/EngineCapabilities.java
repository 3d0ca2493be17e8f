package dev.readygate.probe;

import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * What the current engine start offers: its {@link EngineSurface} (found out once per start by asking it), and what
 * the probes learned since ({@code NOT_SUPPORTED} answers, how prompt token counts are proven). OpenAI-compatible
 * servers without {@code /tokenize}, {@code /version} or {@code /metrics} are served in a degraded mode, shown in
 * {@code /status}. Reset when the engine restarts (it may be another server now).
 */
public final class EngineCapabilities {

    private final AtomicReference<@Nullable EngineSurface> surface = new AtomicReference<>();
    private final AtomicBoolean tokenize = new AtomicBoolean(true);
    private final AtomicBoolean version = new AtomicBoolean(true);
    private final AtomicBoolean metrics = new AtomicBoolean(true);
    private final AtomicReference<@Nullable String> promptTokens = new AtomicReference<>();

    /** Capabilities of an engine whose surface is already known (as {@code readygate check} finds it). */
    public static EngineCapabilities of(EngineSurface surface) {
        EngineCapabilities capabilities = new EngineCapabilities();
        capabilities.discovered(surface);
        return capabilities;
    }

    /** What this start offers, once found out; null before. */
    public @Nullable EngineSurface surface() {
        return surface.get();
    }

    /** The dialect of this start ({@link EngineDialect#OPENAI} until found out). */
    public EngineDialect dialect() {
        EngineSurface known = surface.get();
        return known == null ? EngineDialect.OPENAI : known.dialect();
    }

    public boolean tokenize() {
        return tokenize.get();
    }

    public boolean version() {
        return version.get();
    }

    public boolean metrics() {
        return metrics.get();
    }

    /** How the representative probe's prompt token counts are proven, once a probe has run; null before. */
    public @Nullable String promptTokens() {
        return promptTokens.get();
    }

    void discovered(EngineSurface found) {
        surface.set(found);
        if (!found.tokenizeUsable()) {
            lackTokenize();
        }
        if (!found.versionEndpointUsable()) {
            lackVersion();
        }
        if (found.endpoint(EngineSurface.Endpoint.METRICS).availability() == EngineSurface.Availability.MISSING) {
            lackMetrics();
        }
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

    void promptTokens(String how) {
        promptTokens.set(how);
    }

    void reset() {
        surface.set(null);
        tokenize.set(true);
        version.set(true);
        metrics.set(true);
        promptTokens.set(null);
    }

    /** What {@code /status} shows: each endpoint with what it answered, and what readygate does without it. */
    public Map<String, String> describe() {
        EngineSurface known = surface.get();
        Map<String, String> out = new LinkedHashMap<>();
        if (known != null) {
            out.putAll(known.describeEndpoints());
        } else {
            out.put("tokenize", tokenize() ? "not asked yet" : "missing: prompts calibrated from usage, not varied");
            out.put("version", version() ? "not asked yet" : "missing: engine version unknown");
            out.put(
                    "metrics",
                    metrics()
                            ? "not asked yet"
                            : "missing: no restart detection by process start time, no busy detection, heavy probes"
                                    + " not deferred to idle times");
        }
        // What probes learned later wins over what discovery saw.
        if (!tokenize() && known != null && known.tokenizeUsable()) {
            out.put("tokenize", "missing: a later /tokenize gave no usable ids; prompts calibrated from usage");
        }
        if (!metrics() && known != null && known.metricsUsable()) {
            out.put("metrics", "missing: a later scrape answered that this server does not offer it");
        }
        return out;
    }

    /** What readygate can and cannot see, with the observations that show it (empty before discovery). */
    public Map<String, String> capabilities(@Nullable EngineMetricsSample latest) {
        EngineSurface known = surface.get();
        Map<String, String> out = new LinkedHashMap<>();
        String prompt = promptTokens();
        out.put(
                "promptTokens",
                prompt != null
                        ? prompt
                        : known == null
                                ? "not probed yet"
                                : known.tokenizeUsable()
                                        ? "exact: prompts are the engine's own token ids from /tokenize"
                                        : "to be proven by calibration: no usable /tokenize");
        if (known != null) {
            out.putAll(known.capabilities(metrics() ? latest : null));
        }
        return out;
    }
}
