package dev.readygate.engine;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The few series of the engine's {@code /metrics} readygate uses, summed over label sets (engine cores included: a
 * data-parallel engine's requests and tokens are those of all its cores); null where the engine does not export the
 * series.
 *
 * @param processStartTimeSeconds {@code process_start_time_seconds}: changes on every engine (re)start; absent when
 *     vLLM serves {@code /metrics} in Prometheus multiprocess mode (more than one API server)
 * @param requestsRunning {@code vllm:num_requests_running}
 * @param requestsWaiting {@code vllm:num_requests_waiting}
 * @param generationTokens {@code vllm:generation_tokens_total}: rises while the engine makes progress
 * @param promptTokens {@code vllm:prompt_tokens_total}
 * @param requestSuccess {@code vllm:request_success_total} summed over {@code finished_reason}
 * @param cacheConfig the labels of {@code vllm:cache_config_info} (e.g. {@code kv_cache_size_tokens}), empty if absent;
 *     with several engine cores, those of the one with the smallest KV cache
 */
public record EngineMetricsSample(
        @Nullable Double processStartTimeSeconds,
        @Nullable Double requestsRunning,
        @Nullable Double requestsWaiting,
        @Nullable Double generationTokens,
        @Nullable Double promptTokens,
        @Nullable Double requestSuccess,
        Map<String, String> cacheConfig) {

    /** {@code kv_cache_size_tokens} from {@code vllm:cache_config_info}, or null. */
    public @Nullable Long kvCacheSizeTokens() {
        String value = cacheConfig.get("kv_cache_size_tokens");
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
