package dev.readygate.restart;

import static dev.readygate.restart.RestartHistoryTests.START;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.util.unit.DataSize;
import tools.jackson.databind.json.JsonMapper;

/**
 * The history's line format, held to a file written before the record was nested: {@code restarts-c00a43b.jsonl}
 * was written by {@link RestartHistory} at commit c00a43b (the flat record with its 25-, 28- and 29-argument
 * constructors and its hand-written reader and writer), from the records {@link #writtenAtC00a43b()} builds.
 */
class RecordJsonTests {

    static final String FIXTURE = "/restarts/restarts-c00a43b.jsonl";

    final JsonMapper json = JsonMapper.builder().build();

    @TempDir
    Path stateDir;

    static List<String> fixtureLines() throws IOException {
        try (InputStream in = Objects.requireNonNull(RecordJsonTests.class.getResourceAsStream(FIXTURE), FIXTURE)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }

    /** What the fixture's history holds: the last line of each id, in the order of its first (RestartHistory). */
    static List<RestartRecord> writtenAtC00a43b() {
        return List.of(
                RestartHistoryTests.full("full-1"),
                RestartHistoryTests.full("minimal-2"),
                RestartHistoryTests.failed(
                        "failed-3", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."),
                TestRecords.record("bound-4")
                        .engineStart(START.plusSeconds(3600))
                        .engineStartSource(StartSource.OBSERVED_DOWN)
                        .path(RestartPath.SNAPSHOT_RESTORE)
                        .evidence(List.of("log: restoring snapshot"))
                        .phases(Map.of(
                                Phase.ENGINE_START, START.plusSeconds(3600),
                                Phase.READY, START.plusSeconds(3612),
                                Phase.HEALTH_OK, START.plusSeconds(3612)))
                        // The NaN was not written: a non-finite number is not JSON.
                        .loggedDurations(Map.of("engine_init", 3.5, "available_kv_cache_gib", 20.25))
                        .outcome(Outcome.READY)
                        .readinessLatency(Duration.ofSeconds(12))
                        .readinessLatencyBound(true)
                        .vllmVersion("0.31.1")
                        .engineArgs("{'model': 'm', 'api_key': 'sk-secretvalue'}")
                        .model("m")
                        .modelRoot("org/m")
                        .maxModelLen(8192)
                        .kvCacheSizeTokens(42L)
                        .probeConfigHash("h2")
                        .readygateVersion("0.2.0")
                        .node(Map.of("pod_uid", "uid-1", "boot_id", "b-2", "cuda_version", "12.8"))
                        .memory(new CycleMemory(
                                null,
                                null,
                                new MemoryMoment(
                                        START.plusSeconds(4000),
                                        1024L,
                                        Map.of(Owner.OTHER, 1024L),
                                        List.of(new MemoryMoment.Holder(7, Owner.OTHER, 1024L)))))
                        .stop(new Stop(START.plusSeconds(4000), Stop.How.REPLACED, null, null, null))
                        .snapshotMismatches(List.of(
                                new SnapshotMismatch(SnapshotMismatch.Field.GPU_UUID, "a", "b"),
                                new SnapshotMismatch(SnapshotMismatch.Field.VLLM_VERSION, "c", "d")))
                        .build(),
                TestRecords.record("firstseen-5")
                        .engineStart(START.plusSeconds(7200))
                        .engineStartSource(StartSource.FIRST_OBSERVED)
                        .firstSeen(true)
                        .phases(Map.of(Phase.READY, START.plusSeconds(7200)))
                        .outcome(Outcome.UNKNOWN)
                        .notReadyReason("engine_not_ready")
                        .probeConfigHash("h")
                        .readygateVersion("0.1.0")
                        .build(),
                TestRecords.record("latencybound-6")
                        .engineStart(START.plusSeconds(9000))
                        .engineStartSource(StartSource.LOG)
                        .path(RestartPath.COLD)
                        .outcome(Outcome.READY)
                        .readinessLatency(Duration.ofMillis(61_234))
                        .readinessLatencyBound(true)
                        .probeConfigHash("h")
                        .readygateVersion("0.1.0")
                        .build(),
                // A clock that stepped back: phases out of their order in time.
                TestRecords.record("skewed-7")
                        .engineStart(START.plusSeconds(10_000))
                        .engineStartSource(StartSource.PROCESS_START_TIME)
                        .path(RestartPath.PRELOAD_HIT)
                        .evidence(List.of("daemon: /health 200"))
                        .phases(Map.of(
                                Phase.ENGINE_START, START.plusSeconds(10_000),
                                Phase.PORT_LISTENING, START.plusSeconds(10_020),
                                Phase.HEALTH_OK, START.plusSeconds(10_010),
                                Phase.READY, START.plusSeconds(9_990)))
                        .loggedDurations(Map.of("weights_held_outside_gib", 1.12, "engine_init", 2.0))
                        .outcome(Outcome.READY)
                        .readinessLatency(Duration.ofMillis(-10_000))
                        .vllmVersion("0.31.0")
                        .model("m")
                        .modelRoot("m")
                        .revision("main")
                        .maxModelLen(4096)
                        .probeConfigHash("h")
                        .readygateVersion("0.1.0")
                        .node(Map.of(
                                "node_name",
                                "n",
                                "gpu_name",
                                "NVIDIA H200",
                                "engine_container",
                                "vllm",
                                "boot_id",
                                "b"))
                        .memory(new CycleMemory(
                                new MemoryMoment(
                                        START.plusSeconds(9_999),
                                        3000L,
                                        Map.of(Owner.PRELOAD_DAEMON, 1000L, Owner.ENGINE, 1500L, Owner.OTHER, 500L),
                                        List.of(
                                                new MemoryMoment.Holder(9, Owner.ENGINE, 1500L),
                                                new MemoryMoment.Holder(3, Owner.PRELOAD_DAEMON, 1000L))),
                                null,
                                null))
                        .recovery(new Recovery(RecoveryKind.CONTAINER_RESTARTED, List.of("boot_id a → b")))
                        .stop(new Stop(
                                START.plusSeconds(11_000), Stop.How.WENT_AWAY, 0.0, 2.5, START.plusSeconds(10_999)))
                        .build());
    }

    @Test
    void aHistoryWrittenBeforeTheRecordWasNestedLoadsAsTheRecordsItWasWrittenFrom() throws IOException {
        Path file = stateDir.resolve(RestartHistory.FILE_NAME);
        Files.write(file, fixtureLines());

        List<RestartRecord> loaded = new RestartHistory(file, DataSize.ofMegabytes(1), 3, json).load();

        assertThat(loaded).containsExactlyElementsOf(writtenAtC00a43b());
        assertThat(loaded.get(3).engine().engineArgs()).doesNotContain("sk-secretvalue");
    }

    @Test
    void everyLineWrittenBeforeTheRecordWasNestedIsWrittenAgainByteForByte() throws IOException {
        assertThat(fixtureLines())
                .hasSize(8)
                .allSatisfy(line -> assertThat(json.writeValueAsString(
                                RecordJson.write(RecordJson.read(json.readTree(line)), json.getNodeFactory())))
                        .isEqualTo(line));
    }

    @Test
    void everyRecordReadsBackEqualFromWhatIsWrittenOfIt() {
        List<RestartRecord> records = new java.util.ArrayList<>(writtenAtC00a43b());
        records.add(RestartHistoryTests.minimal("minimal"));
        records.add(TestRecords.record("defaults").build());
        // The gateway's count of a drain (issue 27, item 5): written and read back.
        records.add(TestRecords.record("drained")
                .stop(new Stop(
                        START.plusSeconds(60),
                        Stop.How.POD_STOPPED,
                        3.0,
                        0.0,
                        START.plusSeconds(55),
                        new Stop.Traffic(3, 2, 1, 17)))
                .build());
        // A wake and the start that slept (issue 29): the sleep's level and when it began, written and read back.
        records.add(TestRecords.record("woke")
                .path(RestartPath.WAKE)
                .engineStartSource(StartSource.WAKE)
                .slept(new EngineStart.Slept(2, START.minusSeconds(600), START))
                .recovery(new Recovery(RecoveryKind.WOKE, List.of()))
                .readinessLatency(Duration.ofMillis(840))
                .build());
        records.add(TestRecords.record("slept")
                .stop(new Stop(START.plusSeconds(60), Stop.How.SLEPT, 0.0, 0.0, START.plusSeconds(59)))
                .build());

        assertThat(records)
                .allSatisfy(record -> assertThat(RecordJson.read(json.readTree(
                                json.writeValueAsString(RecordJson.write(record, json.getNodeFactory())))))
                        .isEqualTo(record));
    }

    @Test
    void aLineWithoutTheBoundTakesTheLatencyOfAStartTheEngineDidNotDateForOne() {
        String line = """
                {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"%s","path":"cold",\
                "outcome":"ready","readinessLatency":"PT12S","probeConfigHash":"h","readygateVersion":"v"}""";

        assertThat(RecordJson.read(json.readTree(line.formatted("log")))
                        .verdict()
                        .readinessLatencyBound())
                .isFalse();
        assertThat(RecordJson.read(json.readTree(line.formatted("observed_down")))
                        .verdict()
                        .readinessLatencyBound())
                .isTrue();
    }

    @Test
    void valuesALaterVersionKnowsReadAsThisVersionsFallbacks() {
        RestartRecord record = RecordJson.read(json.readTree("""
                {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"atomic_clock","path":"teleport",\
                "outcome":"exploded","probeConfigHash":"h","readygateVersion":"v",\
                "phases":{"engine_start":"2026-11-30T12:00:00Z","warp":"2026-11-30T12:00:01Z"},\
                "memory":{"atReady":{"at":"2026-11-30T12:00:02Z","usedBytes":3,"byOwner":{"x":1,"y":2},\
                "processes":[{"pid":1,"owner":"x","bytes":3}]}},\
                "recovery":{"kind":"moved_planet"},"stop":{"at":"2026-11-30T12:01:00Z","how":"vanished"},\
                "snapshotMismatches":[{"field":"moon_phase","manifest":"a","current":"b"}]}"""));

        assertThat(record.when().engineStartSource()).isEqualTo(StartSource.FIRST_OBSERVED);
        assertThat(record.pathEvidence().path()).isEqualTo(RestartPath.UNKNOWN);
        assertThat(record.verdict().outcome()).isEqualTo(Outcome.NOT_READY);
        assertThat(record.verdict().phases()).containsOnlyKeys(Phase.ENGINE_START);
        assertThat(Objects.requireNonNull(record.memory().atReady()).byOwner())
                .containsExactly(Map.entry(Owner.OTHER, 3L));
        assertThat(record.recovery()).isEqualTo(new Recovery(RecoveryKind.UNKNOWN, List.of()));
        assertThat(record.stop()).isEqualTo(new Stop(START.plusSeconds(60), Stop.How.WENT_AWAY, null, null, null));
        assertThat(record.snapshotMismatches()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            []                                                       | not a JSON object
            {"engineStart":"2026-11-30T12:00:00Z"}                   | no id
            {"id":"s"}                                               | no engineStart
            {"id":"s","engineStart":"SECRET"}                        | engineStart is not an ISO-8601 instant
            {"id":7,"engineStart":"2026-11-30T12:00:00Z"}            | id is not a string
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","maxModelLen":"4096"} | maxModelLen is not an integer
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","readinessLatency":"SECRET"} | readinessLatency is not an ISO-8601 duration
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","evidence":[1]} | evidence has an element that is not a string
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","phases":{"ready":"SECRET"}} | phases is not an ISO-8601 instant
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","memory":{"atReady":{"at":"2026-11-30T12:00:00Z"}}} | memory.atReady has no usedBytes
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","memory":{"atReady":{"at":"2026-11-30T12:00:00Z","usedBytes":1,"processes":[{"pid":1}]}}} | memory.atReady.processes has an incomplete process
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","stop":{"how":"went_away"}} | no at
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","stop":{"at":"2026-11-30T12:00:00Z","observedAt":"SECRET"}} | stop.observedAt is not an ISO-8601 instant
            {"id":"s","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"cold","outcome":"ready","probeConfigHash":"h","readygateVersion":"v","snapshotMismatches":[{"field":"gpu_uuid"}]} | no manifest
            """)
    void anInvalidLineIsRefusedNamingTheFieldNeverItsValue(String line, String message) {
        assertThatExceptionOfType(JsonSchema.InvalidRecordException.class)
                .isThrownBy(() -> RecordJson.read(json.readTree(line)))
                .withMessage(message);
    }
}
