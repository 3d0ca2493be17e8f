package dev.readygate.evidence;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What the engine's log said about the current start, accumulated line by line since the start began.
 *
 * @param configured whether an engine log is read at all
 * @param firstLineAt the timestamp of the first line of this start
 * @param header whether vLLM's start-up header (version, non-default args) appeared
 * @param vllmVersion the version the log printed
 * @param engineArgs the {@code non-default args} line (API key redacted)
 * @param loadingWeightsSeconds {@code Loading weights took X seconds}
 * @param modelLoadingGib {@code Model loading took X GiB memory ...}
 * @param modelLoadingSeconds {@code Model loading took ... and Y seconds}
 * @param mappedTensors {@code Mapped N tensors from the weight cache daemon}
 * @param mappedMode the mapping mode
 * @param cacheFallbackReason the fallback warning's reason
 * @param engineInitSeconds {@code init engine (profile, create kv cache, warmup model) took X seconds}
 * @param availableKvCacheGib {@code Available KV cache memory: X GiB}
 * @param kvCacheSizeTokens {@code GPU KV cache size: N tokens}
 * @param weightsHeldOutsideGib the size in {@code Weights are held outside this process: X GiB ...} (the preload
 *     daemon's memory the engine maps), when the line gives one
 * @param fatal the last fatal error line, if the engine died
 */
public record LogFindings(
        boolean configured,
        @Nullable Instant firstLineAt,
        boolean header,
        @Nullable String vllmVersion,
        @Nullable String engineArgs,
        @Nullable Double loadingWeightsSeconds,
        @Nullable Double modelLoadingGib,
        @Nullable Double modelLoadingSeconds,
        @Nullable Integer mappedTensors,
        @Nullable String mappedMode,
        @Nullable String cacheFallbackReason,
        @Nullable Double engineInitSeconds,
        @Nullable Double availableKvCacheGib,
        @Nullable Long kvCacheSizeTokens,
        @Nullable Double weightsHeldOutsideGib,
        @Nullable String fatal) {

    /** Nothing read (no log configured). */
    public static LogFindings none() {
        return new LogFindings(
                false, null, false, null, null, null, null, null, null, null, null, null, null, null, null, null);
    }
}
