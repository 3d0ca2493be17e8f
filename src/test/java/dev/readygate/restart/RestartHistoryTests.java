package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.readiness.StartSource;
import dev.readygate.statedir.Tmpfs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

@ExtendWith(OutputCaptureExtension.class)
class RestartHistoryTests {

    static final Instant START = Instant.parse("2026-11-30T12:00:00Z");

    @TempDir
    Path stateDir;

    final JsonMapper json = JsonMapper.builder().build();

    RestartHistory history() {
        return history(DataSize.ofMegabytes(1), 3);
    }

    RestartHistory history(DataSize maxFileSize, int maxRotatedFiles) {
        return new RestartHistory(stateDir.resolve(RestartHistory.FILE_NAME), maxFileSize, maxRotatedFiles, json);
    }

    Path file() {
        return stateDir.resolve(RestartHistory.FILE_NAME);
    }

    static RestartRecord full(String id) {
        return TestRecords.record(id)
                .engineStart(START)
                .engineStartSource(StartSource.PROCESS_START_TIME)
                .firstSeen(true)
                .path(RestartPath.PRELOAD_FALLBACK)
                .evidence(List.of("log: weight cache requested", "log: falling back to disk"))
                .fallbackReason("checkpoint \"Qwen/Qwen3-0.6B\" [rev main], not in cache")
                .wrongWeightsFromCache(true)
                .phases(Map.of(
                        Phase.ENGINE_START, START,
                        Phase.PORT_LISTENING, START.plusMillis(4_250),
                        Phase.HEALTH_OK, START.plusSeconds(31),
                        Phase.MODEL_LISTED, START.plusMillis(31_100),
                        Phase.REPRESENTATIVE_OK, START.plusMillis(33_000),
                        Phase.CANARY_OK, START.plusNanos(33_500_000_001L),
                        Phase.READY, START.plusMillis(33_600)))
                .loggedDurations(Map.of(
                        "weights_loading", 12.5, "model_loading", 14.25, "model_loading_gib", 1.12, "engine_init", 9.0))
                .outcome(Outcome.READY)
                .readinessLatency(Duration.ofMillis(33_600))
                .vllmVersion("0.31.0")
                .engineArgs("{'model': 'Qwen/Qwen3-0.6B', 'max_model_len': 4096, 'load_format': 'preload'}")
                .model("Qwen/Qwen3-0.6B")
                .modelRoot("/models/qwen3")
                .revision("main")
                .maxModelLen(4096)
                .kvCacheSizeTokens(123_456_789_012L)
                .probeConfigHash("9f86d081")
                .readygateVersion("0.1.0")
                .node(Map.of("node_name", "gpu-node-7", "gpu_uuid", "GPU-1234", "driver_version", "570.86.15"))
                .memory(new CycleMemory(
                        new MemoryMoment(
                                START.minusSeconds(1),
                                11_282_677_760L,
                                Map.of(Owner.PRELOAD_DAEMON, 11_282_677_760L),
                                List.of(new MemoryMoment.Holder(560, Owner.PRELOAD_DAEMON, 11_282_677_760L))),
                        new MemoryMoment(
                                START.plusMillis(33_600),
                                14_087_618_560L,
                                Map.of(Owner.PRELOAD_DAEMON, 11_282_677_760L, Owner.ENGINE, 2_789_212_160L),
                                List.of(
                                        new MemoryMoment.Holder(560, Owner.PRELOAD_DAEMON, 11_282_677_760L),
                                        new MemoryMoment.Holder(598, Owner.ENGINE, 2_789_212_160L))),
                        null))
                .recovery(new Recovery(
                        RecoveryKind.DRIVER_CHANGED,
                        List.of("driver_version 570.86.10 → 570.86.15", "boot_id b-1 → b-2")))
                .stop(new Stop(START.plusSeconds(600), Stop.How.WENT_AWAY, 3.0, 1.0, START.plusMillis(599_400)))
                .snapshotMismatches(
                        List.of(new SnapshotMismatch(SnapshotMismatch.Field.DRIVER_VERSION, "570.86.10", "570.86.15")))
                .build();
    }

