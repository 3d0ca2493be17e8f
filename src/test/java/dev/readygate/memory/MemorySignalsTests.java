package dev.readygate.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.gpu.GpuMemorySource;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.GpuReading;
import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.NvidiaSmiParser;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.readiness.StartSource;
import dev.readygate.restart.CycleMemory;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.Recovery;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.TestRecords;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The memory signals over the real H200 captures (through the GPU monitor's real attribution, with the daemon and
 * engine told apart by their command lines) and over constructed series of cycles.
 */
class MemorySignalsTests {

    static final long MIB = 1024L * 1024;

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    static final ReadygateProperties.Memory SETTINGS = new ReadygateProperties.Memory(
            Duration.ofSeconds(2),
            3,
            6,
            DataSize.ofMegabytes(64),
            DataSize.ofMegabytes(256),
            DataSize.ofGigabytes(1),
            0.01);

    @TempDir
    Path proc;

    @BeforeEach
    void commandLines() throws IOException {
        // The captured scenario's processes: pid 560 plays the preload daemon, 598 the engine (README of the capture).
        cmdline(560, "/usr/bin/python3", "-m", "vllm.entrypoints.cli.main", "preload", "Qwen/Qwen3-0.6B");
        cmdline(598, "/opt/torch/.venv/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "q");
    }

    // ---- held after stop, over the real captures

    @Test
    void daemonKeepingWhatItHeldBeforeTheStartIsExpectedAfterTheEngineStops() {
        RestartRecord cycle = record(
                RestartPath.PRELOAD_HIT,
                0,
                new CycleMemory(
                        moment("xml-daemon-holds-10GiB.xml"),
                        moment("xml-engine-mapped.xml"),
                        moment("xml-engine-exited-daemon-alive.xml")));

        MemoryAssessment assessment = MemorySignals.assess(List.of(cycle), null, null, SETTINGS);

        MemoryAssessment.HeldAfterStop held = Objects.requireNonNull(assessment.heldAfterStop());
        assertThat(held.holders()).singleElement().satisfies(holder -> {
            assertThat(holder.pid()).isEqualTo(560);
            assertThat(holder.owner()).isEqualTo(Owner.PRELOAD_DAEMON);
            assertThat(holder.bytes()).isEqualTo(10760 * MIB);
            assertThat(holder.expected()).isTrue();
        });
        assertThat(assessment.active()).isEmpty();
    }

    @Test
    void engineProcessStillHoldingMemoryAfterTheStopIsHeldAfterStop() {
        RestartRecord cycle = record(
                RestartPath.PRELOAD_HIT,
                0,
                new CycleMemory(
                        moment("xml-daemon-holds-10GiB.xml"),
                        moment("xml-engine-mapped.xml"),
                        moment("xml-engine-mapped.xml")));

        MemoryAssessment assessment = MemorySignals.assess(List.of(cycle), null, null, SETTINGS);

        assertThat(assessment.active()).containsExactly(MemorySignal.HELD_AFTER_STOP);
        assertThat(Objects.requireNonNull(assessment.heldAfterStop()).holders())
                .filteredOn(holder -> !holder.expected())
                .singleElement()
                .satisfies(holder -> {
                    assertThat(holder.pid()).isEqualTo(598);
                    assertThat(holder.owner()).isEqualTo(Owner.ENGINE);
                    assertThat(holder.bytes()).isEqualTo(2660 * MIB);
                });
    }

    @Test
    void heldAfterStopClearsOnceALaterReadingShowsTheEngineProcessGone() {
        RestartRecord cycle = record(
                RestartPath.PRELOAD_HIT,
                0,
                new CycleMemory(
                        moment("xml-daemon-holds-10GiB.xml"),
                        moment("xml-engine-mapped.xml"),
                        moment("xml-engine-mapped.xml")));
        MemoryMoment gone = moment("xml-engine-exited-daemon-alive.xml");
        MemoryMoment later = new MemoryMoment(T0.plusSeconds(120), gone.usedBytes(), gone.byOwner(), gone.processes());

        MemoryAssessment assessment = MemorySignals.assess(List.of(cycle), null, later, SETTINGS);

        assertThat(assessment.active()).isEmpty();
        assertThat(Objects.requireNonNull(assessment.heldAfterStop()).holders())
                .filteredOn(holder -> holder.pid() == 598)
                .singleElement()
                .satisfies(holder -> assertThat(holder.why()).contains("let go by"));
    }

    @Test
    void daemonHoldingMoreAfterTheCycleThanBeforeIsHeldAfterStop() {
        RestartRecord cycle = record(
                RestartPath.COLD,
                0,
                new CycleMemory(
                        moment("xml-daemon-freed.xml"),
                        moment("xml-engine-mapped.xml"),
                        moment("xml-engine-exited-daemon-alive.xml")));

        MemoryAssessment assessment = MemorySignals.assess(List.of(cycle), null, null, SETTINGS);

        assertThat(assessment.active()).containsExactly(MemorySignal.HELD_AFTER_STOP);
        assertThat(Objects.requireNonNull(assessment.heldAfterStop()).holders())
                .singleElement()
                .satisfies(holder -> {
                    assertThat(holder.expected()).isFalse();
                    assertThat(holder.why()).isEqualTo("the preload daemon holds 10240 MiB more than before the start");
                });
    }

    @Test
    void withoutProcessesOnlyTheTotalCanShowMemoryLeftBehind() {
        MemoryMoment before = new MemoryMoment(T0, 616 * MIB, Map.of(), List.of());
        MemoryMoment after = new MemoryMoment(T0.plusSeconds(60), 11376 * MIB, Map.of(), List.of());
        RestartRecord cycle = record(RestartPath.COLD, 0, new CycleMemory(before, null, after));

        MemoryAssessment assessment = MemorySignals.assess(List.of(cycle), null, null, SETTINGS);

        assertThat(assessment.active()).containsExactly(MemorySignal.HELD_AFTER_STOP);
        assertThat(Objects.requireNonNull(assessment.heldAfterStop()).unexplainedBytes())
                .isEqualTo(10760 * MIB);
    }

    // ---- leak across restarts

    @Test
    void memoryAtReadinessGrowingEveryCycleIsALeakWithItsGrowthPerCycleAndOwner() {
        List<RestartRecord> history = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            history.add(readyWith(RestartPath.PRELOAD_HIT, i, 1668 + 512L * i, 8836));
        }

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.active()).containsExactly(MemorySignal.LEAK_ACROSS_RESTARTS);
        MemoryAssessment.Drift drift = Objects.requireNonNull(assessment.drift());
        assertThat(drift.cycles()).isEqualTo(4);
        assertThat(drift.bytesPerCycle()).isEqualTo(512 * MIB);
        assertThat(drift.byOwnerBytesPerCycle())
                .containsEntry("preload_daemon", 512 * MIB)
                .containsEntry("engine", 0L);
    }

    @Test
    void sameMemoryEveryCycleOrNoiseIsNoLeak() {
        List<RestartRecord> history = new ArrayList<>();
        long[] noise = {0, 12, -8, 20, -15, 4};
        for (int i = 0; i < noise.length; i++) {
            history.add(readyWith(RestartPath.PRELOAD_HIT, i, 1668 + noise[i], 8836));
        }

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.active()).isEmpty();
        assertThat(Math.abs(Objects.requireNonNull(assessment.drift()).bytesPerCycle()))
                .isLessThan(8 * MIB);
    }

    @Test
    void cyclesOfOtherPathsAreNotComparedAndTooFewCyclesTellNothing() {
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.COLD, 0, 0, 10000),
                readyWith(RestartPath.PRELOAD_HIT, 1, 1668, 8836),
                readyWith(RestartPath.COLD, 2, 0, 11000),
                readyWith(RestartPath.PRELOAD_HIT, 3, 1668, 8836));

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.drift()).isNull();
        assertThat(assessment.active()).isEmpty();
    }

    @Test
    void aStartReadygateDidNotSeeBeginIsNoCycleOfTheLeak() {
        // Two cycles, then readygate restarted twice beside the same engine, which had grown meanwhile: the first-seen
        // records are readings of that engine at readygate's start, not at its readiness after a restart.
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 8836),
                readyWith(RestartPath.PRELOAD_HIT, 1, 1668, 8836),
                firstSeen(readyWith(RestartPath.PRELOAD_HIT, 2, 1668 + 512, 8836)),
                firstSeen(readyWith(RestartPath.PRELOAD_HIT, 3, 1668 + 1024, 8836)));

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.drift()).as("two comparable cycles are too few").isNull();
        assertThat(assessment.active()).doesNotContain(MemorySignal.LEAK_ACROSS_RESTARTS);
    }

    static RestartRecord firstSeen(RestartRecord r) {
        return TestRecords.from(r)
                .firstSeen(true)
                .readinessLatency(null)
                .readinessLatencyBound(null)
                .recovery(Recovery.UNKNOWN)
                .stop(null)
                .snapshotMismatches(List.of())
                .build();
    }

    // ---- stale cache

    @Test
    void afterARevisionSwitchTheDaemonStillHoldingTheOldWeightsIsAStaleCache() {
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 8836),
                readyWith(RestartPath.PRELOAD_HIT, 1, 1668, 8836),
                revision(readyWith(RestartPath.PRELOAD_FALLBACK, 2, 1668, 8836 + 1147), "v2"));

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.active()).containsExactly(MemorySignal.STALE_CACHE);
        MemoryAssessment.StaleCache stale = Objects.requireNonNull(assessment.staleCache());
        assertThat(stale.previousCheckpoint()).endsWith("@main");
        assertThat(stale.checkpoint()).endsWith("@v2");
        assertThat(stale.servingBytes()).isZero();
        // Learned from the hits before the switch: the daemon held 1668 MiB for 1.12 GiB of weights.
        assertThat(stale.overheadBytes()).isEqualTo(1668 * MIB - Math.round(1.12 * 1024 * MIB));
        assertThat(stale.staleBytes()).isEqualTo(Math.round(1.12 * 1024 * MIB));
    }

    @Test
    void theStaleCacheClearsWhenTheDaemonServesTheNewRevisionOnly() {
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 8836),
                revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836 + 1147), "v2"),
                revision(readyWith(RestartPath.PRELOAD_HIT, 2, 1668, 8836), "v2"));

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.active()).isEmpty();
        assertThat(Objects.requireNonNull(assessment.staleCache()).staleBytes()).isZero();
    }

    @Test
    void aLaterReadingWhereTheDaemonLetGoClearsTheStaleCache() {
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 8836),
                revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836 + 1147), "v2"));
        MemoryMoment live = new MemoryMoment(
                T0.plusSeconds(3600),
                (8836 + 1147) * MIB,
                Map.of(Owner.ENGINE, (8836 + 1147) * MIB),
                List.of(new MemoryMoment.Holder(7001, Owner.ENGINE, (8836 + 1147) * MIB)));

        assertThat(MemorySignals.assess(history, null, null, SETTINGS).active())
                .containsExactly(MemorySignal.STALE_CACHE);
        assertThat(MemorySignals.assess(history, live, null, SETTINGS).active()).isEmpty();
    }

    @Test
    void aDaemonServingTheSameCheckpointEveryCycleIsNoStaleCache() {
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 8836), readyWith(RestartPath.PRELOAD_HIT, 1, 1668, 8836));

        assertThat(MemorySignals.assess(history, null, null, SETTINGS).staleCache())
                .isNull();
    }

    @Test
    void aStartWhoseRevisionIsUnknownIsNoCheckpointSwitch() {
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688),
                revision(readyWith(RestartPath.SNAPSHOT_RESTORE, 1, 1668, 8836), null),
                readyWith(RestartPath.PRELOAD_FALLBACK, 2, 1668, 8836));

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.staleCache()).isNull();
        assertThat(MemorySignals.assess(history.subList(0, 2), null, null, SETTINGS)
                        .staleCache())
                .isNull();
    }

    @Test
    void aRollbackToTheRevisionTheDaemonStillHoldsIsNoStaleCache() {
        RestartRecord hit = readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688);
        RestartRecord rollout = mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836), "v2"));
        RestartRecord rollback = readyWith(RestartPath.COLD, 2, 1668, 8836);
        RestartRecord unreachable = fallback(
                readyWith(RestartPath.PRELOAD_FALLBACK, 3, 1668, 8836),
                "Cannot connect to weight cache daemon at /tmp/vllm_weight_cache_gpu0.sock: [Errno 111]");

        MemoryAssessment afterRollout = MemorySignals.assess(List.of(hit, rollout), null, null, SETTINGS);
        MemoryAssessment afterRollback = MemorySignals.assess(List.of(hit, rollout, rollback), null, null, SETTINGS);
        MemoryAssessment afterFallback =
                MemorySignals.assess(List.of(hit, rollout, rollback, unreachable), null, null, SETTINGS);

        assertThat(afterRollout.active()).containsExactly(MemorySignal.STALE_CACHE);
        MemoryAssessment.StaleCache stale = Objects.requireNonNull(afterRollout.staleCache());
        assertThat(stale.daemonCheckpoint()).endsWith("@main");
        assertThat(stale.previousCheckpoint()).endsWith("@main");
        assertThat(stale.evidence()).startsWith("a preload hit for ").contains("@main");
        // The daemon never let go of main: the engine is back on what the daemon holds.
        assertThat(afterRollback.active()).isEmpty();
        MemoryAssessment.StaleCache back = Objects.requireNonNull(afterRollback.staleCache());
        assertThat(back.checkpoint()).endsWith("@main");
        assertThat(back.daemonCheckpoint()).endsWith("@main");
        assertThat(back.servingBytes()).isEqualTo(Math.round(1.12 * 1024 * MIB));
        assertThat(back.staleBytes()).isZero();
        // A daemon the engine could not reach holds what it held.
        assertThat(afterFallback.active()).isEmpty();
    }

    @Test
    void afterTheDaemonChangedOnlyALaterStartsLogShowsWhatItHolds() {
        // The demo's round: a rollout the daemon did not follow, the daemon re-caches it, a hit; a rollback the daemon
        // re-caches before the engine restarts cold; then a fallback (daemon unreachable) and a hit.
        RestartRecord hit = readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688);
        RestartRecord rollout = mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836), "v2"));
        RestartRecord hitV2 = revision(readyWith(RestartPath.PRELOAD_HIT, 2, 1668, 7688), "v2");
        RestartRecord rollback = readyWith(RestartPath.COLD, 3, 1668, 8836);
        RestartRecord unreachable = fallback(
                readyWith(RestartPath.PRELOAD_FALLBACK, 4, 1668, 8836),
                "Cannot connect to weight cache daemon at /tmp/vllm_weight_cache_gpu0.sock: [Errno 111]");
        RestartRecord hitMain = readyWith(RestartPath.PRELOAD_HIT, 5, 1668, 7688);
        List<RestartRecord> round = List.of(hit, rollout, hitV2, rollback, unreachable, hitMain);
        // The daemon went away and came back between the hit on v2 and the rollback's start.
        Instant recached = rollback.when().engineStart().minusSeconds(10);

        List<MemoryAssessment> assessments = new ArrayList<>();
        for (int i = 1; i <= round.size(); i++) {
            List<RestartRecord> history = round.subList(0, i);
            DaemonSightings seen = new DaemonSightings(ids(history), i > 3 ? recached : null);
            assessments.add(MemorySignals.assess(history, seen, null, null, SETTINGS));
        }

        assertThat(assessments.stream().map(MemoryAssessment::active))
                .containsExactly(Set.of(), Set.of(MemorySignal.STALE_CACHE), Set.of(), Set.of(), Set.of(), Set.of());
        // Nothing this process saw since the daemon came back says what it holds: nothing to report.
        assertThat(assessments.get(3).staleCache()).isNull();
        assertThat(assessments.get(4).staleCache()).isNull();
        assertThat(Objects.requireNonNull(assessments.get(5).staleCache()).daemonCheckpoint())
                .endsWith("@main");
        // Had the daemon not changed, the rollback would have left it holding v2: that is a stale cache.
        assertThat(MemorySignals.assess(round.subList(0, 4), null, null, SETTINGS)
                        .active())
                .containsExactly(MemorySignal.STALE_CACHE);
        assertThat(Objects.requireNonNull(MemorySignals.assess(round.subList(0, 4), null, null, SETTINGS)
                                .staleCache())
                        .daemonCheckpoint())
                .endsWith("@v2");
    }

    @Test
    void aPreviousRunsStartsSayNothingAboutWhatTheDaemonHoldsNow() {
        // A previous run ended on v2 with the daemon caching it; this process starts cold on main.
        List<RestartRecord> previousRun = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688),
                mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836), "v2")),
                revision(readyWith(RestartPath.PRELOAD_HIT, 2, 1668, 7688), "v2"));
        RestartRecord cold = readyWith(RestartPath.COLD, 10, 1668, 8836);
        RestartRecord hit = readyWith(RestartPath.PRELOAD_HIT, 11, 1668, 7688);
        RestartRecord rollout = mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 12, 1668, 8836), "v2"));
        List<RestartRecord> history = new ArrayList<>(previousRun);

        history.add(cold);
        MemoryAssessment atFirstStart =
                MemorySignals.assess(history, new DaemonSightings(ids(List.of(cold)), null), null, null, SETTINGS);
        history.add(hit);
        MemoryAssessment afterHit =
                MemorySignals.assess(history, new DaemonSightings(ids(List.of(cold, hit)), null), null, null, SETTINGS);
        history.add(rollout);
        MemoryAssessment afterRollout = MemorySignals.assess(
                history, new DaemonSightings(ids(List.of(cold, hit, rollout)), null), null, null, SETTINGS);

        assertThat(atFirstStart.active()).isEmpty();
        assertThat(atFirstStart.staleCache()).isNull();
        // The switch from v2 is the previous run's: this run saw none.
        assertThat(afterHit.active()).isEmpty();
        assertThat(afterHit.staleCache()).isNull();
        // This run's own rollout is still caught.
        assertThat(afterRollout.active()).containsExactly(MemorySignal.STALE_CACHE);
        assertThat(Objects.requireNonNull(afterRollout.staleCache()).previousCheckpoint())
                .endsWith("@main");
    }

    /**
     * The demo's wrong weights: the daemon re-caches a fine-tune of the same layout, the next hit maps it and its
     * canary mismatches. The daemon is then known not to hold the checkpoint the engine served, but that is wrong
     * weights (the canary's), not weights left over from a checkpoint switch: no stale cache, whatever the last ready
     * start was.
     */
    @Test
    void aHitThatServedAnotherCheckpointsWeightsIsNoStaleCache() {
        List<RestartRecord> history = List.of(
                readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 8836),
                readyWith(RestartPath.PRELOAD_HIT, 1, 1668, 8836),
                wrongWeights(readyWith(RestartPath.PRELOAD_HIT, 2, 1668, 8836)));

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.active()).doesNotContain(MemorySignal.STALE_CACHE);
        assertThat(assessment.staleCache()).isNull();
    }

    @Test
    void aFingerprintMismatchShowsTheDaemonHoldsAnotherCheckpointEvenWithoutAnEarlierHit() {
        RestartRecord rollout = mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 0, 1668, 8836), "v2"));

        MemoryAssessment assessment = MemorySignals.assess(List.of(rollout), null, null, SETTINGS);

        assertThat(assessment.active()).containsExactly(MemorySignal.STALE_CACHE);
        MemoryAssessment.StaleCache stale = Objects.requireNonNull(assessment.staleCache());
        assertThat(stale.daemonCheckpoint()).isNull();
        assertThat(stale.previousCheckpoint()).isEqualTo("another checkpoint");
        assertThat(stale.evidence()).startsWith("a fingerprint mismatch for ").contains("['revision']");
        // The configured overhead (1 GB) when no hit showed the daemon's own.
        assertThat(stale.staleBytes())
                .isEqualTo(1668 * MIB - DataSize.ofGigabytes(1).toBytes());
    }

    // ---- KV cache

    @Test
    void kvCacheSmallerThanAnEarlierCycleOfTheSameConfigurationIsShrinking() {
        List<RestartRecord> history = List.of(
                kv(readyWith(RestartPath.COLD, 0, 0, 9984), 76_000L),
                kv(readyWith(RestartPath.PRELOAD_HIT, 1, 1668, 8836), 76_000L),
                kv(readyWith(RestartPath.PRELOAD_HIT, 2, 1668, 8836), 71_000L));

        MemoryAssessment assessment = MemorySignals.assess(history, null, null, SETTINGS);

        assertThat(assessment.active()).containsExactly(MemorySignal.KV_CACHE_SHRINKING);
        assertThat(Objects.requireNonNull(assessment.kvCache()).tokens()).containsExactly(76_000L, 76_000L, 71_000L);
    }

    @Test
    void kvCacheOfTheSameSizeOrWithinTheFractionIsNotShrinking() {
        List<RestartRecord> history = List.of(
                kv(readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 8836), 76_000L),
                kv(readyWith(RestartPath.PRELOAD_HIT, 1, 1668, 8836), 75_800L));

        assertThat(MemorySignals.assess(history, null, null, SETTINGS).active()).isEmpty();
    }

    // ---- helpers

    /** A moment read through the real monitor: the capture parsed, each process attributed from its command line. */
    MemoryMoment moment(String capture) {
        String xml = resource("/nvidia-smi-h200/" + capture);
        GpuMemorySource source = new GpuMemorySource() {
            @Override
            public String name() {
                return "nvidia_smi";
            }

            @Override
            public Mono<GpuReading> read() {
                return Mono.just(NvidiaSmiParser.parseXml(xml, T0));
            }
        };
        GpuMemoryMonitor monitor = new GpuMemoryMonitor(
                List.of(source),
                Duration.ofSeconds(10),
                proc,
                Clock.fixed(T0, ZoneOffset.UTC),
                Schedulers.immediate(),
                Schedulers.immediate(),
                view -> {});
        GpuMemoryView view = Objects.requireNonNull(monitor.readNow().block());
        return Objects.requireNonNull(view.moment());
    }

    void cmdline(int pid, String... args) throws IOException {
        Files.createDirectories(proc.resolve(String.valueOf(pid)));
        Files.writeString(proc.resolve(pid + "/cmdline"), String.join("\0", args) + "\0");
    }

    static String resource(String path) {
        try (InputStream in = MemorySignalsTests.class.getResourceAsStream(path)) {
            return new String(Objects.requireNonNull(in, path).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A ready cycle whose readiness reading shows the daemon and engine holding so many MiB. */
    static RestartRecord readyWith(RestartPath path, int cycle, long daemonMib, long engineMib) {
        List<MemoryMoment.Holder> holders = new ArrayList<>();
        if (daemonMib > 0) {
            holders.add(new MemoryMoment.Holder(500, Owner.PRELOAD_DAEMON, daemonMib * MIB));
        }
        holders.add(new MemoryMoment.Holder(1000 + cycle, Owner.ENGINE, engineMib * MIB));
        MemoryMoment atReady = new MemoryMoment(
                T0.plusSeconds(60L * cycle + 30),
                (daemonMib + engineMib) * MIB,
                daemonMib > 0
                        ? Map.of(Owner.PRELOAD_DAEMON, daemonMib * MIB, Owner.ENGINE, engineMib * MIB)
                        : Map.of(Owner.ENGINE, engineMib * MIB),
                holders);
        return record(path, cycle, new CycleMemory(null, atReady, null));
    }

    static RestartRecord record(RestartPath path, int cycle, CycleMemory memory) {
        Map<String, Double> logged = path == RestartPath.PRELOAD_HIT
                ? Map.of("weights_held_outside_gib", 1.12)
                : Map.of("model_loading_gib", 1.12);
        return TestRecords.record("start-" + cycle)
                .engineStart(T0.plusSeconds(60L * cycle))
                .engineStartSource(StartSource.PROCESS_START_TIME)
                .path(path)
                .loggedDurations(logged)
                .outcome(Outcome.READY)
                .readinessLatency(Duration.ofSeconds(20))
                .vllmVersion("0.31.0")
                .engineArgs("{'model': 'Qwen/Qwen3-0.6B'}")
                .model("Qwen/Qwen3-0.6B")
                .modelRoot("Qwen/Qwen3-0.6B")
                .revision("main")
                .maxModelLen(4096)
                .probeConfigHash("h")
                .readygateVersion("dev")
                .node(Map.of("gpu_uuid", "GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da"))
                .memory(memory)
                .build();
    }

    static Set<String> ids(List<RestartRecord> records) {
        Set<String> ids = new HashSet<>();
        records.forEach(record -> ids.add(record.id()));
        return ids;
    }

    /** The start fell back because the daemon holds another revision (vLLM's fingerprint includes it). */
    static RestartRecord mismatch(RestartRecord r) {
        return fallback(r, "WeightCacheKey mismatch on fields: ['revision']");
    }

    /** A preload hit whose canary mismatched: the cache served another checkpoint's weights; never ready. */
    static RestartRecord wrongWeights(RestartRecord r) {
        return copy(
                r,
                r.engine().revision(),
                r.engine().kvCacheSizeTokens(),
                r.pathEvidence().fallbackReason(),
                true);
    }

    static RestartRecord fallback(RestartRecord r, String reason) {
        return copy(r, r.engine().revision(), r.engine().kvCacheSizeTokens(), reason);
    }

    static RestartRecord revision(RestartRecord r, @Nullable String revision) {
        return copy(r, revision, r.engine().kvCacheSizeTokens());
    }

    static RestartRecord kv(RestartRecord r, @Nullable Long tokens) {
        return copy(r, r.engine().revision(), tokens);
    }

    static RestartRecord copy(RestartRecord r, @Nullable String revision, @Nullable Long tokens) {
        return copy(r, revision, tokens, r.pathEvidence().fallbackReason());
    }

    static RestartRecord copy(
            RestartRecord r, @Nullable String revision, @Nullable Long tokens, @Nullable String fallbackReason) {
        return copy(r, revision, tokens, fallbackReason, false);
    }

    /** A copy; {@code wrongWeights}: the canary mismatched on weights from the cache, and the start was never ready. */
    static RestartRecord copy(
            RestartRecord r,
            @Nullable String revision,
            @Nullable Long tokens,
            @Nullable String fallbackReason,
            boolean wrongWeights) {
        return TestRecords.from(r)
                .fallbackReason(fallbackReason)
                .wrongWeightsFromCache(wrongWeights || r.pathEvidence().wrongWeightsFromCache())
                .outcome(wrongWeights ? Outcome.NOT_READY : r.verdict().outcome())
                .notReadyReason(wrongWeights ? "canary_mismatch" : r.verdict().notReadyReason())
                .startFailure(wrongWeights ? null : r.verdict().startFailure())
                .readinessLatency(wrongWeights ? null : r.verdict().readinessLatency())
                .readinessLatencyBound(null)
                .revision(revision)
                .kvCacheSizeTokens(tokens)
                .recovery(Recovery.UNKNOWN)
                .stop(null)
                .snapshotMismatches(List.of())
                .build();
    }
}
