package dev.readygate.metrics;

import dev.readygate.restart.EnginePhase;
import dev.readygate.restart.FallbackReason;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.Phase;
import dev.readygate.restart.RecoveryKind;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.SnapshotMismatch;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * The restart meters, per restart path: engine starts and those that failed, readiness latency (a histogram from 1 s to
 * 1 h), phase durations, the engine's own logged phases ({@link EnginePhase}), canary mismatches and recoveries;
 * torch.compile cache hits and misses; snapshot manifest mismatches, preload fallbacks by reason,
 * the readiness objectives and whether the engine is in a restart loop.
 */
final class RestartMeters {

    private static final Duration[] LATENCY_BUCKETS = Stream.of(
                    1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900, 1200, 1800, 2700, 3600)
            .map(Duration::ofSeconds)
            .toArray(Duration[]::new);

    /** A restart path's meters. */
    private record OfPath(
            Counter starts,
            Counter failures,
            Timer readinessLatency,
            Map<Phase, Timer> phases,
            Counter canaryMismatches,
            Map<EnginePhase, Timer> enginePhases) {}

    private final MeterRegistry registry;
    // Held here: a gauge keeps only a weak reference to what it reads.
    private final BooleanSupplier restartLoop;
    private final Map<RestartPath, OfPath> starts = new EnumMap<>(RestartPath.class);
    private final Map<RecoveryKind, Map<RestartPath, Counter>> recoveries = new EnumMap<>(RecoveryKind.class);
    private final Map<SnapshotMismatch.Field, Counter> manifestMismatches = new EnumMap<>(SnapshotMismatch.Field.class);
    private final Map<FallbackReason, Counter> fallbacks = new EnumMap<>(FallbackReason.class);
    private final Counter compileCacheHits;
    private final Counter compileCacheMisses;

    /**
     * @param restartLoop whether the engine is in a restart loop now
     * @param readinessObjectives {@code readygate.restart.readiness-objectives}: by restart path label
     */
    RestartMeters(MeterRegistry registry, BooleanSupplier restartLoop, Map<String, Duration> readinessObjectives) {
        this.registry = registry;
        this.restartLoop = restartLoop;
        for (RestartPath path : RestartPath.values()) {
            Map<Phase, Timer> phases = new EnumMap<>(Phase.class);
            for (Phase phase : Phase.values()) {
                if (phase != Phase.ENGINE_START) {
                    phases.put(
                            phase,
                            phaseTimer(
                                    MeterNames.PHASE_DURATION,
                                    "Time from the previous phase of an engine start to this one",
                                    phase.value(),
                                    path));
                }
            }
            Map<EnginePhase, Timer> enginePhases = new EnumMap<>(EnginePhase.class);
            for (EnginePhase phase : EnginePhase.values()) {
                enginePhases.put(
                        phase,
                        phaseTimer(
                                MeterNames.ENGINE_PHASE_DURATION,
                                "How long a phase of the engine's own start-up took, as its log said",
                                phase.value(),
                                path));
            }
            starts.put(
                    path,
                    new OfPath(
                            counter(MeterNames.ENGINE_STARTS, "Engine starts by restart path", "path", path.value()),
                            counter(
                                    MeterNames.ENGINE_START_FAILURES,
                                    "Engine starts that died before serving, by restart path",
                                    "path",
                                    path.value()),
                            Timer.builder(MeterNames.READINESS_LATENCY)
                                    .description("From engine start to verified ready")
                                    .tag("path", path.value())
                                    .serviceLevelObjectives(LATENCY_BUCKETS)
                                    .register(registry),
                            phases,
                            counter(
                                    MeterNames.CANARY_MISMATCHES,
                                    "Canary mismatches by restart path",
                                    "path",
                                    path.value()),
                            enginePhases));
        }
        compileCacheHits = counter(
                MeterNames.COMPILE_CACHE,
                "Engine starts by whether torch.compile's cache served them",
                "result",
                "hit");
        compileCacheMisses = counter(
                MeterNames.COMPILE_CACHE,
                "Engine starts by whether torch.compile's cache served them",
                "result",
                "miss");
        for (RecoveryKind kind : RecoveryKind.values()) {
            Map<RestartPath, Counter> byPath = new EnumMap<>(RestartPath.class);
            for (RestartPath path : RestartPath.values()) {
                byPath.put(
                        path,
                        Counter.builder(MeterNames.ENGINE_RECOVERIES)
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
                            MeterNames.SNAPSHOT_MANIFEST_MISMATCHES,
                            "Snapshot restores whose manifest names another GPU, driver or vLLM version",
                            "field",
                            field.value()));
        }
        for (FallbackReason reason : FallbackReason.values()) {
            fallbacks.put(
                    reason,
                    counter(
                            MeterNames.PRELOAD_FALLBACKS,
                            "Preload fallbacks to disk loading",
                            "reason",
                            reason.value()));
        }
        readinessObjectives.forEach(
                (path, objective) -> Gauge.builder(MeterNames.READINESS_OBJECTIVE, () -> objective.toMillis() / 1000.0)
                        .description("How soon an engine start should be verified ready, by restart path")
                        .baseUnit("seconds")
                        .tag("path", path)
                        .register(registry));
        Gauge.builder(MeterNames.RESTART_LOOP, restartLoop, loop -> loop.getAsBoolean() ? 1 : 0)
                .description("Whether the engine is in a restart loop")
                .register(registry);
    }

    private Timer phaseTimer(String name, String description, String phase, RestartPath path) {
        return Timer.builder(name)
                .description(description)
                .tag("phase", phase)
                .tag("path", path.value())
                .register(registry);
    }

    private Counter counter(String name, String description, String tag, String value) {
        return Counter.builder(name).description(description).tag(tag, value).register(registry);
    }

    void onRestartRecorded(RecordedStart start) {
        if (!start.counted()) {
            return;
        }
        OfPath meters = starts.get(start.path());
        meters.starts().increment();
        if (start.outcome() == Outcome.FAILED) {
            meters.failures().increment();
        }
        recoveries.get(start.recovery()).get(start.path()).increment();
        start.mismatches().forEach(field -> manifestMismatches.get(field).increment());
        // A latency that is only a bound (the engine gave no start time of its own) is no measurement: left out.
        Duration latency = start.readinessLatency();
        if (latency != null) {
            meters.readinessLatency().record(latency);
        }
        start.phaseDurations()
                .forEach((phase, duration) -> meters.phases().get(phase).record(duration));
        if (start.fallback() != null) {
            fallbacks.get(start.fallback()).increment();
        }
        start.enginePhases()
                .forEach((phase, duration) -> meters.enginePhases().get(phase).record(duration));
        if (start.compileCacheHit() != null) {
            (start.compileCacheHit() ? compileCacheHits : compileCacheMisses).increment();
        }
    }

    void onCanaryMismatched(RestartPath path) {
        starts.get(path).canaryMismatches().increment();
    }
}
