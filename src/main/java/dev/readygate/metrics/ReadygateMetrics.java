package dev.readygate.metrics;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.gpu.GpuMemory;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.GpuReading;
import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners;
import dev.readygate.memory.MemoryAssessed;
import dev.readygate.memory.MemoryAssessment;
import dev.readygate.memory.MemorySignal;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.probe.MetricsEvidence;
import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ObservationIgnored;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import dev.readygate.restart.CanaryMismatched;
import dev.readygate.restart.CycleMemory;
import dev.readygate.restart.EngineArguments;
import dev.readygate.restart.FallbackReason;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.Phase;
import dev.readygate.restart.RecoveryKind;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartTracker;
import dev.readygate.restart.SnapshotMismatch;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedRateLimiterMetrics;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * readygate's meters, registered once, here: every series of a closed set (states, transitions, probe kinds and
 * outcomes, reasons, paths, phases, signals) exists from the start, at 0, and events only move them. Names are dotted
 * ({@code readygate.engine.ready}); Prometheus shows them as {@code readygate_engine_ready}. Tags are closed sets, never
 * URLs, models or messages (the engine info's version and model labels are the one exception, on a value of 1).
 */
@Component
class ReadygateMetrics {

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

    private static final Duration[] LATENCY_BUCKETS = java.util.stream.Stream.of(
                    1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900, 1200, 1800, 2700, 3600)
            .map(Duration::ofSeconds)
            .toArray(Duration[]::new);

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

    private final MeterRegistry registry;
    private final AtomicReference<MemoryAssessment> memory = new AtomicReference<>(MemoryAssessment.NONE);
    private final MultiGauge engineInfo;
    private final MultiGauge releaseInfo;
    private final Map<RecoveryKind, Map<RestartPath, Counter>> recoveries = new EnumMap<>(RecoveryKind.class);
    private final Map<SnapshotMismatch.Field, Counter> manifestMismatches = new EnumMap<>(SnapshotMismatch.Field.class);
    private final MultiGauge gpuMemory;
    private final String readygateVersion;
    private final Map<EngineState.Kind, Map<EngineState.Kind, Counter>> transitions =
            new EnumMap<>(EngineState.Kind.class);
    private final Map<ProbeKind, ProbeMeters> probes = new EnumMap<>(ProbeKind.class);
    private final Map<RestartPath, StartMeters> starts = new EnumMap<>(RestartPath.class);
    private final Map<FallbackReason, Counter> fallbacks = new EnumMap<>(FallbackReason.class);
    private final Map<GpuReading.Reason, Counter> gpuReadingFailures = new EnumMap<>(GpuReading.Reason.class);
    private final Map<MemorySignal, Counter> memorySignals = new EnumMap<>(MemorySignal.class);
    private final Map<String, Map<ReadinessRules.Ignored, Counter>> ignored = new java.util.HashMap<>();

    /** A heavy probe kind's meters. */
    private record ProbeMeters(
            Map<ProbeReport.Outcome, Timer> duration,
            Map<Reason, Counter> failures,
            Timer timeToFirstToken,
            Timer interTokenLatency,
            Counter tokens) {}

    /** A restart path's meters. */
    private record StartMeters(
            Counter starts,
            Counter failures,
            Timer readinessLatency,
            Map<Phase, Timer> phases,
            Counter canaryMismatches) {}

    public ReadygateMetrics(
            MeterRegistry registry,
            EngineStateMachine machine,
            EngineFactsHolder facts,
            RestartTracker tracker,
            CircuitBreakerRegistry circuitBreakers,
            RateLimiterRegistry rateLimiters,
            ObjectProvider<BuildProperties> build,
            ReadygateProperties properties) {
        this.registry = registry;
        BuildProperties buildProperties = build.getIfAvailable();
        this.readygateVersion = buildProperties == null ? "dev" : buildProperties.getVersion();
        // Every series of a closed set from the start, at 0: Prometheus's increase() cannot see a series' first value,
        // so a counter born at 1 would hide the first fallback, mismatch, failure or slow start from the alerts.
        registerEngineMeters(machine, facts);
        registerProbeMeters();
        registerRestartMeters(tracker, properties);
        registerGpuMeters();
        registerMemoryMeters();
        this.gpuMemory = MultiGauge.builder(GPU_MEMORY_USED)
                .description("GPU memory held, by GPU and owner")
                .baseUnit("bytes")
                .register(registry);
        this.engineInfo = MultiGauge.builder(ENGINE_INFO)
                .description("The engine's vLLM version and model, and readygate's version")
                .register(registry);
        engineInfo.register(List.of(MultiGauge.Row.of(
                Tags.of("vllm_version", "unknown", "model", "unknown", "readygate_version", readygateVersion), 1)));
        this.releaseInfo = MultiGauge.builder(ENGINE_RELEASE_INFO)
                .description("The release of the engine's latest recorded start: vLLM version, model revision and"
                        + " configuration hash")
                .register(registry);
        releaseInfo.register(List.of(MultiGauge.Row.of(release(null, null, EngineArguments.UNKNOWN_CONFIGURATION), 1)));
        TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(circuitBreakers).bindTo(registry);
        TaggedRateLimiterMetrics.ofRateLimiterRegistry(rateLimiters).bindTo(registry);
    }

    private void registerEngineMeters(EngineStateMachine machine, EngineFactsHolder facts) {
        Gauge.builder(ENGINE_READY, machine, m -> m.current().acceptsTraffic() ? 1 : 0)
                .description("Whether the engine is verified ready to serve (1) or not (0)")
                .register(registry);
        for (EngineState.Kind kind : EngineState.Kind.values()) {
            Gauge.builder(ENGINE_STATE, machine, m -> m.current().kind() == kind ? 1 : 0)
                    .description("The engine's readiness state: 1 for the current one")
                    .tag("state", kind.value())
                    .register(registry);
        }
        ReadinessRules.TRANSITIONS.forEach((from, kinds) -> kinds.forEach(to -> transition(from, to)));
        for (Class<?> type : Observation.class.getPermittedSubclasses()) {
            String observation = ObservationIgnored.kindOf(type.asSubclass(Observation.class));
            Map<ReadinessRules.Ignored, Counter> byWhy = new EnumMap<>(ReadinessRules.Ignored.class);
            for (ReadinessRules.Ignored why : ReadinessRules.Ignored.values()) {
                byWhy.put(
                        why,
                        Counter.builder(OBSERVATIONS_IGNORED)
                                .description("Observations the readiness rules could not use")
                                .tag("observation", observation)
                                .tag("why", why.value())
                                .register(registry));
            }
            ignored.put(observation, byWhy);
        }
        Gauge.builder(KV_CACHE_SIZE, facts, f -> {
                    EngineMetricsSample sample = f.current().lastSample();
                    Long tokens = sample == null ? null : sample.kvCacheSizeTokens();
                    return tokens == null ? Double.NaN : tokens;
                })
                .description("The engine's KV cache size in tokens")
                .register(registry);
        for (MetricsEvidence.Part part : MetricsEvidence.Part.values()) {
            Gauge.builder(
                            EVIDENCE_LOST,
                            facts,
                            f -> f.current().metricsEvidence().lost().containsKey(part) ? 1 : 0)
                    .description("Whether evidence restart or busy detection needs is lost from the engine's /metrics")
                    .tag("evidence", part.value())
                    .register(registry);
        }
    }

    private Counter transition(EngineState.Kind from, EngineState.Kind to) {
        return transitions
                .computeIfAbsent(from, kind -> new EnumMap<>(EngineState.Kind.class))
                .computeIfAbsent(
                        to,
                        kind -> Counter.builder(ENGINE_TRANSITIONS)
                                .description("Engine readiness state changes")
                                .tag("from", from.value())
                                .tag("to", to.value())
                                .register(registry));
    }

    private void registerProbeMeters() {
        for (ProbeKind kind : ProbeKind.values()) {
            Map<ProbeReport.Outcome, Timer> duration = new EnumMap<>(ProbeReport.Outcome.class);
            for (ProbeReport.Outcome outcome : ProbeReport.Outcome.values()) {
                duration.put(
                        outcome,
                        Timer.builder(PROBE_DURATION)
                                .description("Heavy probe duration, request to verdict")
                                .tag("kind", kind.value())
                                .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                                .register(registry));
            }
            Map<Reason, Counter> failures = new EnumMap<>(Reason.class);
            ProbeReport.FAILURE_REASONS.forEach(reason -> failures.put(reason, probeFailures(kind, reason)));
            probes.put(
                    kind,
                    new ProbeMeters(
                            duration,
                            failures,
                            Timer.builder(PROBE_TTFT)
                                    .description("Heavy probe time to first token")
                                    .tag("kind", kind.value())
                                    .register(registry),
                            Timer.builder(PROBE_ITL)
                                    .description("Heavy probe largest inter-token latency")
                                    .tag("kind", kind.value())
                                    .register(registry),
                            Counter.builder(PROBE_TOKENS)
                                    .description("Tokens the heavy probes made the engine process")
                                    .tag("kind", kind.value())
                                    .register(registry)));
        }
    }

    private Counter probeFailures(ProbeKind kind, Reason reason) {
        return Counter.builder(PROBE_FAILURES)
                .description("Heavy probe failures by reason")
                .tag("kind", kind.value())
                .tag("reason", reason.value())
                .register(registry);
    }

    private void registerRestartMeters(RestartTracker tracker, ReadygateProperties properties) {
        for (RestartPath path : RestartPath.values()) {
            Map<Phase, Timer> phases = new EnumMap<>(Phase.class);
            for (Phase phase : Phase.values()) {
                if (phase != Phase.ENGINE_START) {
                    phases.put(
                            phase,
                            Timer.builder(PHASE_DURATION)
                                    .description("Time from the previous phase of an engine start to this one")
                                    .tag("phase", phase.value())
                                    .tag("path", path.value())
                                    .register(registry));
                }
            }
            starts.put(
                    path,
                    new StartMeters(
                            counter(ENGINE_STARTS, "Engine starts by restart path", "path", path.value()),
                            counter(
                                    ENGINE_START_FAILURES,
                                    "Engine starts that died before serving, by restart path",
                                    "path",
                                    path.value()),
                            Timer.builder(READINESS_LATENCY)
                                    .description("From engine start to verified ready")
                                    .tag("path", path.value())
                                    .serviceLevelObjectives(LATENCY_BUCKETS)
                                    .register(registry),
                            phases,
                            counter(CANARY_MISMATCHES, "Canary mismatches by restart path", "path", path.value())));
        }
        for (RecoveryKind kind : RecoveryKind.values()) {
            Map<RestartPath, Counter> byPath = new EnumMap<>(RestartPath.class);
            for (RestartPath path : RestartPath.values()) {
                byPath.put(
                        path,
                        Counter.builder(ENGINE_RECOVERIES)
                                .description("Engine starts by what they recovered from and restart path")
                                .tag("recovery", kind.value())
                                .tag("path", path.value())
                                .register(registry));
            }
            recoveries.put(kind, byPath);
        }
        for (SnapshotMismatch.Field field : SnapshotMismatch.Field.values()) {
            manifestMismatches.put(
                    field,
                    counter(
                            SNAPSHOT_MANIFEST_MISMATCHES,
                            "Snapshot restores whose manifest names another GPU, driver or vLLM version",
                            "field",
                            field.value()));
        }
        for (FallbackReason reason : FallbackReason.values()) {
            fallbacks.put(
                    reason, counter(PRELOAD_FALLBACKS, "Preload fallbacks to disk loading", "reason", reason.value()));
        }
        properties
                .restart()
                .readinessObjectives()
                .forEach((path, objective) -> Gauge.builder(READINESS_OBJECTIVE, () -> objective.toMillis() / 1000.0)
                        .description("How soon an engine start should be verified ready, by restart path")
                        .baseUnit("seconds")
                        .tag("path", path)
                        .register(registry));
        Gauge.builder(RESTART_LOOP, tracker, t -> t.restartLoop() ? 1 : 0)
                .description("Whether the engine is in a restart loop")
                .register(registry);
    }

    private void registerGpuMeters() {
        for (GpuReading.Reason reason : GpuReading.Reason.values()) {
            gpuReadingFailures.put(
                    reason, counter(GPU_READING_FAILURES, "GPU memory readings that failed", "reason", reason.value()));
        }
    }

    private void registerMemoryMeters() {
        for (MemorySignal signal : MemorySignal.values()) {
            Gauge.builder(MEMORY_SIGNAL, memory, m -> m.get().active().contains(signal) ? 1 : 0)
                    .description("Whether a GPU memory signal fires (1) or not (0)")
                    .tag("signal", signal.value())
                    .register(registry);
            memorySignals.put(
                    signal, counter(MEMORY_SIGNALS, "Times a GPU memory signal was raised", "signal", signal.value()));
        }
        Gauge.builder(MEMORY_DRIFT, memory, m -> {
                    MemoryAssessment.Drift drift = m.get().drift();
                    return drift == null ? 0 : drift.bytesPerCycle();
                })
                .description("Growth of GPU memory at readiness per restart cycle (same configuration and path)")
                .register(registry);
        Gauge.builder(STALE_CACHE, memory, m -> {
                    MemoryAssessment.StaleCache stale = m.get().staleCache();
                    return stale == null ? 0 : stale.staleBytes();
                })
                .description("The preload daemon's memory beyond the current checkpoint's weights after a switch")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder(HELD_AFTER_STOP, memory, m -> {
                    MemoryAssessment.HeldAfterStop held = m.get().heldAfterStop();
                    return held == null
                            ? 0
                            : held.unexplainedBytes()
                                    + held.holders().stream()
                                            .mapToLong(MemoryAssessment.Holder::unexpectedBytes)
                                            .sum();
                })
                .description("GPU memory held after the latest engine stop by processes that should have let it go")
                .baseUnit("bytes")
                .register(registry);
        cycleMoment("before_start", CycleMemory::beforeStart);
        cycleMoment("at_ready", CycleMemory::atReady);
        cycleMoment("after_stop", CycleMemory::afterStop);
    }

    private void cycleMoment(String moment, Function<CycleMemory, @Nullable MemoryMoment> of) {
        Gauge.builder(CYCLE_MEMORY, memory, m -> {
                    MemoryMoment read = of.apply(m.get().latestMoments());
                    return read == null ? Double.NaN : read.usedBytes();
                })
                .description("GPU memory used at the moments of the last restart cycle")
                .tag("moment", moment)
                .baseUnit("bytes")
                .register(registry);
    }

    private Counter counter(String name, String description, String tag, String value) {
        return Counter.builder(name).description(description).tag(tag, value).register(registry);
    }

    @EventListener
    public void onEngineStateChanged(EngineStateChanged change) {
        if (change.previous().kind() != change.current().kind()) {
            transition(change.previous().kind(), change.current().kind()).increment();
        }
    }

    @EventListener
    public void onObservationIgnored(ObservationIgnored event) {
        ignored.get(event.observationKind()).get(event.why()).increment();
    }

    @EventListener
    public void onProbeReport(ProbeReport report) {
        ProbeMeters meters = probes.get(report.kind());
        ProbeReport.Measurement measurement = report.measurement();
        meters.duration().get(report.outcome()).record(measurement == null ? Duration.ZERO : measurement.total());
        Reason reason = report.reason();
        if (reason != null) {
            meters.failures()
                    .computeIfAbsent(reason, unlisted -> probeFailures(report.kind(), unlisted))
                    .increment();
        }
        if (measurement != null) {
            meters.timeToFirstToken().record(measurement.timeToFirstToken());
            meters.interTokenLatency().record(measurement.maxInterTokenLatency());
            int tokens = (measurement.promptTokens() == null ? 0 : measurement.promptTokens())
                    + (measurement.completionTokens() == null ? 0 : measurement.completionTokens());
            meters.tokens().increment(tokens);
        }
    }

    @EventListener
    public void onRestartRecorded(RestartRecorded recorded) {
        RestartRecord record = recorded.record();
        engineInfo.register(
                List.of(MultiGauge.Row.of(
                        Tags.of(
                                "vllm_version",
                                        record.engine().vllmVersion() == null
                                                ? "unknown"
                                                : record.engine().vllmVersion(),
                                "model",
                                        record.engine().model() == null
                                                ? "unknown"
                                                : record.engine().model(),
                                "readygate_version", readygateVersion),
                        1)),
                true);
        releaseInfo.register(
                List.of(MultiGauge.Row.of(
                        release(
                                record.engine().vllmVersion(),
                                record.engine().revision(),
                                record.engine().arguments().configurationHash()),
                        1)),
                true);
        if (!recorded.completed() || !record.when().comparable()) {
            // A start readygate did not see begin is no engine start: its latency would be the engine's uptime.
            return;
        }
        StartMeters meters = starts.get(record.pathEvidence().path());
        meters.starts().increment();
        if (record.verdict().outcome() == Outcome.FAILED) {
            meters.failures().increment();
        }
        recoveries
                .get(record.recovery().kind())
                .get(record.pathEvidence().path())
                .increment();
        record.snapshotMismatches()
                .forEach(mismatch -> manifestMismatches.get(mismatch.field()).increment());
        // A latency that is only a bound (the engine gave no start time of its own) is no measurement: left out.
        Duration latency = record.verdict().measuredReadinessLatency();
        if (latency != null) {
            meters.readinessLatency().record(latency);
        }
        record.verdict()
                .measuredPhaseDurations()
                .forEach((phase, duration) -> meters.phases().get(phase).record(duration));
        if (record.pathEvidence().path() == RestartPath.PRELOAD_FALLBACK) {
            fallbacks
                    .get(FallbackReason.of(record.pathEvidence().fallbackReason()))
                    .increment();
        }
    }

    private static Tags release(@Nullable String vllmVersion, @Nullable String revision, String config) {
        return Tags.of(
                "vllm_version",
                vllmVersion == null ? "unknown" : vllmVersion,
                "revision",
                revision == null ? "unknown" : revision,
                "config",
                config);
    }

    @EventListener
    public void onCanaryMismatched(CanaryMismatched mismatch) {
        starts.get(mismatch.path()).canaryMismatches().increment();
    }

    @EventListener
    public void onGpuReading(GpuMemoryView view) {
        GpuReading.Reason failure = view.failure();
        if (failure != null) {
            gpuReadingFailures.get(failure).increment();
            return;
        }
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        for (GpuMemory gpu : view.gpus()) {
            Map<ProcessOwners.Owner, Long> owners = view.byOwner().getOrDefault(gpu.uuid(), Map.of());
            for (ProcessOwners.Owner owner : ProcessOwners.Owner.values()) {
                rows.add(MultiGauge.Row.of(
                        Tags.of("gpu", gpu.uuid(), "owner", owner.value()), owners.getOrDefault(owner, 0L)));
            }
            rows.add(MultiGauge.Row.of(Tags.of("gpu", gpu.uuid(), "owner", "total"), gpu.usedBytes()));
        }
        gpuMemory.register(rows, true);
    }

    @EventListener
    public void onMemoryAssessed(MemoryAssessed assessed) {
        memory.set(assessed.assessment());
        assessed.raised().forEach(signal -> memorySignals.get(signal).increment());
    }
}
