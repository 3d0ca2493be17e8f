package dev.readygate.restart;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The phases of an engine's own start-up that its log times, each a key of the record's {@code loggedDurations}
 * (seconds, as {@code LogFindings.loggedDurations()} names them): where a start's time went inside the engine, beside
 * the {@link Phase}s readygate observes from outside.
 * Download, compilation and CUDA graph capture are what a cached restart saves beyond the weights, so each is a phase
 * of its own; docs/metrics.md ("Phases") names the vLLM line each comes from.
 */
public enum EnginePhase {
    /** {@code Time spent downloading weights for MODEL: X seconds}: fetching the weights from the hub. */
    DOWNLOAD,
    /** {@code Loading weights took X seconds}: reading the weights. */
    WEIGHTS_LOADING,
    /** {@code Model loading took ... and Y seconds}, less the download vLLM counts inside it. */
    MODEL_LOADING,
    /** {@code Directly load the compiled graph(s) for ... from the cache, took X s}: compiled graphs from the cache. */
    COMPILE_CACHE_LOAD,
    /** {@code Compiling a graph for ... takes X s}: graphs compiled (nothing cached for them). */
    COMPILE,
    /** {@code init engine ... (compilation: X s)}, else {@code torch.compile takes X s in total}: all of torch.compile. */
    COMPILATION,
    /** {@code Graph capturing finished in X secs}: CUDA graph capture. */
    GRAPH_CAPTURE,
    /** {@code init engine (profile, create kv cache, warmup model) took X s}: the engine's initialization. */
    ENGINE_INIT;

    /**
     * The phases a cached restart saves beyond the weights (issue 28), in the order of their columns: the history's
     * CSV and the comparison append them after the columns they had before.
     */
    public static final List<EnginePhase> BEYOND_WEIGHTS =
            List.of(DOWNLOAD, COMPILE_CACHE_LOAD, COMPILE, COMPILATION, GRAPH_CAPTURE);

    /** The key in {@code loggedDurations} and the meters' {@code phase} tag: {@code graph_capture}, ... */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The phases {@code logged} (a record's {@code loggedDurations}) holds a finite, non-negative duration of. */
    public static Map<EnginePhase, Duration> of(Map<String, Double> logged) {
        Map<EnginePhase, Duration> durations = new EnumMap<>(EnginePhase.class);
        for (EnginePhase phase : values()) {
            Double seconds = logged.get(phase.value());
            if (seconds != null && Double.isFinite(seconds) && seconds >= 0) {
                durations.put(phase, Duration.ofNanos(Math.round(seconds * 1e9)));
            }
        }
        return durations;
    }

    /**
     * Whether torch.compile's cache served the start {@code logged} is of: true when graphs were loaded from it and
     * none compiled, false when any was compiled, null when neither was logged.
     */
    public static @Nullable Boolean compileCacheHit(Map<String, Double> logged) {
        if (logged.containsKey(COMPILE.value())) {
            return false;
        }
        return logged.containsKey(COMPILE_CACHE_LOAD.value()) ? Boolean.TRUE : null;
    }
}