    static RestartRecord minimal(String id) {
        return TestRecords.record(id)
                .engineStart(START)
                .engineStartSource(StartSource.OBSERVED_DOWN)
                .path(RestartPath.UNKNOWN)
                .outcome(Outcome.NOT_READY)
                .probeConfigHash("9f86d081")
                .readygateVersion("0.1.0")
                .build();
    }

    static RestartRecord withOutcome(RestartRecord record, Outcome outcome) {
        return TestRecords.from(record)
                .outcome(outcome)
                .readinessLatencyBound(null)
                .build();
    }

    static List<String> lines(Path path) throws IOException {
        return Files.readAllLines(path, StandardCharsets.UTF_8);
    }

    @Test
    void loadWhenNoFileReturnsNothing() {
        assertThat(history().load()).isEmpty();
    }

    @Test
    void appendWhenRecordIsFullyPopulatedLoadsItBackUnchanged() throws IOException {
        RestartRecord record = full("start-1");

        history().append(record);

        assertThat(history().load()).containsExactly(record);
        assertThat(lines(file())).hasSize(1);
    }

    /** A start that died before serving, with vLLM's reason. */
    static RestartRecord failed(String id, String reason) {
        return TestRecords.record(id)
                .engineStart(START)
                .engineStartSource(StartSource.LOG)
                .path(RestartPath.COLD)
                .evidence(List.of("log: Loading weights took 4.88 seconds (read from disk)"))
                .phases(Map.of(Phase.ENGINE_START, START))
                .loggedDurations(Map.of("weights_loading", 4.88))
                .outcome(Outcome.FAILED)
                .notReadyReason("start_failed")
                .startFailure(reason)
                .vllmVersion("0.31.0")
                .probeConfigHash("9f86d081")
                .readygateVersion("0.1.0")
                .build();
    }

    @Test
    void appendWhenStartFailedLoadsItsOutcomeAndVllmsReasonBack() throws IOException {
        RestartRecord failed =
                failed("start-1", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.");

        history().append(failed);

        assertThat(history().load()).containsExactly(failed);
        JsonNode line = json.readTree(lines(file()).getFirst());
        assertThat(line.get("outcome").asString()).isEqualTo("failed");
        assertThat(line.get("startFailure").asString()).startsWith("torch.OutOfMemoryError: CUDA out of memory.");
        assertThat(RestartRecordView.csv(List.of(failed)).lines().skip(1))
                .singleElement()
                .asString()
                .contains(
                        ",failed,start_failed,torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.,");
    }

    @Test
    void appendWhenRecordIsMinimalLoadsNullsAndEmptyCollections() {
        RestartRecord record = minimal("start-1");

        history().append(record);

        assertThat(history().load()).singleElement().satisfies(loaded -> {
            assertThat(loaded).isEqualTo(record);
            assertThat(loaded.verdict().readinessLatency()).isNull();
            assertThat(loaded.verdict().phases()).isEmpty();
            assertThat(loaded.node()).isEmpty();
        });
    }

    /**
     * A line written before readygate said whether a latency is a bound: one from a start the engine did not date
     * ({@code observed_down}, {@code first_observed}) was one all along, one from its process start time was not.
     */
    @Test
    void loadWhenLineSaysNothingOfABoundTakesTheLatencyOfAStartTheEngineDidNotDateForOne() throws IOException {
        history().append(full("start-1"));
        String line = lines(file()).getFirst();
        tools.jackson.databind.node.ObjectNode old = (tools.jackson.databind.node.ObjectNode) json.readTree(line);
        old.remove("readinessLatencyBound");
        Files.writeString(file(), json.writeValueAsString(old.put("id", "exact")) + "\n");
        Files.writeString(
                file(),
                json.writeValueAsString(old.put("id", "observed").put("engineStartSource", "observed_down")) + "\n",
                StandardOpenOption.APPEND);

        assertThat(history().load())
                .extracting(RestartRecord::id, record -> record.verdict().readinessLatencyBound())
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("exact", false),
                        org.assertj.core.groups.Tuple.tuple("observed", true));
    }

