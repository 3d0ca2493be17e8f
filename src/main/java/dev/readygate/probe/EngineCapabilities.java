package dev.readygate.probe;

import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the engine of one start offers: its {@link EngineSurface} (found out once per start by asking it: dialect,
 * endpoints, context length), and what the probes learned since ({@code NOT_SUPPORTED} answers, how the prompt token
 * counts are proven). OpenAI-compatible servers without a usable {@code /tokenize}, {@code /version} or
 * {@code /metrics} are served in a degraded mode, shown in {@code /status}. A new start begins with all of them (it may
 * be another server now).
 *
 * @param tokenize whether prompts can be built from the engine's own token ids ({@code /tokenize})
 * @param version whether {@code /version} answers
 * @param metrics whether {@code /metrics} answers
 * @param surface what discovery found, once it ran; null before
 * @param promptTokens how the representative prompt's token count was proven, once a probe ran; null before
 * @param generation the endpoint the probes generate through ({@code /v1/completions} until the engine says it has
 *     none)
 * @param generationEvidence what the engine answered that decided {@code generation}; null while nothing did
 */
public record EngineCapabilities(
        boolean tokenize,
        boolean version,
        boolean metrics,
        @Nullable EngineSurface surface,
        @Nullable String promptTokens,
        Generation generation,
        @Nullable String generationEvidence) {

    /** What a start is assumed to have until it answers otherwise. */
    public static final EngineCapabilities ALL =
            new EngineCapabilities(true, true, true, null, null, Generation.COMPLETIONS, null);

    /** The endpoint readygate's probes generate through. */
    public enum Generation {
        /** {@code POST /v1/completions}: the prompt as text or as the engine's own token ids. */
        COMPLETIONS,
        /**
         * {@code POST /v1/chat/completions}, on a server without plain completions: the prompt text as one user
         * message (the chat template adds its own tokens, so prompt counts are proven by calibration).
         */
        CHAT,
        /** Neither: the server answered that it offers none of them, and nothing can be verified. */
        NONE
    }

    /** The capabilities of an engine whose surface is known already (as {@code readygate check} finds it). */
    public static EngineCapabilities of(EngineSurface surface) {
        return ALL.withSurface(surface);
    }

    /** The dialect of this start ({@link EngineDialect#OPENAI} until discovery ran). */
    public EngineDialect dialect() {
        return surface == null ? EngineDialect.OPENAI : surface.dialect();
    }

    EngineCapabilities withoutTokenize() {
        return new EngineCapabilities(false, version, metrics, surface, promptTokens, generation, generationEvidence);
    }

    EngineCapabilities withoutVersion() {
        return new EngineCapabilities(tokenize, false, metrics, surface, promptTokens, generation, generationEvidence);
    }

    EngineCapabilities withoutMetrics() {
        return new EngineCapabilities(tokenize, version, false, surface, promptTokens, generation, generationEvidence);
    }

    /** The probes generate through {@code value} from now on, as {@code evidence} showed. */
    EngineCapabilities withGeneration(Generation value, String evidence) {
        return new EngineCapabilities(tokenize, version, metrics, surface, promptTokens, value, evidence);
    }

    /** What discovery found; an endpoint it found missing or unusable is not used. */
    EngineCapabilities withSurface(EngineSurface found) {
        boolean metricsMissing =
                found.endpoint(EngineSurface.Endpoint.METRICS).availability() == EngineSurface.Availability.MISSING;
        return new EngineCapabilities(
                tokenize && found.tokenizeUsable(),
                version && found.versionEndpointUsable(),
                metrics && !metricsMissing,
                found,
                promptTokens,
                generation,
                generationEvidence);
    }

    EngineCapabilities withPromptTokens(String how) {
        return new EngineCapabilities(tokenize, version, metrics, surface, how, generation, generationEvidence);
    }

    /** What {@code /status} shows: each endpoint with what it answered, and what readygate does without it. */
    public Map<String, String> describe() {
        Map<String, String> out = new LinkedHashMap<>();
        if (surface != null) {
            out.putAll(surface.describeEndpoints());
        } else {
            out.put("tokenize", tokenize ? "not asked yet" : "missing: prompt token counts proven by calibration");
            out.put("version", version ? "not asked yet" : "missing: engine version unknown");
            out.put(
                    "metrics",
                    metrics
                            ? "not asked yet"
                            : "missing: no restart detection by process start time, no busy detection, heavy probes"
                                    + " not deferred to idle times");
        }
        // What the probes learned later wins over what discovery saw.
        if (!tokenize && surface != null && surface.tokenizeUsable()) {
            out.put(
                    "tokenize",
                    "missing: a later /tokenize gave no usable ids; prompt token counts proven by" + " calibration");
        }
        if (!metrics && surface != null && surface.metricsUsable()) {
            out.put("metrics", "missing: a later scrape answered that this server does not offer it");
        }
        if (generationEvidence != null) {
            out.put(
                    "completions",
                    switch (generation) {
                        case COMPLETIONS -> "usable: " + generationEvidence;
                        case CHAT ->
                            "missing: " + generationEvidence + "; the probes go through POST /v1/chat/completions (the"
                                    + " prompt as one user message, its token count proven by calibration)";
                        case NONE -> "missing: " + generationEvidence;
                    });
        }
        return out;
    }

    /** What readygate can and cannot see, with the observations that show it ({@code latest}: the last scrape). */
    public Map<String, String> capabilities(@Nullable EngineMetricsSample latest) {
        Map<String, String> out = new LinkedHashMap<>();
        out.put(
                "promptTokens",
                promptTokens != null
                        ? promptTokens
                        : surface == null
                                ? "not probed yet"
                                : tokenize
                                        ? "exact: prompts are the engine's own token ids from /tokenize"
                                        : "to be proven by calibration: no usable /tokenize");
        if (surface != null) {
            out.putAll(surface.capabilities(metrics ? latest : null));
        }
        return out;
    }
}
