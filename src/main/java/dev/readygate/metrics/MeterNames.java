package dev.readygate.metrics;

import dev.readygate.memory.MemorySignal;
import dev.readygate.probe.MetricsEvidence;
import dev.readygate.restart.EnginePhase;
import dev.readygate.restart.FallbackReason;
import dev.readygate.restart.RecoveryKind;
import dev.readygate.restart.RestartRecord;

/**
 * Every readygate meter's name, in one place (Resilience4j's {@code *MetricNames}): the binders of each domain register
 * under these names and nowhere else. Names are dotted ({@code readygate.engine.ready}); Prometheus shows them as
 * {@code readygate_engine_ready}. Tags are closed sets, never URLs, models or messages (the engine info's version and
 * model labels are the one exception, on a value of 1).
 */
public final class MeterNames {

    private MeterNames() {}

    /** 1 while the engine is verified ready (the kubelet sends traffic), else 0. */
    public static final String ENGINE_READY = "readygate.engine.ready";

    /** 1 for the current state, 0 for the others, tag {@code state}. */
    public static final String ENGINE_STATE = "readygate.engine.state";

    /** Engine state changes, tags {@code from} and {@code to}. */
    public static final String ENGINE_TRANSITIONS = "readygate.engine.transitions";

    /**
     * Observations the readiness rules could not use, tags {@code observation} ({@code verified}, ...) and {@code why}
     * ({@code stale}, {@code latched}, {@code shut_down}).
     */
    public static final String OBSERVATIONS_IGNORED = "readygate.readiness.observations.ignored";

    /** Heavy probe durations, tags {@code kind} and {@code outcome}. */
    public static final String PROBE_DURATION = "readygate.probe.duration";

    /** Heavy probe failures, tags {@code kind} and {@code reason}. */
    public static final String PROBE_FAILURES = "readygate.probe.failures";

    /** Heavy probes' time to first token, tag {@code kind}. */
    public static final String PROBE_TTFT = "readygate.probe.ttft";

    /** Heavy probes' largest gap between two tokens, tag {@code kind}. */
    public static final String PROBE_ITL = "readygate.probe.inter.token.latency";

    /** Tokens the heavy probes made the engine process (prompt plus output), tag {@code kind}. */
    public static final String PROBE_TOKENS = "readygate.probe.tokens";

    /** Engine starts by restart path, tag {@code path}; a start readygate did not see begin is not counted. */
    public static final String ENGINE_STARTS = "readygate.engine.starts";

    /** Engine starts that died before serving ({@code outcome} {@code failed}), tag {@code path}; also in the starts. */
    public static final String ENGINE_START_FAILURES = "readygate.engine.start.failures";

    /**
     * From engine start to verified ready, tag {@code path}; histogram buckets from 1 s to 1 h. Only starts readygate saw
     * begin ({@link RestartRecord#comparable()}).
     */
    public static final String READINESS_LATENCY = "readygate.readiness.latency";

    /** Time from one phase of a start to the next, tags {@code phase} (the phase reached) and {@code path}. */
    public static final String PHASE_DURATION = "readygate.phase.duration";

    /**
     * How long each phase of the engine's own start-up took as its log said, tags {@code phase} ({@link EnginePhase}:
     * {@code download}, {@code compile_cache_load}, {@code graph_capture}, ...) and {@code path}.
     */
    public static final String ENGINE_PHASE_DURATION = "readygate.engine.phase.duration";

    /**
     * Engine starts by whether torch.compile's cache served them, tag {@code result} ({@code hit}: graphs loaded from
     * it, none compiled; {@code miss}: a graph compiled); a start that logged neither is not counted.
     */
    public static final String COMPILE_CACHE = "readygate.compile.cache";

    /** Preload fallbacks to disk, tag {@code reason} ({@link FallbackReason}). */
    public static final String PRELOAD_FALLBACKS = "readygate.preload.fallbacks";

    /** Canary mismatches, tag {@code path}: on {@code preload_hit}, the cache served the wrong weights. */
    public static final String CANARY_MISMATCHES = "readygate.canary.mismatches";

    /** 1 while the engine is in a restart loop (too many starts within the loop window). */
    public static final String RESTART_LOOP = "readygate.restart.loop";

    /** How soon a start should be verified ready, tag {@code path}: {@code readygate.restart.readiness-objectives}. */
    public static final String READINESS_OBJECTIVE = "readygate.readiness.objective";

    /** The engine's KV cache size in tokens ({@code kv_cache_size_tokens} of {@code vllm:cache_config_info}). */
    public static final String KV_CACHE_SIZE = "readygate.kv.cache.size.tokens";

    /**
     * 1 while evidence restart or busy detection needs is lost from the engine's {@code /metrics}, tag {@code evidence}
     * ({@link MetricsEvidence.Part#value()}: {@code metrics}, {@code process_start_time}, ...).
     */
    public static final String EVIDENCE_LOST = "readygate.engine.evidence.lost";

    /** 1, with the engine's vLLM version and model and readygate's version as tags. */
    public static final String ENGINE_INFO = "readygate.engine.info";

