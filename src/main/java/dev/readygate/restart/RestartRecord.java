package dev.readygate.restart;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import dev.readygate.secret.SecretRedaction;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Everything known about one engine start, kept in the restart history (one JSON line per start, {@link RecordJson})
 * so cold, cached and snapshot starts can be compared across releases and configurations. Its parts are nested
 * records, in the order of the line's fields: when the start began, its path and the evidence for it, the verdict,
 * the engine, readygate's own stamp, the node, the memory, the recovery, the stop and the snapshot mismatches.
 *
 * @param id a unique id of this start (stable across readygate restarts)
 * @param when when the engine process started, and whether readygate saw it begin
 * @param pathEvidence the restart path and what it was concluded from
 * @param verdict the phases reached, what the engine logged of them, how the start ended and its readiness latency
 * @param engine the engine's version, arguments and model
 * @param probeConfigHash a hash of readygate's probe configuration (a changed probe is not a changed engine)
 * @param readygateVersion readygate's version
 * @param node where the start ran ({@link NodeFacts}): {@code node_name}, {@code pod_uid}, {@code boot_id},
 *     {@code engine_container}, {@code gpu_uuid}, {@code gpu_name}, {@code driver_version}, {@code cuda_version}, each
 *     when known
 * @param memory GPU memory before the start, at readiness and after the stop
 * @param recovery what the start recovered from, compared with the start before it
 * @param stop how the start ended and the requests in flight it lost, once it ended
 * @param snapshotMismatches for a snapshot restore, the manifest's identity fields that differ from this engine and node
 */
