package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.readiness.StartSource;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The restart history's exports at the history's ceiling (the default {@code history-max-size} of 10 MB in the
 * current file and each of the default 3 rotated files: 40 MiB, about 12 hours of a crash loop), from readygate as the
 * image runs it: {@code target/readygate.jar} in a JVM of its own with the Dockerfile's {@code JDK_JAVA_OPTIONS}
 * (Serial GC, a heap of at most 128 MiB, 64 MiB of direct memory, exit on {@code OutOfMemoryError}). Both exports are
 * read whole and compared record by record with what was written; the process must still be alive after them, and
 * its peak memory is measured (GC log and {@code /proc}) and written to {@value #REPORT}. Before the exports
 * streamed, the JSON export ended the process ({@code OutOfMemoryError: Java heap space}).
 */
class ExportCeilingIT {

    static final String REPORT = "target/export-ceiling.txt";
    static final long MAX_FILE = DataSize.ofMegabytes(10).toBytes();
    static final int ROTATED_FILES = 3;
    static final Instant START = Instant.parse("2026-11-30T00:00:00Z");

    @TempDir
    Path dir;

    @Nullable
    Process readygate;

    /** Records readygate made itself during the test (see the engine URL). */
    int extraRecords;

    final JsonMapper json = JsonMapper.builder().build();

    @AfterEach
    void stop() throws InterruptedException {
        if (readygate != null && readygate.isAlive()) {
            readygate.destroy();
            if (!readygate.waitFor(30, TimeUnit.SECONDS)) {
                readygate.destroyForcibly();
            }
        }
    }

    @Test
    void exportsAtTheHistoryCeilingStreamEveryRecordUnderTheImagesHeap() throws Exception {
        Path state = Files.createDirectories(dir.resolve("state"));
        CeilingHistory.Written written = CeilingHistory.write(state, MAX_FILE, ROTATED_FILES, json);
        int records = written.records();
        long historyBytes = 0;
        try (var files = Files.list(state)) {
            for (Path file : files.toList()) {
                historyBytes += Files.size(file);
            }
        }
        assertThat(historyBytes).isGreaterThan((ROTATED_FILES + 1) * MAX_FILE - 64 * 1024);

        int port = freePort();
        Path gcLog = dir.resolve("gc.log");
        Path output = dir.resolve("readygate.out");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(imageFlags());
        command.add("-Xlog:gc:file=" + gcLog);
        command.addAll(List.of(
                "-jar",
                Path.of(System.getProperty("readygate.jar", "target/readygate.jar"))
                        .toAbsolutePath()
                        .toString(),
                "--server.port=" + port,
                "--server.address=127.0.0.1",
                // No engine (a closed port): the history is all this test is about. A loaded machine can still make
                // readygate record a start of its own at once (its first check times out: "listening", then "down"),
                // which would rotate the oldest generated file away: one more rotated file keeps them all.
                "--readygate.engine.base-url=http://127.0.0.1:" + freePort(),
                "--readygate.restart.history-files=" + (ROTATED_FILES + 1),
                "--readygate.state-dir=" + state));
        long launched = System.nanoTime();
        readygate = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        String base = "http://127.0.0.1:" + port;
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> {
                    if (!readygate.isAlive()) {
                        throw new AssertionError("readygate exited: " + Files.readString(output));
                    }
                    return http.send(
                                            HttpRequest.newBuilder(URI.create(base + "/livez"))
                                                    .build(),
                                            HttpResponse.BodyHandlers.ofString())
                                    .statusCode()
                            == 200;
                });
        Duration toLivez = Duration.ofNanos(System.nanoTime() - launched);
        Memory atStart = Memory.of(readygate.pid());

        long jsonStart = System.nanoTime();
        long[] jsonBytes = {0};
        int jsonRecords;
        try {
            HttpResponse<InputStream> jsonResponse = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/status/restarts.json"))
                            .timeout(Duration.ofMinutes(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(jsonResponse.statusCode()).isEqualTo(200);
            jsonRecords = checkJson(new CountingStream(jsonResponse.body(), jsonBytes), written);
        } catch (IOException ex) {
            throw new AssertionError(
                    "GET /status/restarts.json failed (" + ex + "); readygate "
                            + (readygate.isAlive() ? "is alive" : "exited with " + readygate.waitFor())
                            + ", its output ends:\n"
                            + tail(output),
                    ex);
        }
        Duration jsonTime = Duration.ofNanos(System.nanoTime() - jsonStart);
        assertThat(readygate.isAlive()).as(() -> read(output)).isTrue();
        Memory afterJson = Memory.of(readygate.pid());

        long csvStart = System.nanoTime();
        HttpResponse<InputStream> csvResponse = http.send(
                HttpRequest.newBuilder(URI.create(base + "/status/restarts.csv"))
                        .timeout(Duration.ofMinutes(5))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(csvResponse.statusCode()).isEqualTo(200);
        long[] csvBytes = {0};
        int csvRecords = checkCsv(new CountingStream(csvResponse.body(), csvBytes), written);
        Duration csvTime = Duration.ofNanos(System.nanoTime() - csvStart);
        assertThat(readygate.isAlive()).as(() -> read(output)).isTrue();
        Memory afterCsv = Memory.of(readygate.pid());

        assertThat(jsonRecords).isEqualTo(records);
        assertThat(csvRecords).isEqualTo(records);
        assertThat(http.send(
                                HttpRequest.newBuilder(URI.create(base + "/livez"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .statusCode())
                .isEqualTo(200);
        // /status embeds the latest starts only, and says how many it leaves out.
        String status = http.send(
                        HttpRequest.newBuilder(URI.create(base + "/status"))
                                .header("Accept", "application/json")
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        var restarts = json.readTree(status).get("restarts");
        assertThat(restarts.get("history").size()).isEqualTo(100);
        assertThat(restarts.get("historyOmitted").asLong()).isEqualTo(records + extraRecords - 100L);

        Gc gc = Gc.of(Files.readString(gcLog));
        String report = """
                Restart history exports at the ceiling, image JVM flags (%s)
                history: %d records (and %d readygate recorded meanwhile), %.1f MiB in %d files; process start to /livez 200 (the history read at start): %.1f s
                GET /status/restarts.json: %.1f MiB in %.1f s
                GET /status/restarts.csv: %.1f MiB in %.1f s
                heap (GC log, whole run): peak used before a collection %d MiB, peak live after one %d MiB, peak committed %d MiB (max 128)
                resident (VmRSS): %d MiB at start, %d MiB after the JSON export, %d MiB after the CSV export; peak (VmHWM) %d MiB
                """.formatted(
                        String.join(" ", imageFlags()),
                        records,
                        extraRecords,
                        historyBytes / 1048576.0,
                        ROTATED_FILES + 1,
                        toLivez.toMillis() / 1000.0,
                        jsonBytes[0] / 1048576.0,
                        jsonTime.toMillis() / 1000.0,
                        csvBytes[0] / 1048576.0,
                        csvTime.toMillis() / 1000.0,
                        gc.peakBefore(),
                        gc.peakAfter(),
                        gc.peakCommitted(),
                        atStart.rssMiB(),
                        afterJson.rssMiB(),
                        afterCsv.rssMiB(),
                        afterCsv.hwmMiB());
        Files.createDirectories(Path.of(REPORT).getParent());
        Files.writeString(Path.of(REPORT), report);
        System.out.println(report);
        // What stays live across the exports is readygate's own working set plus the index: far below the heap.
        assertThat(gc.peakAfter()).as(report).isLessThan(64);
    }

    /** Reads the JSON array as a stream, one object at a time, and compares each with the record written. */
    int checkJson(InputStream body, CeilingHistory.Written written) throws IOException {
        int count = 0;
        int extra = 0;
        try (JsonParser parser = json.createParser(body)) {
            assertThat(parser.nextToken()).isEqualTo(JsonToken.START_ARRAY);
            while (parser.nextToken() == JsonToken.START_OBJECT) {
                RestartRecord record = RecordJson.read(json.reader()
                        .without(tools.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                        .readTree(parser));
                if (count < written.records()) {
                    assertThat(record).isEqualTo(written.expected(count));
                    count++;
                } else {
                    // Recorded by readygate itself, after the generated ones.
                    assertThat(record.readygateVersion()).isNotEqualTo(CeilingHistory.VERSION);
                    extra++;
                }
            }
            extraRecords = extra;
            assertThat(parser.currentToken()).isEqualTo(JsonToken.END_ARRAY);
            assertThat(parser.nextToken()).isNull();
        }
        assertThat(count).isEqualTo(written.records());
        return count;
    }

    /** Reads the CSV line by line and compares each row with the record written. */
    static int checkCsv(InputStream body, CeilingHistory.Written written) throws IOException {
        int count = 0;
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            assertThat(reader.readLine() + "\r\n").isEqualTo(RestartRecordView.csvHeaderLine());
            String line;
            while ((line = reader.readLine()) != null && count < written.records()) {
                assertThat(line + "\r\n").isEqualTo(new RestartRecordView(written.expected(count)).csvLine());
                count++;
            }
        }
        assertThat(count).isEqualTo(written.records());
        return count;
    }

    /** The Dockerfile's {@code JDK_JAVA_OPTIONS}: the flags the image runs readygate with. */
    static List<String> imageFlags() throws IOException {
        Matcher matcher =
                Pattern.compile("JDK_JAVA_OPTIONS=\"([^\"]+)\"").matcher(Files.readString(Path.of("Dockerfile")));
        assertThat(matcher.find()).as("JDK_JAVA_OPTIONS in the Dockerfile").isTrue();
        return Arrays.asList(matcher.group(1).trim().split("\\s+"));
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    static String tail(Path file) {
        String text = read(file);
        return text.substring(Math.max(0, text.length() - 3000));
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException ex) {
            return ex.toString();
        }
    }

    /** The process's resident memory now and at its peak, from {@code /proc/<pid>/status}. */
    record Memory(long rssMiB, long hwmMiB) {
        static Memory of(long pid) throws IOException {
            Map<String, Long> values = new LinkedHashMap<>();
            for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
                String[] parts = line.split("\\s+");
                if (parts.length >= 2 && (line.startsWith("VmRSS:") || line.startsWith("VmHWM:"))) {
                    values.put(parts[0], Long.parseLong(parts[1]) / 1024);
                }
            }
            return new Memory(values.getOrDefault("VmRSS:", -1L), values.getOrDefault("VmHWM:", -1L));
        }
    }

    /** The heap's peaks from {@code -Xlog:gc} lines such as {@code Pause Young (Allocation Failure) 45M->12M(60M)}. */
    record Gc(long peakBefore, long peakAfter, long peakCommitted) {
        static Gc of(String log) {
            Matcher matcher = Pattern.compile("(\\d+)M->(\\d+)M\\((\\d+)M\\)").matcher(log);
            long before = 0;
            long after = 0;
            long committed = 0;
            while (matcher.find()) {
                before = Math.max(before, Long.parseLong(matcher.group(1)));
                after = Math.max(after, Long.parseLong(matcher.group(2)));
                committed = Math.max(committed, Long.parseLong(matcher.group(3)));
            }
            return new Gc(before, after, committed);
        }
    }

    /** Counts the bytes read through it. */
    static final class CountingStream extends java.io.FilterInputStream {
        private final long[] count;

        CountingStream(InputStream in, long[] count) {
            super(in);
            this.count = count;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count[0]++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count[0] += n;
            }
            return n;
        }
    }

    /**
     * A history at the ceiling, written as {@link RestartHistory} writes and rotates it: lines of realistic records
     * (vLLM's arguments, evidence, phases, GPU memory with processes), every tenth start written twice (in progress,
     * then when it ended, after the next start's line) so that the exports must keep the last version at the first
     * place. {@link #record(int, boolean)} makes the same records again to compare with.
     */
    static final class CeilingHistory {

        /** The readygate version the generated records say wrote them. */
        static final String VERSION = "0.1.0-generated";

        private CeilingHistory() {}

        /** What was written: how many records, and which one has only its in-progress line (-1: none). */
        record Written(int records, int inProgress) {

            /** The record the history keeps at position {@code i}. */
            RestartRecord expected(int i) {
                return record(i, i != inProgress);
            }
        }

        /** Writes the files, oldest first, each up to {@code maxFile}, as rotation leaves them. */
        static Written write(Path state, long maxFile, int rotated, JsonMapper json) throws IOException {
            var writer = json.writer().without(SerializationFeature.INDENT_OUTPUT);
            List<Path> files = new ArrayList<>();
            for (int n = rotated; n >= 1; n--) {
                files.add(state.resolve(RestartHistory.FILE_NAME + "." + n));
            }
            files.add(state.resolve(RestartHistory.FILE_NAME));
            int file = 0;
            long size = 0;
            int records = 0;
            int inProgress = -1;
            OutputStream out = Files.newOutputStream(files.get(0));
            try {
                for (int k = 0; ; k++) {
                    List<RestartRecord> lines = new ArrayList<>();
                    lines.add(record(k, k % 10 != 0));
                    if (k % 10 == 1) {
                        lines.add(record(k - 1, true));
                    }
                    for (RestartRecord record : lines) {
                        byte[] line = (writer.writeValueAsString(new RestartRecordView(record).json(json)) + "\n")
                                .getBytes(StandardCharsets.UTF_8);
                        if (size + line.length > maxFile) {
                            if (file == files.size() - 1) {
                                // The current file is full: the history is at its ceiling.
                                return new Written(records, inProgress);
                            }
                            out.close();
                            file++;
                            size = 0;
                            out = Files.newOutputStream(files.get(file));
                        }
                        out.write(line);
                        size += line.length;
                        if (record.id().equals(id(k))) {
                            records = k + 1;
                            if (k % 10 == 0) {
                                inProgress = k;
                            }
                        } else {
                            inProgress = -1;
                        }
                    }
                }
            } finally {
                out.close();
            }
        }

        static String id(int k) {
            return String.format("%08x-0000-4000-8000-%012x", k, (long) k * 7919);
        }

        /** Record {@code k}: as it ended ({@code ended}), or as it was written while in progress. */
        static RestartRecord record(int k, boolean ended) {
            Instant engineStart = START.plusSeconds(15L * k);
            Instant ready = engineStart.plusMillis(31_000 + (k % 97) * 10);
            Map<Phase, Instant> phases = new LinkedHashMap<>();
            phases.put(Phase.ENGINE_START, engineStart);
            phases.put(Phase.PORT_LISTENING, engineStart.plusMillis(4_250));
            phases.put(Phase.HEALTH_OK, engineStart.plusMillis(29_100));
            phases.put(Phase.MODEL_LISTED, engineStart.plusMillis(29_300));
            if (ended) {
                phases.put(Phase.REPRESENTATIVE_OK, engineStart.plusMillis(30_500));
                phases.put(Phase.CANARY_OK, engineStart.plusMillis(30_900));
                phases.put(Phase.READY, ready);
            }
            MemoryMoment atReady = new MemoryMoment(
                    ready,
                    14_087_618_560L + k,
                    Map.of(Owner.PRELOAD_DAEMON, 11_282_677_760L, Owner.ENGINE, 2_789_212_160L + k),
                    List.of(
                            new MemoryMoment.Holder(560, Owner.PRELOAD_DAEMON, 11_282_677_760L),
                            new MemoryMoment.Holder(600 + k % 1000, Owner.ENGINE, 2_789_212_160L + k)));
            return TestRecords.record(id(k))
                    .engineStart(engineStart)
                    .engineStartSource(StartSource.PROCESS_START_TIME)
                    .firstSeen(k == 0)
                    .path(k % 3 == 0 ? RestartPath.PRELOAD_HIT : RestartPath.COLD)
                    .evidence(List.of(
                            "log: weight cache requested (load_format ipc_cache)",
                            "log: Mapped 339 tensors from the weight cache daemon (zero_copy mode)",
                            "daemon: /health 200, 3 socket(s) in the socket directory",
                            "metrics: vllm:request_success_total 0 at the first scrape"))
                    .phases(phases)
                    .loggedDurations(Map.of("weights_loading", 2.62, "model_loading", 9.7684, "engine_init", 18.25))
                    .outcome(ended ? Outcome.READY : Outcome.NOT_READY)
                    .notReadyReason(ended ? null : "not_verified")
                    .readinessLatency(ended ? Duration.between(engineStart, ready) : null)
                    .vllmVersion("0.31.0")
                    .engineArgs(
                            "{'model_tag': 'Qwen/Qwen3-8B', 'host': '0.0.0.0', 'port': 8000, 'model': 'Qwen/Qwen3-8B',"
                                    + " 'revision': 'c1899de289a04d12100db370d81485cdf75e47ca', 'max_model_len': 32768,"
                                    + " 'gpu_memory_utilization': 0.92, 'max_num_batched_tokens': 8192, 'max_num_seqs': 256,"
                                    + " 'enable_prefix_caching': True, 'load_format': 'ipc_cache', 'model_loader_extra_config':"
                                    + " {'socket_dir': '/run/weight-cache', 'mode': 'zero_copy', 'fallback': True},"
                                    + " 'served_model_name': ['qwen3-8b'], 'api_key': '<redacted>'}")
                    .model("qwen3-8b")
                    .modelRoot("Qwen/Qwen3-8B")
                    .revision("c1899de289a04d12100db370d81485cdf75e47ca")
                    .maxModelLen(32768)
                    .kvCacheSizeTokens(ended ? 412_224L : null)
                    .probeConfigHash("9f86d081884c")
                    .readygateVersion(VERSION)
                    .node(Map.of(
                            "node_name",
                            "gpu-node-7",
                            "gpu_uuid",
                            "GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da",
                            "driver_version",
                            "580.159.04"))
                    .memory(new CycleMemory(null, ended ? atReady : null, null))
                    .build();
        }
    }
}