    @Test
    void appendWritesStableCamelCaseFieldsWithIsoTimesAndPathValue() throws IOException {
        history().append(full("start-1"));

        JsonNode line = json.readTree(lines(file()).getFirst());

        assertThat(line.properties().stream().map(Map.Entry::getKey))
                .containsExactly(
                        "id",
                        "engineStart",
                        "engineStartSource",
                        "firstSeen",
                        "comparable",
                        "path",
                        "evidence",
                        "fallbackReason",
                        "wrongWeightsFromCache",
                        "phases",
                        "loggedDurations",
                        "outcome",
                        "notReadyReason",
                        "startFailure",
                        "readinessLatency",
                        "readinessLatencyBound",
                        "vllmVersion",
                        "engineArgs",
                        "model",
                        "modelRoot",
                        "revision",
                        "maxModelLen",
                        "kvCacheSizeTokens",
                        "probeConfigHash",
                        "readygateVersion",
                        "node",
                        "memory",
                        "recovery",
                        "stop",
                        "snapshotMismatches");
        assertThat(line.at("/memory/beforeStart/usedBytes").asLong()).isEqualTo(11_282_677_760L);
        assertThat(line.at("/memory/atReady/byOwner/engine").asLong()).isEqualTo(2_789_212_160L);
        assertThat(line.at("/memory/atReady/processes/1/pid").asInt()).isEqualTo(598);
        assertThat(line.at("/memory/afterStop").isNull()).isTrue();
        assertThat(line.get("engineStart").asString()).isEqualTo("2026-11-30T12:00:00Z");
        assertThat(line.get("readinessLatency").asString()).isEqualTo("PT33.6S");
        assertThat(line.get("path").asString()).isEqualTo("preload_fallback");
        assertThat(line.get("notReadyReason").isNull()).isTrue();
        assertThat(line.get("startFailure").isNull()).isTrue();
        assertThat(line.get("phases").properties().stream().map(Map.Entry::getKey))
                .containsExactly(
                        "engine_start",
                        "port_listening",
                        "health_ok",
                        "model_listed",
                        "representative_ok",
                        "canary_ok",
                        "ready");
    }

    @Test
    void appendWhenMapperIndentsStillWritesOneLinePerRecord() throws IOException {
        JsonMapper indenting =
                JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
        RestartHistory history = new RestartHistory(file(), DataSize.ofMegabytes(1), 3, indenting);

        history.append(full("start-1"));
        history.append(minimal("start-2"));

        assertThat(lines(file())).hasSize(2);
        assertThat(history.load()).containsExactly(full("start-1"), minimal("start-2"));
    }

    @Test
    void appendWhenSeveralRecordsLoadsThemInOrder() {
        RestartHistory history = history();
        List<RestartRecord> records = List.of(full("a"), minimal("b"), full("c"), minimal("d"));

        records.forEach(history::append);

        assertThat(history.load()).containsExactlyElementsOf(records);
    }

    @Test
    void appendWhenSameIdAppendedTwiceKeepsLastVersionInFirstPosition() throws IOException {
        RestartHistory history = history();
        RestartRecord inProgress = withOutcome(minimal("start-1"), Outcome.NOT_READY);
        RestartRecord ended = full("start-1");

        history.append(inProgress);
        history.append(minimal("start-2"));
        history.append(ended);

        assertThat(history.load()).containsExactly(ended, minimal("start-2"));
        assertThat(lines(file())).hasSize(3);
    }

