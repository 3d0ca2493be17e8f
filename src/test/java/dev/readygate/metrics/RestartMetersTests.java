package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.restart.EnginePhase;
import dev.readygate.restart.FallbackReason;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.Phase;
import dev.readygate.restart.RecoveryKind;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.SnapshotMismatch;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class RestartMetersTests {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final AtomicBoolean loop = new AtomicBoolean();
    final RestartMeters meters = new RestartMeters(
            registry, loop::get, Map.of("cold", Duration.ofMinutes(5), "preload_hit", Duration.ofSeconds(90)));

    @Test
    void everyPathPhaseRecoveryFieldAndReasonIsASeriesAtZeroFromTheStart() {
        int paths = RestartPath.values().length;
        assertThat(registry.get(MeterNames.ENGINE_STARTS).counters()).hasSize(paths);
        assertThat(registry.get(MeterNames.ENGINE_START_FAILURES).counters()).hasSize(paths);
        assertThat(registry.get(MeterNames.CANARY_MISMATCHES).counters()).hasSize(paths);
        assertThat(registry.get(MeterNames.READINESS_LATENCY).timers()).hasSize(paths);
        // Every phase but the start itself, which no phase comes before.
        assertThat(registry.get(MeterNames.PHASE_DURATION).timers()).hasSize(paths * (Phase.values().length - 1));
        assertThat(registry.get(MeterNames.ENGINE_RECOVERIES).counters()).hasSize(paths * RecoveryKind.values().length);
        assertThat(registry.get(MeterNames.SNAPSHOT_MANIFEST_MISMATCHES).counters())
                .hasSize(SnapshotMismatch.Field.values().length);
        assertThat(registry.get(MeterNames.PRELOAD_FALLBACKS).counters()).hasSize(FallbackReason.values().length);
        assertThat(registry.get(MeterNames.ENGINE_PHASE_DURATION).timers())
                .hasSize(paths * EnginePhase.values().length);
        assertThat(registry.get(MeterNames.COMPILE_CACHE).counters()).hasSize(2);
        assertThat(registry.getMeters().stream()
                        .filter(meter -> meter instanceof io.micrometer.core.instrument.Counter)
                        .map(meter -> ((io.micrometer.core.instrument.Counter) meter).count()))
                .allMatch(count -> count == 0);
    }

    @Test
    void theObjectivesAreGaugesInSecondsAndTheLoopFollowsTheTracker() {
        assertThat(registry.get(MeterNames.READINESS_OBJECTIVE)
                        .tag("path", "cold")
                        .gauge()
                        .value())
                .isEqualTo(300);
        assertThat(registry.get(MeterNames.READINESS_OBJECTIVE)
                        .tag("path", "preload_hit")
                        .gauge()
                        .value())
                .isEqualTo(90);
        assertThat(registry.get(MeterNames.RESTART_LOOP).gauge().value()).isZero();
        loop.set(true);
        assertThat(registry.get(MeterNames.RESTART_LOOP).gauge().value()).isEqualTo(1);
    }

    @Test
    void aCountedStartMovesItsPathsMeters() {
        meters.onRestartRecorded(new RecordedStart(
                true,
                RestartPath.PRELOAD_FALLBACK,
                Outcome.FAILED,
                RecoveryKind.NEW_POD,
                List.of(SnapshotMismatch.Field.DRIVER_VERSION),
                Duration.ofSeconds(42),
                Map.of(Phase.PORT_LISTENING, Duration.ofSeconds(30)),
                FallbackReason.DAEMON_UNAVAILABLE,
                null,
                null,
                null,
                "cfg",
                Map.of(EnginePhase.DOWNLOAD, Duration.ofSeconds(70), EnginePhase.GRAPH_CAPTURE, Duration.ofSeconds(9)),
                true));

        String path = RestartPath.PRELOAD_FALLBACK.value();
        assertThat(count(MeterNames.ENGINE_STARTS, "path", path)).isEqualTo(1);
        assertThat(count(MeterNames.ENGINE_START_FAILURES, "path", path)).isEqualTo(1);
        assertThat(registry.get(MeterNames.ENGINE_RECOVERIES)
                        .tag("recovery", RecoveryKind.NEW_POD.value())
                        .tag("path", path)
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(count(MeterNames.SNAPSHOT_MANIFEST_MISMATCHES, "field", "driver_version"))
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.READINESS_LATENCY)
                        .tag("path", path)
                        .timer()
                        .totalTime(TimeUnit.SECONDS))
                .isEqualTo(42);
        assertThat(registry.get(MeterNames.PHASE_DURATION)
                        .tag("path", path)
                        .tag("phase", Phase.PORT_LISTENING.value())
                        .timer()
                        .totalTime(TimeUnit.SECONDS))
                .isEqualTo(30);
        assertThat(count(MeterNames.PRELOAD_FALLBACKS, "reason", FallbackReason.DAEMON_UNAVAILABLE.value()))
                .isEqualTo(1);
        // The engine's own phases, as its log said: a download is a phase of its own, not a slow cold start.
        assertThat(enginePhase(path, "download").totalTime(TimeUnit.SECONDS)).isEqualTo(70);
        assertThat(enginePhase(path, "graph_capture").totalTime(TimeUnit.SECONDS))
                .isEqualTo(9);
        assertThat(enginePhase(path, "compile").count()).isZero();
        assertThat(count(MeterNames.COMPILE_CACHE, "result", "hit")).isEqualTo(1);
        assertThat(count(MeterNames.COMPILE_CACHE, "result", "miss")).isZero();
    }

    @Test
    void aStartThatDoesNotCountMovesNothing() {
        meters.onRestartRecorded(new RecordedStart(
                false,
                RestartPath.COLD,
                Outcome.FAILED,
                RecoveryKind.UNKNOWN,
                List.of(SnapshotMismatch.Field.GPU_UUID),
                Duration.ofSeconds(42),
                Map.of(),
                null,
                null,
                null,
                null,
                "cfg",
                Map.of(EnginePhase.COMPILE, Duration.ofSeconds(44)),
                false));

        assertThat(registry.getMeters().stream()
                        .filter(meter -> meter instanceof io.micrometer.core.instrument.Counter)
                        .map(meter -> ((io.micrometer.core.instrument.Counter) meter).count()))
                .allMatch(count -> count == 0);
        assertThat(registry.get(MeterNames.READINESS_LATENCY).timers())
                .allSatisfy(timer -> assertThat(timer.count()).isZero());
        assertThat(registry.get(MeterNames.ENGINE_PHASE_DURATION).timers())
                .allSatisfy(timer -> assertThat(timer.count()).isZero());
    }

    @Test
    void aCanaryMismatchIsCountedOnItsPath() {
        meters.onCanaryMismatched(RestartPath.PRELOAD_HIT);
        assertThat(count(MeterNames.CANARY_MISMATCHES, "path", "preload_hit")).isEqualTo(1);
        assertThat(count(MeterNames.CANARY_MISMATCHES, "path", "cold")).isZero();
    }

    private Timer enginePhase(String path, String phase) {
        return registry.get(MeterNames.ENGINE_PHASE_DURATION)
                .tag("path", path)
                .tag("phase", phase)
                .timer();
    }

    private double count(String name, String tag, String value) {
        return registry.get(name).tag(tag, value).counter().count();
    }
}
