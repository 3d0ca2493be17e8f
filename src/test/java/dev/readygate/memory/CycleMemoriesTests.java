package dev.readygate.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import dev.readygate.readiness.StartLedger;
import dev.readygate.readiness.StartSource;
import dev.readygate.restart.CycleMemory;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.TestRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The GPU memory of a restart cycle whatever order its readings come in, in virtual time: the reading taken after an
 * engine went away is the stopped start's after-stop moment and the next start's before-start moment, even when the
 * next start was verified and recorded before that reading came back (a slow nvidia-smi on a busy node).
 */
class CycleMemoriesTests {

    static final String MODEL = "Qwen/Qwen3-0.6B";
    static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    static final long MIB = 1024L * 1024;
    static final Duration AFTER_STOP_DELAY = Duration.ofSeconds(2);

    final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    final List<RestartRecord> written = new CopyOnWriteArrayList<>();
    final RestartRecords records = new RestartRecords(List.of(), written::add);
    final MemoryWatch watch = new MemoryWatch(
            records,
            new ReadygateProperties.Memory(
                    AFTER_STOP_DELAY,
                    3,
                    6,
                    org.springframework.util.unit.DataSize.ofMegabytes(64),
                    org.springframework.util.unit.DataSize.ofMegabytes(256),
                    org.springframework.util.unit.DataSize.ofGigabytes(1),
                    0.01),
            event -> {});

    /** What nvidia-smi answers now. */
    volatile Mono<MemoryMoment> gpuNow = Mono.empty();

    final CycleMemories cycles = new CycleMemories(
            () -> Mono.defer(() -> gpuNow), records, watch, AFTER_STOP_DELAY, time, new StartLedger());
    final List<EngineStateChanged> changes = new ArrayList<>();
    final AtomicInteger starts = new AtomicInteger();
    final EngineStateMachine machine =
            new EngineStateMachine(new ReadinessRules(1, 3), T0, changes::add, () -> "s" + starts.incrementAndGet());

    @AfterEach
    void stop() {
        time.dispose();
    }

    void observe(Observation observation) {
        machine.apply(observation);
        changes.forEach(cycles::onEngineStateChanged);
        changes.clear();
    }

    /** The engine comes up, is verified at {@code seconds}, and its start is recorded ready. */
    String startsAndIsVerified(int seconds) {
        Instant at = T0.plusSeconds(seconds);
        observe(new Observation.HealthOk(at));
        observe(new Observation.ModelListed(at, MODEL));
        observe(new Observation.Verified(at.plusMillis(100), "ok"));
        String id = machine.start().id();
        RestartRecord kept = records.keep(record(id, at, Outcome.READY));
        cycles.onRestartRecorded(new RestartRecorded(kept, true));
        return id;
    }

    void goesAway(int seconds) {
        observe(new Observation.Unreachable(T0.plusSeconds(seconds), Reason.ENGINE_DOWN, "/health: refused"));
    }

    CycleMemory memory(String id) {
        return records.history().stream()
                .filter(record -> record.id().equals(id))
                .findFirst()
                .orElseThrow()
                .memory();
    }

    @Test
    void aReadingAfterTheStopThatComesAfterTheNextStartWasRecordedStillCompletesBothCycles() {
        gpuNow = Mono.just(gpu(10, 100, 7688));
        String first = startsAndIsVerified(10);

        // The engine goes away; the reading of the empty GPU is slow, and the next start is verified before it comes.
        Sinks.One<MemoryMoment> slow = Sinks.one();
        gpuNow = slow.asMono();
        goesAway(20);
        time.advanceTimeBy(AFTER_STOP_DELAY);
        assertThat(slow.currentSubscriberCount()).isEqualTo(1);
        gpuNow = Mono.just(gpu(22, 200, 7688));
        String second = startsAndIsVerified(22);
        assertThat(memory(second).atReady()).isEqualTo(gpu(22, 200, 7688));
        assertThat(memory(second).beforeStart()).isNull();

        MemoryMoment stopped = gpu(21, 0, 0);
        slow.tryEmitValue(stopped);

        assertThat(memory(first).afterStop()).isEqualTo(stopped);
        assertThat(memory(second).beforeStart()).isEqualTo(stopped);
        // Written again, in their places: oldest first.
        assertThat(records.history()).extracting(RestartRecord::id).containsExactly(first, second);
        assertThat(written)
                .filteredOn(record -> record.id().equals(second))
                .last()
                .extracting(record -> record.memory().beforeStart())
                .isEqualTo(stopped);
    }

    @Test
    void aReadingAfterTheStopWaitsTheAfterStopDelay() {
        gpuNow = Mono.just(gpu(10, 100, 7688));
        String first = startsAndIsVerified(10);
        gpuNow = Mono.just(gpu(21, 0, 0));
        goesAway(20);

        time.advanceTimeBy(AFTER_STOP_DELAY.minusMillis(1));
        assertThat(memory(first).afterStop()).isNull();
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(memory(first).afterStop()).isEqualTo(gpu(21, 0, 0));
    }