    @Test
    void appendWhenDirectoryIsMissingCreatesIt() {
        Path nested = stateDir.resolve("a/b").resolve(RestartHistory.FILE_NAME);
        RestartHistory history = new RestartHistory(nested, DataSize.ofMegabytes(1), 3, json);

        history.append(minimal("start-1"));

        assertThat(nested).exists();
        assertThat(history.load()).containsExactly(minimal("start-1"));
    }

    @Test
    void loadWhenLastLineIsTornSkipsItAndNextAppendStartsOnNewLine(CapturedOutput output) throws IOException {
        RestartHistory history = history();
        history.append(full("start-1"));
        String whole = json.writeValueAsString(new RestartRecordView(full("start-2")).json(json));
        Files.writeString(file(), whole.substring(0, whole.length() / 2), StandardOpenOption.APPEND);

        assertThat(history.load()).containsExactly(full("start-1"));
        assertThat(output).contains("line 2 (not JSON)").contains(file().toString());

        history.append(minimal("start-3"));

        List<String> lines = lines(file());
        assertThat(lines).hasSize(3);
        assertThat(lines.get(1)).isEqualTo(whole.substring(0, whole.length() / 2));
        assertThat(history.load()).containsExactly(full("start-1"), minimal("start-3"));
    }

    @Test
    void loadWhenGarbageLineInMiddleSkipsItWithOneWarningNamingFileAndLine(CapturedOutput output) throws IOException {
        RestartHistory history = history();
        history.append(full("start-1"));
        Files.writeString(file(), "SECRET-GARBAGE {\"id\": 42}\n", StandardOpenOption.APPEND);
        Files.writeString(file(), "{\"id\":\"SECRET-ID\"}\n", StandardOpenOption.APPEND);
        history.append(minimal("start-2"));

        assertThat(history.load()).containsExactly(full("start-1"), minimal("start-2"));

        String warnings = output.getOut() + output.getErr();
        assertThat(warnings.lines().filter(line -> line.contains("WARN")))
                .singleElement()
                .asString()
                .contains(file().toString())
                .contains("Skipped 2 invalid line(s)")
                .contains("line 2 (not JSON)")
                .contains("line 3 (no engineStart)")
                .doesNotContain("SECRET");
    }

    @Test
    void loadWhenSameInvalidLineIsLoadedAgainWarnsOnce(CapturedOutput output) throws IOException {
        RestartHistory history = history();
        history.append(full("start-1"));
        Files.writeString(file(), "{\"id\":", StandardOpenOption.APPEND);

        history.load();
        history.load();

        assertThat(output.getOut().lines().filter(line -> line.contains("WARN")))
                .singleElement()
                .asString()
                .contains("line 2 (not JSON)");
    }

    @Test
    void loadWhenFieldsAreUnknownOrOptionalOnesMissingIgnoresAndDefaultsThem() throws IOException {
        Files.writeString(file(), """
                {"id":"s1","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"preload_hit",\
                "outcome":"ready","probeConfigHash":"h","readygateVersion":"9.9.9","gpuTemperature":71,\
                "future":{"nested":[1,2]}}
                {"id":"s2","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","path":"preload_partial",\
                "outcome":"ready","probeConfigHash":"h","readygateVersion":"9.9.9"}
                """);

        List<RestartRecord> records = history().load();

        assertThat(records).hasSize(2);
        assertThat(records.getFirst())
                .isEqualTo(TestRecords.record("s1")
                        .engineStart(START)
                        .engineStartSource(StartSource.LOG)
                        .path(RestartPath.PRELOAD_HIT)
                        .outcome(Outcome.READY)
                        .probeConfigHash("h")
                        .readygateVersion("9.9.9")
                        .build());
        assertThat(records.get(1).pathEvidence().path()).isEqualTo(RestartPath.UNKNOWN);
    }