public record RestartRecord(
        String id,
        When when,
        PathEvidence pathEvidence,
        Verdict verdict,
        Engine engine,
        String probeConfigHash,
        String readygateVersion,
        Map<String, String> node,
        CycleMemory memory,
        Recovery recovery,
        @Nullable Stop stop,
        List<SnapshotMismatch> snapshotMismatches) {

    public RestartRecord {
        node = Map.copyOf(node);
        snapshotMismatches = List.copyOf(snapshotMismatches);
    }

    /**
     * When the start began.
     *
     * @param engineStart when the engine process started
     * @param engineStartSource where {@code engineStart} came from: the process start time, the log, when readygate
     *     saw the old engine go away, or when it first saw this one
     * @param firstSeen whether readygate did not see this start begin (it started while the engine already answered):
     *     not an engine restart; its path is {@code unknown} unless its own evidence says otherwise, it has no
     *     readiness latency and it is not {@link #comparable()}
     * @param slept for a wake ({@link RestartPath#WAKE}: the same process serving again after vLLM's sleep mode), the
     *     sleep it woke from: its level and when the engine fell asleep ({@code engineStart} is when it woke); null
     *     for a start of an engine process
     */
    public record When(
            Instant engineStart, StartSource engineStartSource, boolean firstSeen, EngineStart.@Nullable Slept slept) {

        /** When a start of an engine process began. */
        public When(Instant engineStart, StartSource engineStartSource, boolean firstSeen) {
            this(engineStart, engineStartSource, firstSeen, null);
        }

        /**
         * Whether this start may be compared with others (readiness latency, phase durations, per-path figures): only
         * a start readygate saw begin. A first-seen start's "latency" would be the engine's uptime when readygate
         * started.
         */
        public boolean comparable() {
            return !firstSeen;
        }
    }

    /**
     * The restart path and what it was concluded from.
     *
     * @param path the restart path
     * @param evidence what the path was concluded from, one short line each
     * @param fallbackReason the reason from vLLM's fallback warning, for {@code preload_fallback}
     * @param wrongWeightsFromCache a preload hit whose canary mismatched: the cache served another checkpoint's weights
     */
    public record PathEvidence(
            RestartPath path,
            List<String> evidence,
            @Nullable String fallbackReason,
            boolean wrongWeightsFromCache) {

        public PathEvidence {
            // Text from the engine's log: no record, kept or shown, ever holds a secret (SecretRedaction).
            evidence = evidence.stream().map(SecretRedaction::redact).toList();
            fallbackReason = SecretRedaction.redactNullable(fallbackReason);
        }
    }

    /**
     * How the start went: the phases it reached, what the engine logged of them, how it ended and how long it took.
     *
     * @param phases when each phase was reached
     * @param loggedDurations durations the engine logged, in seconds: {@code weights_loading}, {@code model_loading}
     *     (without the download), {@code engine_init}, and the {@link EnginePhase}s a cached restart saves beyond the
     *     weights ({@code download}, {@code compilation}, {@code compile_cache_load}, {@code compile}, {@code
     *     graph_capture}), and a wake's {@code wake_up} (vLLM's {@code It took X seconds to wake up}); and the memory it
     *     logged, in GiB: {@code model_loading_gib}, {@code available_kv_cache_gib},
     *     {@code weights_held_outside_gib}, {@code graph_capture_gib}
     * @param outcome ready, never ready (see {@code notReadyReason}), failed: died before serving, or unknown:
     *     readygate was killed during it and the engine the next readygate found was another process
     * @param notReadyReason the last not-ready reason, when the start never became ready ({@code start_failed} when
     *     vLLM said the start failed)
     * @param startFailure vLLM's reason for a failed start, the root exception of its traceback (e.g. {@code
     *     torch.OutOfMemoryError: CUDA out of memory. ...}), when the log gave one
     * @param readinessLatency from engine start to verified ready, when it became ready (never for a first-seen start)
     * @param readinessLatencyBound whether {@code readinessLatency} is only a bound, not a measurement: the engine gave
     *     no start time of its own ({@code engineStartSource} {@code observed_down}: at most; {@code first_observed}:
     *     at least), or it was verified ready only when a restarted readygate looked again. A bound is kept out of the
     *     readiness-latency and phase meters and the comparison of starts, as a first-seen start is
     */
    public record Verdict(
            Map<Phase, Instant> phases,
            Map<String, Double> loggedDurations,
            Outcome outcome,
            @Nullable String notReadyReason,
            @Nullable String startFailure,
            @Nullable Duration readinessLatency,
            boolean readinessLatencyBound) {

        public Verdict {
            phases = Map.copyOf(phases);
            loggedDurations = Map.copyOf(loggedDurations);
            startFailure = SecretRedaction.redactNullable(startFailure);
        }

        /**
         * Whether a readiness latency is a bound as records were before readygate said so: exactly when its engine
         * start is not the engine's own ({@link StartSource#fromEngine()}).
         */
        public static boolean impliedBound(@Nullable Duration readinessLatency, StartSource engineStartSource) {
            return readinessLatency != null && !engineStartSource.fromEngine();
        }

        /**
         * How long each phase reached took from the phase reached before it, in the order of the phases (a phase
         * dated before its predecessor, as clocks may have it, is left out).
         */
        public Map<Phase, Duration> phaseDurations() {
            Map<Phase, Duration> durations = new EnumMap<>(Phase.class);
            Instant previous = null;
            for (Phase phase : Phase.values()) {
                Instant at = phases.get(phase);
                if (at == null) {
                    continue;
                }
                if (previous != null && !at.isBefore(previous)) {
                    durations.put(phase, Duration.between(previous, at));
                }
                previous = at;
            }
            return durations;
        }

        /**
         * The phase durations that are measurements: none of a start whose readiness latency is a bound (its first
         * phase is timed from a bound; a start verified only when a restarted readygate looked again has all its
         * phases late).
         */
        public Map<Phase, Duration> measuredPhaseDurations() {
            return readinessLatencyBound ? Map.of() : phaseDurations();
        }

        /** The readiness latency when it is a measurement, not a bound; else null. */
        public @Nullable Duration measuredReadinessLatency() {
            return readinessLatencyBound ? null : readinessLatency;
        }
    }

    /**
     * The engine that started.
     *
     * @param vllmVersion the engine's version
     * @param engineArgs the engine's {@code non-default args} log line, secrets redacted
     * @param model the served model
     * @param modelRoot the model path or hub id
     * @param revision the model revision (from the engine arguments), when known
     * @param maxModelLen the engine's {@code max_model_len}
     * @param kvCacheSizeTokens {@code kv_cache_size_tokens} from {@code vllm:cache_config_info}
     */
    public record Engine(
            @Nullable String vllmVersion,
            @Nullable String engineArgs,
            @Nullable String model,
            @Nullable String modelRoot,
            @Nullable String revision,
            @Nullable Integer maxModelLen,
            @Nullable Long kvCacheSizeTokens) {

        /** Nothing known of the engine. */
        public static final Engine UNKNOWN = new Engine(null, null, null, null, null, null, null);

        public Engine {
            engineArgs = SecretRedaction.redactNullable(engineArgs);
        }

        /** The engine's arguments by name: its {@code non-default args} line. */
        public EngineArguments arguments() {
            return EngineArguments.parse(engineArgs);
        }

        /** The checkpoint this start served: model, root and revision (a change of any is a checkpoint switch). */
        public String checkpoint() {
            return model + " " + modelRoot + "@" + (revision == null ? "" : revision);
        }
    }

    /** This record with other memory moments. */
    public RestartRecord withMemory(CycleMemory memory) {
        return with(memory, stop);
    }

    /** This record with how it ended. */
    public RestartRecord withStop(@Nullable Stop stop) {
        return with(memory, stop);
    }

    private RestartRecord with(CycleMemory memory, @Nullable Stop stop) {
        return new RestartRecord(
                id,
                when,
                pathEvidence,
                verdict,
                engine,
                probeConfigHash,
                readygateVersion,
                node,
                memory,
                recovery,
                stop,
                snapshotMismatches);
    }
}