    @Test
    void aRestartNobodySawGoAwayGetsNoReadingOfAnEarlierGap() {
        gpuNow = Mono.just(gpu(10, 100, 7688));
        startsAndIsVerified(10);
        gpuNow = Mono.just(gpu(21, 0, 0));
        goesAway(20);
        time.advanceTimeBy(AFTER_STOP_DELAY);
        gpuNow = Mono.just(gpu(22, 200, 7688));
        String second = startsAndIsVerified(22);
        assertThat(memory(second).beforeStart()).isEqualTo(gpu(21, 0, 0));

        // The process start time changed between two checks: no reading shows the GPU between the two engines.
        gpuNow = Mono.just(gpu(40, 300, 7688));
        observe(new Observation.Restarted(T0.plusSeconds(40), "process_start_time_seconds changed"));
        observe(new Observation.ModelListed(T0.plusSeconds(40), MODEL));
        observe(new Observation.Verified(T0.plusSeconds(40), "ok"));
        String third = machine.start().id();
        cycles.onRestartRecorded(
                new RestartRecorded(records.keep(record(third, T0.plusSeconds(40), Outcome.READY)), true));

        assertThat(memory(third).atReady()).isNotNull();
        assertThat(memory(third).beforeStart()).isNull();
    }

    @Test
    void aNewProcessInTheLogBeforeThePortWasSeenClosingOpensTheGapBetweenTheTwoStarts() {
        gpuNow = Mono.just(gpu(10, 100, 7688));
        String first = startsAndIsVerified(10);

        // The next start's header is read before the probes see the old engine's port closed.
        gpuNow = Mono.just(gpu(21, 0, 0));
        observe(new Observation.ProcessStarted(T0.plusSeconds(20), T0.plusSeconds(20), first, false, "header"));
        String second = machine.start().id();
        time.advanceTimeBy(AFTER_STOP_DELAY);
        gpuNow = Mono.just(gpu(25, 200, 7688));
        observe(new Observation.Unreachable(T0.plusSeconds(21), Reason.ENGINE_DOWN, "/health: refused"));
        String verified = startsAndIsVerified(25);

        assertThat(verified).isEqualTo(second).isNotEqualTo(first);
        assertThat(memory(first).afterStop()).isEqualTo(gpu(21, 0, 0));
        assertThat(memory(second).beforeStart()).isEqualTo(gpu(21, 0, 0));
    }

    @Test
    void aStartThatFailedBeforeServingIsReadAfterItStopped() {
        observe(new Observation.ProcessStarted(T0.plusSeconds(1), T0.plusSeconds(1), null, false, "header"));
        String failed = machine.start().id();
        gpuNow = Mono.just(gpu(9, 0, 0));
        observe(new Observation.StartFailed(T0.plusSeconds(8), failed, "torch.OutOfMemoryError: CUDA out of memory."));
        cycles.onRestartRecorded(
                new RestartRecorded(records.keep(record(failed, T0.plusSeconds(1), Outcome.FAILED)), true));
        time.advanceTimeBy(AFTER_STOP_DELAY);

        assertThat(memory(failed).afterStop()).isEqualTo(gpu(9, 0, 0));
        assertThat(memory(failed).atReady()).isNull();
    }

    static Stream<Arguments> beforeStartCandidates() {
        Instant start = T0.plusSeconds(20);
        return Stream.of(
                // The reading shows none of the engine processes this start had at readiness: the GPU before it.
                Arguments.of("a clean reading", gpu(21, 0, 0), gpu(30, 200, 7688), true),
                Arguments.of("the new engine already in it", gpu(21, 200, 512), gpu(30, 200, 7688), false),
                Arguments.of("read after readiness", gpu(31, 0, 0), gpu(30, 200, 7688), false),
                // Without processes at readiness: read no later than after-stop-delay after the process started.
                Arguments.of("no reading at readiness, in time", gpu(21, 0, 0), null, true),
                Arguments.of("no reading at readiness, too late", gpu(23, 0, 0), null, false),
                Arguments.of(
                        "a reading at readiness that lists no processes (DCGM), in time",
                        gpu(21, 0, 0),
                        new MemoryMoment(start.plusSeconds(10), 9000 * MIB, Map.of(), List.of()),
                        true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("beforeStartCandidates")
    void beforeStartTakesTheReadingAfterTheStopOnlyWhenItShowsTheGpuBeforeThisEngine(
            String name, MemoryMoment stopped, @Nullable MemoryMoment atReady, boolean taken) {
        assertThat(CycleMemories.beforeStart(stopped, atReady, T0.plusSeconds(20), AFTER_STOP_DELAY))
                .isEqualTo(taken ? stopped : null);
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

    static RestartRecord record(String id, Instant engineStart, Outcome outcome) {
        return TestRecords.record(id)
                .engineStart(engineStart)
                .engineStartSource(StartSource.PROCESS_START_TIME)
                .path(RestartPath.PRELOAD_HIT)
                .outcome(outcome)
                .vllmVersion("0.31.0")
                .model(MODEL)
                .modelRoot(MODEL)
                .revision("main")
                .maxModelLen(4096)
                .probeConfigHash("h")
                .readygateVersion("dev")
                .build();
    }
}