    /**
     * 1, with the release of the engine's latest recorded start as tags: {@code vllm_version}, {@code revision} and
     * {@code config} (the configuration hash of {@code /status}'s comparison). One series per pod: joined on the pod
     * with the readiness latency histogram, it compares restart paths across a fleet by release.
     */
    public static final String ENGINE_RELEASE_INFO = "readygate.engine.release.info";

    /** Engine starts by recovery kind and restart path, tags {@code recovery} ({@link RecoveryKind}) and {@code path}. */
    public static final String ENGINE_RECOVERIES = "readygate.engine.recoveries";

    /**
     * Snapshot restores whose manifest was taken on another GPU, driver or vLLM version than the engine's, tag
     * {@code field} ({@code gpu_uuid}, {@code driver_version}, {@code vllm_version}); such a manifest does not vouch.
     */
    public static final String SNAPSHOT_MANIFEST_MISMATCHES = "readygate.snapshot.manifest.mismatches";

    /** GPU memory held, tags {@code gpu} (UUID) and {@code owner} ({@code engine}, {@code preload_daemon},
     * {@code other}, {@code total}). */
    public static final String GPU_MEMORY_USED = "readygate.gpu.memory.used";

    /** GPU memory readings that failed, tag {@code reason}. */
    public static final String GPU_READING_FAILURES = "readygate.gpu.reading.failures";

    /** 1 while a memory signal fires, tag {@code signal} ({@link MemorySignal#value()}). */
    public static final String MEMORY_SIGNAL = "readygate.memory.signal";

    /** Times each memory signal was raised, tag {@code signal}. */
    public static final String MEMORY_SIGNALS = "readygate.memory.signals";

    /** Growth per cycle of memory at readiness, latest cycles with the same configuration and path (bytes). */
    public static final String MEMORY_DRIFT = "readygate.memory.drift.bytes.per.cycle";

    /** The preload daemon's memory beyond the current checkpoint's weights after a checkpoint switch (bytes). */
    public static final String STALE_CACHE = "readygate.stale.cache";

    /** Memory held after the latest stop by processes that should have let it go (bytes). */
    public static final String HELD_AFTER_STOP = "readygate.memory.held.after.stop";

    /** GPU memory used at the moments of the last cycle, tag {@code moment}: {@code before_start}, {@code at_ready},
     * {@code after_stop} (bytes). */
    public static final String CYCLE_MEMORY = "readygate.cycle.memory";

    // readygate's own health, apart from the engine's: its state directory and its server's connections.

    /** 1 while writes to a store fail with a reason, tags {@code store} and {@code reason}; 0 otherwise. */
    public static final String STATE_DIR_DEGRADED = "readygate.state.dir.degraded";

    /** Writes to the state directory that failed, tags {@code store} and {@code reason}. */
    public static final String STATE_DIR_WRITE_FAILURES = "readygate.state.dir.write.failures";

    /** Connections readygate's own server holds open. */
    public static final String SERVER_CONNECTIONS = "readygate.server.connections";

    /** Connections closed to make room for a new one at the cap ({@code readygate.server.max-connections}). */
    public static final String SERVER_EVICTIONS = "readygate.server.connections.evicted";

    /**
     * Requests to a heavy endpoint answered 503 for being beyond its budget ({@code readygate.server.max-heavy-requests}),
     * tag {@code endpoint} ({@code status}, {@code metrics}).
     */
    public static final String SERVER_REJECTED = "readygate.server.requests.rejected";

    // Gateway mode's count of the work engine stops lost (issue 27, item 5).

    /**
     * Requests in flight through the gateway that engine stops cut: those the engine cut as it went away, and those still
     * in flight at a drain's deadline.
     */
    public static final String GATEWAY_STOP_CUT_REQUESTS = "readygate.gateway.stop.cut.requests";

    /** The token-carrying events the requests cut by stops had passed to their clients. */
    public static final String GATEWAY_STOP_CUT_TOKENS = "readygate.gateway.stop.cut.tokens";

    // The traffic path (gateway mode, issue 27 item 6); registered only while readygate.gateway.enabled.

    /**
     * Client requests on the traffic port by how they ended, tag {@code outcome}: a forwarded one's ending
     * ({@code completed}, {@code client_cancelled}, {@code engine_closed}, ...), a refused one's answer
     * ({@code not_ready}, {@code draining}, {@code saturated}, {@code too_large}, {@code route_not_proxied}, ...).
     */
    public static final String GATEWAY_REQUESTS = "readygate.gateway.requests";

    /** Time requests were held through a short start, tag {@code result} ({@code forwarded}, {@code refused}). */
    public static final String GATEWAY_HELD = "readygate.gateway.held";

    /**
     * The client's time to first token: from a request's arrival to the first byte of its 2xx event stream passed to
     * the client; histogram buckets from 10 ms to 60 s.
     */
    public static final String GATEWAY_TTFT = "readygate.gateway.ttft";

    /** Requests forwarded to the engine whose answer has not ended yet (streams in flight). */
    public static final String GATEWAY_IN_FLIGHT = "readygate.gateway.in.flight";

    /** Client connections the traffic port holds open. */
    public static final String GATEWAY_CONNECTIONS = "readygate.gateway.connections";

    /** Client connections closed at once because the traffic port held {@code readygate.gateway.max-connections}. */
    public static final String GATEWAY_CONNECTIONS_REFUSED = "readygate.gateway.connections.refused";
}