    @Test
    void appendWhenFileWouldExceedMaxSizeRotatesKeepingAtMostMaxRotatedFiles() throws IOException {
        long lineSize = lineSize(minimal("start-00"));
        RestartHistory history = history(DataSize.ofBytes(2 * lineSize + 1), 2);
        List<RestartRecord> records = IntStream.range(0, 10)
                .mapToObj(i -> minimal("start-%02d".formatted(i)))
                .toList();

        records.forEach(history::append);

        assertThat(stateDir.resolve(RestartHistory.FILE_NAME + ".1")).exists();
        assertThat(stateDir.resolve(RestartHistory.FILE_NAME + ".2")).exists();
        assertThat(stateDir.resolve(RestartHistory.FILE_NAME + ".3")).doesNotExist();
        try (Stream<Path> files = Files.list(stateDir)) {
            assertThat(files).hasSize(3);
        }
        assertThat(lines(file())).hasSize(2);
        assertThat(lines(stateDir.resolve(RestartHistory.FILE_NAME + ".2")))
                .first()
                .asString()
                .contains("start-04");
        assertThat(history.load()).containsExactlyElementsOf(records.subList(4, 10));
    }

    @Test
    void loadWhenNewInstanceOnSameFileLoadsEverythingAcrossRotatedFiles() {
        long lineSize = lineSize(minimal("start-00"));
        List<RestartRecord> records = IntStream.range(0, 5)
                .mapToObj(i -> minimal("start-%02d".formatted(i)))
                .toList();
        records.forEach(history(DataSize.ofBytes(2 * lineSize + 1), 5)::append);

        RestartHistory afterRestart = history(DataSize.ofBytes(2 * lineSize + 1), 5);

        assertThat(afterRestart.load()).containsExactlyElementsOf(records);
        afterRestart.append(full("start-05"));
        assertThat(history(DataSize.ofBytes(2 * lineSize + 1), 5).load())
                .hasSize(6)
                .last()
                .isEqualTo(full("start-05"));
    }

    @Test
    void appendWhenRecordIsLargerThanMaxSizeWritesItAloneInItsFile() {
        RestartHistory history = history(DataSize.ofBytes(10), 3);

        history.append(full("start-1"));
        history.append(full("start-2"));

        assertThat(history.load()).containsExactly(full("start-1"), full("start-2"));
        assertThat(stateDir.resolve(RestartHistory.FILE_NAME + ".1")).exists();
    }

    @Test
    void appendWhenNoRotatedFilesAreKeptStartsAnEmptyFile() {
        long lineSize = lineSize(minimal("start-00"));
        RestartHistory history = history(DataSize.ofBytes(lineSize), 0);

        history.append(minimal("start-00"));
        history.append(minimal("start-01"));

        assertThat(history.load()).containsExactly(minimal("start-01"));
        assertThat(stateDir.resolve(RestartHistory.FILE_NAME + ".1")).doesNotExist();
    }

