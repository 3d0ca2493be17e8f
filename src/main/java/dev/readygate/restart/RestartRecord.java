package dev.readygate.restart;

import dev.readygate.readiness.StartSource;
import dev.readygate.secret.SecretRedaction;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Everything known about one engine start, kept in the restart history (one JSON line per start) so cold, cached and
 * snapshot starts can be compared across releases and configurations.
 *
 * @param id a unique id of this start (stable across readygate restarts)
 * @param engineStart when the engine process started
 * @param engineStartSource where {@code engineStart} came from: the process start time, the log, when readygate saw
 *     the old engine go away, or when it first saw this one
 * @param firstSeen whether this is the first start readygate saw (readygate started while the engine ran or loaded)
 * @param path the restart path
 * @param evidence what the path was concluded from, one short line each
 * @param fallbackReason the reason from vLLM's fallback warning, for {@code preload_fallback}
 * @param wrongWeightsFromCache a preload hit whose canary mismatched: the cache served another checkpoint's weights
 * @param phases when each phase was reached
 * @param loggedDurations durations the engine logged, in seconds: {@code weights_loading}, {@code model_loading},
 *     {@code engine_init}; and the memory it logged, in GiB: {@code model_loading_gib}, {@code available_kv_cache_gib},
 *     {@code weights_held_outside_gib}
 * @param outcome ready, never ready (see {@code notReadyReason}), or failed: died before serving
 * @param notReadyReason the last not-ready reason, when the start never became ready ({@code start_failed} when vLLM
 *     said the start failed)
 * @param startFailure vLLM's reason for a failed start, the root exception of its traceback (e.g. {@code
 *     torch.OutOfMemoryError: CUDA out of memory. ...}), when the log gave one
 * @param readinessLatency from engine start to verified ready, when it became ready
 * @param vllmVersion the engine's version
 * @param engineArgs the engine's {@code non-default args} log line, secrets redacted
 * @param model the served model
 * @param modelRoot the model path or hub id
 * @param revision the model revision (from the engine arguments), when known
 * @param maxModelLen the engine's {@code max_model_len}
 * @param kvCacheSizeTokens {@code kv_cache_size_tokens} from {@code vllm:cache_config_info}
 * @param probeConfigHash a hash of readygate's probe configuration (a changed probe is not a changed engine)
 * @param readygateVersion readygate's version
 * @param node facts about the node: {@code node_name}, {@code gpu_uuid}, {@code driver_version} when known
 * @param memory GPU memory before the start, at readiness and after the stop
 */
public record RestartRecord(
        String id,
        Instant engineStart,
        StartSource engineStartSource,
        boolean firstSeen,
        RestartPath path,
        List<String> evidence,
        @Nullable String fallbackReason,
        boolean wrongWeightsFromCache,
        Map<Phase, Instant> phases,
        Map<String, Double> loggedDurations,
        Outcome outcome,
        @Nullable String notReadyReason,
        @Nullable String startFailure,
        @Nullable Duration readinessLatency,
        @Nullable String vllmVersion,
        @Nullable String engineArgs,
        @Nullable String model,
        @Nullable String modelRoot,
        @Nullable String revision,
        @Nullable Integer maxModelLen,
        @Nullable Long kvCacheSizeTokens,
        String probeConfigHash,
        String readygateVersion,
        Map<String, String> node,
        CycleMemory memory) {

    public RestartRecord {
        // Text from the engine's log: no record, kept or shown, ever holds a secret (SecretRedaction).
        evidence = evidence.stream().map(SecretRedaction::redact).toList();
        fallbackReason = SecretRedaction.redactNullable(fallbackReason);
        startFailure = SecretRedaction.redactNullable(startFailure);
        engineArgs = SecretRedaction.redactNullable(engineArgs);
        phases = Map.copyOf(phases);
        loggedDurations = Map.copyOf(loggedDurations);
        node = Map.copyOf(node);
    }

    /** This record with other memory moments. */
    public RestartRecord withMemory(CycleMemory memory) {
        return new RestartRecord(
                id,
                engineStart,
                engineStartSource,
                firstSeen,
                path,
                evidence,
                fallbackReason,
                wrongWeightsFromCache,
                phases,
                loggedDurations,
                outcome,
                notReadyReason,
                startFailure,
                readinessLatency,
                vllmVersion,
                engineArgs,
                model,
                modelRoot,
                revision,
                maxModelLen,
                kvCacheSizeTokens,
                probeConfigHash,
                readygateVersion,
                node,
                memory);
    }

    /** The checkpoint this start served: model, root and revision (a change of any is a checkpoint switch). */
    public String checkpoint() {
        return model + " " + modelRoot + "@" + (revision == null ? "" : revision);
    }
}
