package dev.readygate.engine;

import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The few series of the engine's {@code /metrics} readygate uses, summed over label sets (engine cores included: a
 * data-parallel engine's requests and tokens are those of all its cores); null where the engine does not export the
 * series. Each is vLLM's series or the same series under another engine's name (docs/engines.md).
 *
 * @param processStartTimeSeconds {@code process_start_time_seconds}: changes on every engine (re)start; absent when
 *     vLLM serves {@code /metrics} in Prometheus multiprocess mode (more than one API server)
 * @param requestsRunning {@code vllm:num_requests_running} (llama.cpp: {@code llamacpp:requests_processing})
 * @param requestsWaiting {@code vllm:num_requests_waiting} (llama.cpp: {@code llamacpp:requests_deferred})
 * @param generationTokens {@code vllm:generation_tokens_total}: rises while the engine makes progress (llama.cpp:
 *     {@code llamacpp:tokens_predicted_total})
 * @param promptTokens {@code vllm:prompt_tokens_total} (llama.cpp: {@code llamacpp:prompt_tokens_total})
 * @param requestSuccess {@code vllm:request_success_total} summed over {@code finished_reason} (vLLM only)
 * @param cacheConfig the labels of {@code vllm:cache_config_info} (e.g. {@code kv_cache_size_tokens}), empty if absent;
 *     with several engine cores, those of the one with the smallest KV cache
 * @param families the metric name prefixes seen ({@code vllm:}, {@code llamacpp:}, {@code sglang:}, {@code tgi_},
 *     {@code process_})
 * @param decodeSteps llama.cpp's {@code llamacpp:n_decode_total}: its decode steps, which rise all along a request
 *     (llama-server adds to its token counters only when a request ends); null for other engines
 * @param preemptions {@code vllm:num_preemptions_total}: requests vLLM took out of its batch to free KV cache (they
 *     wait and start again); null for other engines
 * @param sleepLevel vLLM's sleep mode, from {@code vllm:engine_sleep_state}: the {@code sleep_state} label whose
 *     value is 1 ({@code awake} 0, {@code weights_offloaded} 1, {@code discard_all} 2), the deepest over engine cores
 *     (one asleep is enough to serve nothing); null when the series is absent
 */
public record EngineMetricsSample(
        @Nullable Double processStartTimeSeconds,
        @Nullable Double requestsRunning,
        @Nullable Double requestsWaiting,
        @Nullable Double generationTokens,
        @Nullable Double promptTokens,
        @Nullable Double requestSuccess,
        Map<String, String> cacheConfig,
        Set<String> families,
        @Nullable Double decodeSteps,
        @Nullable Double preemptions,
        @Nullable Integer sleepLevel) {

    public EngineMetricsSample {
        cacheConfig = Map.copyOf(cacheConfig);
        families = Set.copyOf(families);
    }

    /** A sample without vLLM's sleep state. */
    public EngineMetricsSample(
            @Nullable Double processStartTimeSeconds,
            @Nullable Double requestsRunning,
            @Nullable Double requestsWaiting,
            @Nullable Double generationTokens,
            @Nullable Double promptTokens,
            @Nullable Double requestSuccess,
            Map<String, String> cacheConfig,
            Set<String> families,
            @Nullable Double decodeSteps,
            @Nullable Double preemptions) {
        this(
                processStartTimeSeconds,
                requestsRunning,
                requestsWaiting,
                generationTokens,
                promptTokens,
                requestSuccess,
                cacheConfig,
                families,
                decodeSteps,
                preemptions,
                null);
    }

    /** {@link #processStartTimeSeconds} as an instant (to the millisecond); null when absent. */
    public @Nullable Instant processStart() {
        return processStartTimeSeconds == null
                ? null
                : Instant.ofEpochMilli(Math.round(processStartTimeSeconds * 1000));
    }

    /** A sample of vLLM's series (the families follow from whether the process start time is there). */
    public EngineMetricsSample(
            @Nullable Double processStartTimeSeconds,
            @Nullable Double requestsRunning,
            @Nullable Double requestsWaiting,
            @Nullable Double generationTokens,
            @Nullable Double promptTokens,
            @Nullable Double requestSuccess,
            Map<String, String> cacheConfig) {
        this(
                processStartTimeSeconds,
                requestsRunning,
                requestsWaiting,
                generationTokens,
                promptTokens,
                requestSuccess,
                cacheConfig,
                processStartTimeSeconds == null ? Set.of("vllm:") : Set.of("vllm:", "process_"),
                null,
                null);
    }

    /**
     * The KV cache size in tokens from {@code vllm:cache_config_info}, or null: its {@code kv_cache_size_tokens} label
     * (vLLM 0.29 on), else {@code num_gpu_blocks} × {@code block_size} (every vLLM: the CacheConfig fields it has always
     * exported, {@code "None"} before profiling).
     */
    public @Nullable Long kvCacheSizeTokens() {
        return kvCacheSizeTokens(cacheConfig);
    }

    /** {@link #kvCacheSizeTokens()} of one {@code vllm:cache_config_info} label set. */
    static @Nullable Long kvCacheSizeTokens(Map<String, String> labels) {
        Long tokens = number(labels.get("kv_cache_size_tokens"));
        if (tokens != null) {
            return tokens;
        }
        Long blocks = number(labels.get("num_gpu_blocks"));
        Long blockSize = number(labels.get("block_size"));
        return blocks == null || blockSize == null ? null : blocks * blockSize;
    }

    private static @Nullable Long number(@Nullable String value) {
        if (value == null) {
            return null;
        }
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException ex) {
            return null;
        }
    }
}