    @Test
    void appendWhenEightThreadsAppendConcurrentlyLoadsEveryRecord(CapturedOutput output) throws Exception {
        RestartHistory history = history(DataSize.ofKilobytes(32), 100);
        List<Future<?>> appends = new ArrayList<>();
        try (ExecutorService threads = Executors.newFixedThreadPool(8)) {
            for (int thread = 0; thread < 8; thread++) {
                int t = thread;
                appends.add(threads.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        history.append(i % 2 == 0 ? full("t%d-%d".formatted(t, i)) : minimal("t%d-%d".formatted(t, i)));
                    }
                }));
            }
            for (Future<?> append : appends) {
                append.get();
            }
        }

        List<RestartRecord> loaded = history.load();

        assertThat(loaded).hasSize(400);
        assertThat(loaded.stream().map(RestartRecord::id).distinct()).hasSize(400);
        List<String> allLines = new ArrayList<>();
        try (Stream<Path> files = Files.list(stateDir)) {
            for (Path path : files.toList()) {
                allLines.addAll(lines(path));
            }
        }
        assertThat(allLines)
                .hasSize(400)
                .allSatisfy(
                        line -> assertThat(RecordJson.read(json.readTree(line))).isNotNull());
        assertThat(stateDir.resolve(RestartHistory.FILE_NAME + ".1")).exists();
        assertThat(output).doesNotContain("invalid line");
    }

    @Test
    void toCsvWhenFieldsHaveCommasQuotesAndBracketsQuotesThemPerRfc4180() {
        // The full record, with the engine's phases of issue 28 logged too.
        Map<String, Double> logged =
                new java.util.HashMap<>(full("start-1").verdict().loggedDurations());
        logged.putAll(Map.of(
                "download",
                69.52,
                "compilation",
                44.34,
                "compile",
                35.61,
                "graph_capture",
                12.0,
                "graph_capture_gib",
                0.62));
        RestartRecord full =
                TestRecords.from(full("start-1")).loggedDurations(logged).build();
        String csv = RestartRecordView.csv(List.of(full, minimal("start-2")));

        List<List<String>> rows = parseCsv(csv);
        assertThat(csv).endsWith("\r\n").contains("\"checkpoint \"\"Qwen/Qwen3-0.6B\"\" [rev main], not in cache\"");
        assertThat(rows).hasSize(3);
        assertThat(rows.getFirst())
                .containsExactly(
                        "id",
                        "engine_start",
                        "engine_start_source",
                        "first_seen",
                        "comparable",
                        "path",
                        "fallback_reason",
                        "wrong_weights_from_cache",
                        "outcome",
                        "not_ready_reason",
                        "start_failure",
                        "readiness_latency_seconds",
                        "readiness_latency_bound",
                        "engine_start_seconds",
                        "port_listening_seconds",
                        "health_ok_seconds",
                        "model_listed_seconds",
                        "representative_ok_seconds",
                        "canary_ok_seconds",
                        "ready_seconds",
                        "weights_loading_seconds",
                        "model_loading_seconds",
                        "model_loading_gib",
                        "engine_init_seconds",
                        "vllm_version",
                        "model",
                        "model_root",
                        "revision",
                        "max_model_len",
                        "kv_cache_size_tokens",
                        "gpu_memory_before_start_mib",
                        "gpu_memory_at_ready_mib",
                        "gpu_memory_after_stop_mib",
                        "engine_memory_at_ready_mib",
                        "preload_daemon_memory_at_ready_mib",
                        "probe_config_hash",
                        "readygate_version",
                        "node_name",
                        "gpu_uuid",
                        "driver_version",
                        "pod_uid",
                        "boot_id",
                        "engine_container",
                        "cuda_version",
                        "configuration",
                        "recovery",
                        "recovery_changes",
                        "stop",
                        "stop_at",
                        "requests_running_at_stop",
                        "requests_waiting_at_stop",
                        "requests_observed_at",
                        "snapshot_mismatches",
                        "evidence",
                        "engine_args",
                        "gateway_in_flight_at_stop",
                        "gateway_finished_after_stop",
                        "gateway_cut_at_stop",
                        "gateway_tokens_cut_at_stop",
                        "download_seconds",
                        "compile_cache_load_seconds",
                        "compile_seconds",
                        "compilation_seconds",
                        "graph_capture_seconds",
                        "graph_capture_gib",
                        "sleep_level",
                        "fell_asleep",
                        "asleep_seconds");
        assertThat(rows.get(1))
                .containsExactly(
                        "start-1",
                        "2026-11-30T12:00:00Z",
                        "process_start_time",
                        "true",
                        "false",
                        "preload_fallback",
                        "checkpoint \"Qwen/Qwen3-0.6B\" [rev main], not in cache",
                        "true",
                        "ready",
                        "",
                        "",
                        "33.6",
                        "false",
                        "0",
                        "4.25",
                        "31",
                        "31.1",
                        "33",
                        "33.500000001",
                        "33.6",
                        "12.5",
                        "14.25",
                        "1.12",
                        "9.0",
                        "0.31.0",
                        "Qwen/Qwen3-0.6B",
                        "/models/qwen3",
                        "main",
                        "4096",
                        "123456789012",
                        "10760",
                        "13435",
                        "",
                        "2660",
                        "10760",
                        "9f86d081",
                        "0.1.0",
                        "gpu-node-7",
                        "GPU-1234",
                        "570.86.15",
                        "",
                        "",
                        "",
                        "",
                        "e8f4a0fe",
                        "driver_changed",
                        "driver_version 570.86.10 → 570.86.15 | boot_id b-1 → b-2",
                        "went_away",
                        "2026-11-30T12:10:00Z",
                        "3.0",
                        "1.0",
                        "2026-11-30T12:09:59.400Z",
                        "driver_version: the snapshot was taken on 570.86.10, this engine runs on 570.86.15",
                        "log: weight cache requested | log: falling back to disk",
                        "{'model': 'Qwen/Qwen3-0.6B', 'max_model_len': 4096, 'load_format': 'preload'}",
                        "",
                        "",
                        "",
                        "",
                        "69.52",
                        "",
                        "35.61",
                        "44.34",
                        "12.0",
                        "0.62",
                        "",
                        "",
                        "");
        assertThat(rows.get(2)).hasSize(rows.getFirst().size()).contains("start-2", "not_ready", "unknown");
        assertThat(rows.get(2).get(10)).isEmpty();
        assertThat(rows.get(2).get(11)).isEmpty();
        assertThat(rows.get(2).get(12)).as("no latency, no bound").isEqualTo("false");
        assertThat(rows.get(2).subList(13, 23))
                .allSatisfy(field -> assertThat(field).isEmpty());
    }

    @Test
    void toCsvEndsWithTheGatewaysCountOfTheStop() {
        RestartRecord record = TestRecords.record("start-1")
                .engineStart(START)
                .stop(new Stop(
                        START.plusSeconds(60),
                        Stop.How.POD_STOPPED,
                        3.0,
                        0.0,
                        START.plusSeconds(59),
                        new Stop.Traffic(3, 2, 1, 41)))
                .build();

        List<List<String>> rows = parseCsv(RestartRecordView.csv(List.of(record)));

        int gateway = rows.getFirst().indexOf("gateway_in_flight_at_stop");
        assertThat(rows.get(1).subList(gateway, gateway + 4)).containsExactly("3", "2", "1", "41");
        // Only the engine's phases of issue 28 and a wake's sleep (issue 29) come after it, appended later.
        assertThat(rows.getFirst().subList(gateway + 4, rows.getFirst().size()))
                .allSatisfy(
                        column -> assertThat(column).matches("(download|compil|graph_capture|sleep|fell|asleep).*"));
        assertThat(rows.get(1)).contains("pod_stopped");
    }

    @Test
    void toCsvEndsWithAWakesSleepLevelWhenItFellAsleepAndForHowLong() {
        RestartRecord wake = TestRecords.record("wake-1")
                .engineStart(START)
                .engineStartSource(StartSource.WAKE)
                .path(RestartPath.WAKE)
                .slept(new dev.readygate.readiness.EngineStart.Slept(2, START.minusSeconds(90), START))
                .build();

        List<List<String>> rows = parseCsv(RestartRecordView.csv(List.of(wake)));

        int level = rows.getFirst().indexOf("sleep_level");
        assertThat(rows.get(1).subList(level, level + 3)).containsExactly("2", "2026-11-30T11:58:30Z", "90");
        assertThat(rows.get(1)).contains("wake");
    }

    @Test
    void toCsvWhenFieldHasNewlineQuotesIt() {
        RestartRecord record = TestRecords.record("start-1")
                .engineStart(START)
                .engineStartSource(StartSource.LOG)
                .path(RestartPath.COLD)
                .outcome(Outcome.NOT_READY)
                .notReadyReason("canary mismatch:\nexpected Paris")
                .probeConfigHash("h")
                .readygateVersion("0.1.0")
                .build();

        List<List<String>> rows = parseCsv(RestartRecordView.csv(List.of(record)));

        assertThat(rows).hasSize(2);
        assertThat(rows.get(1).get(9)).isEqualTo("canary mismatch:\nexpected Paris");
    }

    @Test
    void toJsonWhenExportedParsesBackToTheLinesObjects() throws IOException {
        RestartHistory history = history();
        history.append(full("start-1"));
        history.append(minimal("start-2"));

        JsonNode exported = json.readTree(RestartExportTests.body(new RestartExport(history, Schedulers.immediate())
                .export(RestartExport.Format.JSON, RestartExport.Query.ALL)
                .block()));

        assertThat(exported.isArray()).isTrue();
        List<JsonNode> lines = lines(file()).stream().map(json::readTree).toList();
        assertThat(exported.valueStream().toList()).containsExactlyElementsOf(lines);
        assertThat(exported.valueStream().map(RecordJson::read).toList())
                .containsExactly(full("start-1"), minimal("start-2"));
    }

    @Test
    void constructWhenLimitsAreInvalidFails() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> history(DataSize.ofBytes(0), 3))
                .withMessageContaining("maxFileSize");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> history(DataSize.ofBytes(10), -1))
                .withMessageContaining("maxRotatedFiles");
    }

    long lineSize(RestartRecord record) {
        return json.writeValueAsBytes(new RestartRecordView(record).json(json)).length + 1;
    }

    /** A strict RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks; rows end in CRLF. */
    static List<List<String>> parseCsv(String csv) {
        List<List<String>> rows = new ArrayList<>();
        List<String> row = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        int i = 0;
        while (i < csv.length()) {
            char c = csv.charAt(i);
            if (c == '"' && field.isEmpty()) {
                i++;
                while (true) {
                    char q = csv.charAt(i++);
                    if (q == '"' && i < csv.length() && csv.charAt(i) == '"') {
                        field.append('"');
                        i++;
                    } else if (q == '"') {
                        break;
                    } else {
                        field.append(q);
                    }
                }
            } else if (c == ',') {
                row.add(field.toString());
                field.setLength(0);
                i++;
            } else if (c == '\r' && csv.startsWith("\r\n", i)) {
                row.add(field.toString());
                field.setLength(0);
                rows.add(row);
                row = new ArrayList<>();
                i += 2;
            } else {
                assertThat(c).as("unquoted field character").isNotIn('"', '\r', '\n');
                field.append(c);
                i++;
            }
        }
        assertThat(row).as("csv ends with CRLF").isEmpty();
        return rows;
    }

    @Test
    void appendWhenTheDiskFillsMidRecordLeavesNoTornLine(CapturedOutput output) throws IOException {
        try (Tmpfs fs = Tmpfs.mount(stateDir.resolve("mnt"), "64k")) {
            RestartHistory history =
                    new RestartHistory(fs.path().resolve(RestartHistory.FILE_NAME), DataSize.ofMegabytes(1), 3, json);
            history.append(full("start-0"));
            fs.fill();
            // The file's last page holds what is left: the record that does not fit is written in part, then fails.
            List<String> written = new ArrayList<>(List.of("start-0"));
            assertThatThrownBy(() -> {
                        for (int i = 1; i < 100; i++) {
                            history.append(full("start-" + i));
                            written.add("start-" + i);
                        }
                    })
                    .isInstanceOf(java.io.UncheckedIOException.class)
                    .hasRootCauseMessage("No space left on device");
            byte[] content = Files.readAllBytes(history.file());
            assertThat(content[content.length - 1])
                    .as("the file ends with a whole line")
                    .isEqualTo((byte) '\n');
            assertThat(history.load()).extracting(RestartRecord::id).containsExactlyElementsOf(written);
            assertThat(output.getAll()).doesNotContain("Skipped");

            fs.free();
            history.append(full("start-after"));
            written.add("start-after");
            assertThat(history.load()).extracting(RestartRecord::id).containsExactlyElementsOf(written);
        }
    }
}
