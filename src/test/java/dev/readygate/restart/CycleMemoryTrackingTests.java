package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import dev.readygate.readiness.StartRules;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * The GPU memory of a restart cycle whatever order its readings come in: the reading taken after an engine went away is
 * the stopped start's after-stop moment and the next start's before-start moment, even when the next start was
 * verified and recorded before that reading came back (a slow nvidia-smi on a busy node).
 */
class CycleMemoryTrackingTests {

    static final String MODEL = "Qwen/Qwen3-0.6B";
    static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    static final long MIB = 1024L * 1024;

    /** What nvidia-smi answers now. */
    volatile Mono<MemoryMoment> gpuNow = Mono.empty();

    final List<RestartRecord> written = new CopyOnWriteArrayList<>();

    final RestartTracker tracker = new RestartTracker(
            new EngineFactsHolder(new EngineStateMachine(new ReadinessRules(1, 3), T0, change -> {})),
            StartLog.NONE,
            new EvidenceSources(
                    null, null, null, null, HttpClient.newHttpClient(), JsonMapper.shared(), Schedulers.immediate()),
            List.of(),
            written::add,
            List.of(),
            Clock.fixed(T0, ZoneOffset.UTC),
            "hash",
            "test",
            Map.of(),
            Duration.ofMinutes(10),
            5,
            () -> Mono.defer(() -> gpuNow),
            Duration.ZERO);

    EngineState state = new EngineState.Starting(T0);
    EngineStart start;

    void to(EngineState next) {
        to(next, new Observation.HealthOk(next.since()));
    }

    void to(EngineState next, Observation cause) {
        EngineState previous = state;
        EngineStart before = start;
        state = next;
        start = StartRules.next(before, previous, next, cause, EngineStateMachine.RANDOM_IDS);
        tracker.onEngineStateChanged(new EngineStateChanged(previous, next, cause, before, start));
    }

    /** The engine comes up and is verified at {@code seconds}. */
    void startsAndIsVerified(int seconds) {
        Instant at = T0.plusSeconds(seconds);
        to(new EngineState.Healthy(at, Reason.MODEL_NOT_LISTED, ""));
        to(new EngineState.ModelListed(at, MODEL, Reason.NOT_VERIFIED));
        to(new EngineState.Ready(at.plusMillis(100), MODEL));
    }

    void goesAway(int seconds) {
        to(new EngineState.Down(T0.plusSeconds(seconds), Reason.ENGINE_DOWN, "/health: connection refused"));
    }

    /** The GPU at {@code seconds}: the preload daemon's cache, and the engine's memory unless {@code enginePid} is 0. */
    static MemoryMoment gpu(int seconds, int enginePid, long engineMib) {
        List<MemoryMoment.Holder> holders =
                new ArrayList<>(List.of(new MemoryMoment.Holder(7, Owner.PRELOAD_DAEMON, 1668 * MIB)));
        if (enginePid != 0) {
            holders.add(new MemoryMoment.Holder(enginePid, Owner.ENGINE, engineMib * MIB));
        }
        Map<Owner, Long> byOwner =
                holders.stream().collect(Collectors.toMap(MemoryMoment.Holder::owner, MemoryMoment.Holder::bytes));
        long used = holders.stream().mapToLong(MemoryMoment.Holder::bytes).sum();
        return new MemoryMoment(T0.plusSeconds(seconds), used, byOwner, holders);
    }

    RestartRecord latest(String id) {
        return tracker.history().stream()
                .filter(record -> record.id().equals(id))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void aReadingAfterTheStopThatComesAfterTheNextStartWasRecordedStillCompletesBothCycles() {
        gpuNow = Mono.just(gpu(10, 100, 7688));
        startsAndIsVerified(10);
        await().until(() -> tracker.history().size() == 1);
        String first = tracker.history().getFirst().id();

        // The engine goes away; the reading of the empty GPU is slow, and the next start is verified before it comes.
        Sinks.One<MemoryMoment> slow = Sinks.one();
        gpuNow = slow.asMono();
        goesAway(20);
        await().until(() -> slow.currentSubscriberCount() == 1);
        gpuNow = Mono.just(gpu(22, 200, 7688));
        startsAndIsVerified(22);
        await().until(() -> tracker.history().size() == 2);
        String second = tracker.history().getLast().id();
        assertThat(latest(second).memory().beforeStart()).isNull();

        MemoryMoment stopped = gpu(21, 0, 0);
        slow.tryEmitValue(stopped);

        await().untilAsserted(() -> {
            assertThat(latest(first).memory().afterStop()).isEqualTo(stopped);
            assertThat(latest(second).memory().beforeStart()).isEqualTo(stopped);
        });
        // Written again, in their places: oldest first.
        assertThat(tracker.history()).extracting(RestartRecord::id).containsExactly(first, second);
        assertThat(written)
                .filteredOn(record -> record.id().equals(second))
                .last()
                .extracting(record -> record.memory().beforeStart())
                .isEqualTo(stopped);
    }

    @Test
    void aRestartNobodySawGoAwayGetsNoReadingOfAnEarlierGap() {
        gpuNow = Mono.just(gpu(10, 100, 7688));
        startsAndIsVerified(10);
        await().until(() -> tracker.history().size() == 1);
        gpuNow = Mono.just(gpu(21, 0, 0));
        goesAway(20);
        await().until(() -> tracker.history().getFirst().memory().afterStop() != null);
        gpuNow = Mono.just(gpu(22, 200, 7688));
        startsAndIsVerified(22);
        await().until(() -> tracker.history().size() == 2
                && tracker.history().getLast().memory().beforeStart() != null);

        // The process start time changed between two checks: no reading shows the GPU between the two engines.
        gpuNow = Mono.just(gpu(40, 300, 7688));
        to(
                new EngineState.Healthy(
                        T0.plusSeconds(40), Reason.ENGINE_RESTARTED, "process_start_time_seconds changed"),
                new Observation.Restarted(T0.plusSeconds(40), "process_start_time_seconds changed"));
        to(new EngineState.ModelListed(T0.plusSeconds(40), MODEL, Reason.NOT_VERIFIED));
        to(new EngineState.Ready(T0.plusSeconds(40), MODEL));
        await().until(() -> tracker.history().size() == 3);

        assertThat(tracker.history().getLast().memory().atReady()).isNotNull();
        assertThat(tracker.history().getLast().memory().beforeStart()).isNull();
    }
}
