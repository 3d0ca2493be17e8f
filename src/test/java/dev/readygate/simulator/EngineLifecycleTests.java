package dev.readygate.simulator;

import static dev.readygate.HttpStatusPoll.statusOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Engine starts, restarts and crashes along vLLM 0.31's paths, observed from outside (reference §1.1, §4, §5, §6). */
class EngineLifecycleTests {

    @TempDir
    Path workDir;

    RunningSimulator running;

    @AfterEach
    void stop() {
        if (running != null) {
            running.close();
        }
    }

    static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            return true;
        } catch (IOException ex) {
            return false;
        }
    }

    static void assertRefused(int port) {
        assertThatExceptionOfType(ConnectException.class).isThrownBy(() -> {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            }
        });
    }

    JsonNode complete(Map<String, Object> body) {
        return running.postJson("/v1/completions", body);
    }

    String metrics() {
        return running.metricsText();
    }

    /** The log written since {@code marker} (the log as it was before the action). */
    String logSince(String before) {
        return running.engineLog().substring(before.length());
    }

    @Test
    void portRefusesConnectionsWhileTheEngineLoadsThenListens() {
        running = RunningSimulator.start(workDir, "load-time=1500ms", "preload.enabled=false");
        assertRefused(running.properties.port());
        assertThat(running.simulator.engine().phase()).isEqualTo(SimulatedEngine.Phase.LOADING);
        await().atMost(Duration.ofSeconds(10)).until(() -> accepts(running.properties.port()));
        running.engine().get().uri("/health").exchange().expectStatus().isOk();
    }

    @Test
    void coldStartWritesVllm031sStartupLinesInOrder() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        String log = running.engineLog();
        assertThat(log)
                .containsSubsequence(
                        "(APIServer pid=4242) INFO ",
                        "[utils.py:302]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.31.0",
                        "[utils.py:302]   █▄█▀ █     █     █     █  model   Qwen/Qwen3-0.6B",
                        "non-default args: {",
                        "(EngineCore pid=4243) INFO ",
                        "Initializing a V1 LLM engine (v0.31.0) with config: model='Qwen/Qwen3-0.6B'",
                        "Loading weights took ",
                        "[model_runner.py:4344] Model loading took 1.12 GiB memory and ",
                        "[backends.py:913] Using cache directory: ",
                        "[backends.py:973] Dynamo bytecode transform time: ",
                        "[backends.py:386] Compiling a graph for compile range (1, 8192) takes ",
                        "[monitor.py:53] torch.compile took ",
                        "Available KV cache memory: ",
                        "GPU KV cache size: 65,536 tokens, Maximum concurrency for 4,096 tokens per request: 16.00x",
                        "[gpu_model_runner.py:5366] Graph capturing finished in ",
                        "init engine (profile, create kv cache, warmup model) took ",
                        "Starting vLLM server on http://127.0.0.1:" + running.properties.port(),
                        "(APIServer pid=4242) INFO:     Started server process [4242]",
                        "(APIServer pid=4242) INFO:     Waiting for application startup.",
                        "(APIServer pid=4242) INFO:     Application startup complete.")
                .containsPattern("Loading weights took \\d+\\.\\d{2} seconds")
                .containsPattern("Model loading took \\d+\\.\\d{2} GiB memory and \\d+\\.\\d{6} seconds")
                .containsPattern("init engine \\(profile, create kv cache, warmup model\\) took \\d+\\.\\d{2} s "
                        + "\\(compilation: \\d+\\.\\d{2} s\\)")
                .containsPattern("Graph capturing finished in \\d+ secs, took \\d+\\.\\d{2} GiB")
                .containsPattern("torch.compile took \\d+\\.\\d{2} s in total")
                .doesNotContain("vLLM API server version")
                .doesNotContain("EngineCore_DP")
                .doesNotContain("Directly load")
                .doesNotContain("Mapped ")
                .doesNotContain("Weight cache");
        assertThat(log.lines())
                .allMatch(line -> line.matches("\\((APIServer|EngineCore) pid=\\d+\\) (((INFO|WARNING|ERROR) "
                        + "\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\[[a-z_]+\\.py:\\d+] .*)|INFO:     .*)"));
    }

    @Test
    void coldStartInLegacyFormatsWritesTheLinesOfVllm0101() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.formats=legacy");
        String log = running.engineLog();
        assertThat(log)
                .containsSubsequence(
                        "INFO ",
                        "[api_server.py:1805] vLLM API server version 0.31.0",
                        "[utils.py:326] non-default args: {",
                        "(EngineCore_0 pid=4243) INFO ",
                        "[core.py:74] Initializing a V1 LLM engine (v0.31.0) with config: ",
                        "Loading weights took ",
                        "[gpu_model_runner.py:2007] Model loading took 1.1214 GiB and ",
                        "[backends.py:215] Compiling a graph for dynamic shape takes ",
                        "[monitor.py:34] torch.compile takes ",
                        "GPU KV cache size: 65,536 tokens\n",
                        "Maximum concurrency for 4,096 tokens per request: 16.00x",
                        "[gpu_model_runner.py:2567] Graph capturing finished in ",
                        "[api_server.py:1611] Supported_tasks: ['generate']",
                        "[api_server.py:1880] Starting vLLM API server 0 on http://127.0.0.1:",
                        "\nINFO:     Started server process [4242]",
                        "\nINFO:     Waiting for application startup.",
                        "\nINFO:     Application startup complete.")
                .containsPattern(
                        "init engine \\(profile, create kv cache, warmup model\\) took \\d+\\.\\d{2} seconds\\n")
                .doesNotContain("█")
                .doesNotContain("APIServer")
                .doesNotContain("compilation:");
        // 0.10.1's API server decorates none of its lines: only the engine core's carry a process prefix.
        assertThat(log.lines().filter(line -> !line.startsWith("(EngineCore_0 pid=4243) ")))
                .allMatch(line -> line.startsWith("INFO"));
    }

    @Test
    void restartReadsTheCompiledGraphsFromTheCompileCacheAndShutsDownAsVllmDoes() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.COLD);
        String restart = logSince(before);
        assertThat(restart)
                .startsWith("(APIServer pid=4242) INFO ")
                .containsSubsequence(
                        "[launcher.py:120] Shutting down FastAPI HTTP server.\n",
                        "(EngineCore pid=4253) INFO ",
                        "[backends.py:292] Directly load the compiled graph(s) for compile range (1, 8192) from the "
                                + "cache, took ",
                        "torch.compile took ")
                .containsPattern("from the cache, took \\d+\\.\\d{3} s\\n")
                .doesNotContain("Compiling a graph")
                .doesNotContain("(restart)");
    }

    /** The {@code process_start_time_seconds} of the process that answers on {@code socket}, or NaN for no answer. */
    private static double processStartOn(Socket socket) throws IOException {
        socket.getOutputStream()
                .write("GET /metrics HTTP/1.1\r\nHost: engine\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
        String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        int body = answer.indexOf("\r\n\r\n");
        if (body < 0 || !answer.contains("process_start_time_seconds ")) {
            return Double.NaN;
        }
        return Metrics.value(answer.substring(body + 4), "process_start_time_seconds");
    }

    /** A plain HTTP/1.1 request on an open keep-alive connection: the status line, or null when the peer closed it. */
    static String healthOn(Socket socket) throws IOException {
        socket.getOutputStream()
                .write("GET /health HTTP/1.1\r\nHost: engine\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        BufferedReader reader =
                new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
        String status = reader.readLine();
        // /health has no body: skip the headers up to the blank line so the connection is ready for the next request.
        for (String line = status; line != null && !line.isEmpty(); line = reader.readLine()) {}
        return status;
    }

    /**
     * A dead process's sockets die with it, including a connection accepted while the listener was closing: one that
     * outlived the stop would go on answering {@code /health} for the old engine while the new one loads (a judge probing
     * on it sees a healthy engine that is not there).
     */
    @Test
    void noConnectionOpenedWhileTheEngineStopsOutlivesIt() throws Exception {
        running = RunningSimulator.serving(
                workDir, "preload.enabled=false", "load-time=400ms", "timing.shutdown-time=0ms");
        int port = running.properties.port();
        int survivors = 0;
        for (int round = 0; round < 10; round++) {
            await().atMost(Duration.ofSeconds(10)).until(() -> accepts(port));
            double stopped = Metrics.value(metrics(), "process_start_time_seconds");
            List<Socket> opened = new CopyOnWriteArrayList<>();
            AtomicBoolean go = new AtomicBoolean(true);
            Thread opener = Thread.ofPlatform().start(() -> {
                while (go.get()) {
                    Socket socket = new Socket();
                    try {
                        socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                        socket.setSoTimeout(2000);
                        opened.add(socket);
                    } catch (IOException refused) {
                        return;
                    }
                }
            });
            running.simulator.restart(StartupPath.COLD).block(Duration.ofSeconds(5));
            go.set(false);
            opener.join();
            for (Socket socket : opened) {
                try (socket) {
                    // A connect still in flight when the restart returned may land on the new engine (a loaded
                    // machine starves the opener past the gap): only an answer from the stopped process counts.
                    if (processStartOn(socket) == stopped) {
                        survivors++;
                    }
                } catch (IOException closed) {
                    // what a connection to a dead process does
                }
            }
        }
        assertThat(survivors)
                .as("connections that still answered after their engine stopped")
                .isZero();
    }

    @Test
    void restartClosesTheListenerAndComesBackWithANewProcessStartTime() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "load-time=800ms");
        double firstStart = Metrics.value(metrics(), "process_start_time_seconds");
        running.simulator.restart(StartupPath.COLD).block(Duration.ofSeconds(5));
        assertRefused(running.properties.port());
        await().atMost(Duration.ofSeconds(10)).until(() -> accepts(running.properties.port()));
        assertThat(Metrics.value(metrics(), "process_start_time_seconds")).isGreaterThan(firstStart);
        assertThat(running.startNumber()).isEqualTo(2);
        assertThat(running.simulator.engine().latestStart().pid()).isEqualTo(4252);
    }

    @Test
    void countersStartAtZeroOnEveryStart() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        complete(Map.of("prompt", "hello", "max_tokens", 3, "ignore_eos", true));
        assertThat(Metrics.value(metrics(), "vllm:generation_tokens_total")).isEqualTo(3);
        running.restartAndAwait(StartupPath.COLD);
        String fresh = metrics();
        assertThat(Metrics.value(fresh, "vllm:generation_tokens_total")).isZero();
        assertThat(Metrics.value(fresh, "vllm:request_success_total")).isZero();
        assertThat(Metrics.value(fresh, "vllm:prompt_tokens_total")).isZero();
    }

    @Test
    void preloadDaemonServesHealthAndSocketOnceItsWeightsAreCached() throws IOException {
        running = RunningSimulator.start(workDir, "timing.daemon-load-time=1s");
        running.daemonHealth().get().uri("/health").exchange().expectStatus().isEqualTo(503);
        Path socket = running.simulator.daemon().socketPath();
        assertThat(socket).doesNotExist();
        await().atMost(Duration.ofSeconds(10)).until(() -> statusOf(running.daemonHealth(), "/health") == 200);
        assertThat(socket.getFileName().toString()).isEqualTo("vllm_weight_cache_gpu0.sock");
        assertThat(Files.readAttributes(socket, java.nio.file.attribute.BasicFileAttributes.class)
                        .isOther())
                .as("a Unix socket")
                .isTrue();
        assertThat(running.daemonLog())
                .containsSubsequence(
                        "[default_loader.py:262] Loading weights took ",
                        "[daemon.py:178] Weight cache daemon rank 0 cached 339 tensors\n",
                        "[daemon.py:206] Weight cache daemon rank 0 serving on " + socket,
                        "\nWeight cache daemon rank 0 ready: serving on " + socket + "\n",
                        "[preload.py:214] ===== Weight cache daemon READY: node 0/1 serving 1 local rank(s) x 1 role(s) "
                                + "in the default socket dir =====")
                .doesNotContain("pid=");
    }

    @Test
    void socketsAreNamedAfterTheGpuUuidWhenConfigured() throws IOException {
        // A Unix socket path must fit in 108 bytes, as it must for vLLM's daemon: keep the directory short.
        Path socketDir = Files.createTempDirectory("rg");
        try {
            running = RunningSimulator.serving(
                    workDir, "preload.socket-naming=gpu-uuid", "preload.socket-dir=" + socketDir);
            assertThat(running.simulator.daemon().socketPath())
                    .hasFileName("vllm_weight_cache_gpu-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da.sock")
                    .exists();
        } finally {
            running.close();
            running = null;
            Files.deleteIfExists(socketDir);
        }
    }

    @Test
    void preloadHitMapsTensorsFromTheDaemonWithoutLoadingWeights() {
        running = RunningSimulator.serving(workDir);
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        String log = logSince(before);
        assertThat(log)
                .contains("'load_format': 'ipc_cache'")
                .contains("[ipc_loader.py:203] Mapped 339 tensors from the weight cache daemon (zero_copy mode)")
                .contains("Weights are held outside this process: 1.12 GiB")
                .contains("init engine (profile, create kv cache, warmup model) took")
                .contains("Application startup complete.")
                .doesNotContain("Loading weights took")
                .doesNotContain("falling back");
        SimulatedEngine.StartInfo start = running.simulator.engine().latestStart();
        assertThat(start.path()).isEqualTo(StartupPath.PRELOAD_HIT);
        assertThat(running.simulator.ableToServe()).isTrue();
    }

    @Test
    void preloadFallbackLogsItsReasonThenLoadsFromDisk() {
        running = RunningSimulator.serving(workDir);
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.PRELOAD_FALLBACK);
        assertThat(logSince(before))
                .containsSubsequence(
                        "WARNING ",
                        "[ipc_loader.py:139] Weight cache unusable (Cannot connect to weight cache daemon at ",
                        "); falling back to disk loading",
                        "Loading weights took ",
                        "Model loading took 1.12 GiB memory",
                        "init engine (profile, create kv cache, warmup model) took",
                        "Application startup complete.")
                .doesNotContain("Mapped ");
        assertThat(running.simulator.engine().latestStart().path()).isEqualTo(StartupPath.PRELOAD_FALLBACK);
    }

    @Test
    void preloadHitWithTheDaemonStoppedFallsBackToDisk() {
        running = RunningSimulator.serving(workDir);
        running.simulator.daemon().stop().block(Duration.ofSeconds(5));
        assertThat(running.simulator.daemon().socketPath()).doesNotExist();
        assertRefused(running.properties.preload().healthPort());
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        assertThat(logSince(before))
                .contains("Weight cache unusable (Weight cache socket ")
                .contains("is unavailable: [Errno 2] No such file or directory); falling back to disk loading");
        SimulatedEngine.StartInfo start = running.simulator.engine().latestStart();
        assertThat(start.requested()).isEqualTo(StartupPath.PRELOAD_HIT);
        assertThat(start.path()).isEqualTo(StartupPath.PRELOAD_FALLBACK);
        assertThat(start.fallbackReason()).startsWith("Weight cache socket ");
    }

    @Test
    void daemonWithAnotherLayoutIsRejectedByTheFingerprint() {
        running = RunningSimulator.serving(workDir);
        running.simulator
                .daemon()
                .start("llama-3-8b", "LlamaForCausalLM/32x4096/bf16", null)
                .block(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> running.simulator.daemon().phase() == WeightCacheDaemon.Phase.SERVING);
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        assertThat(logSince(before))
                .contains("Weight cache unusable (WeightCacheKey mismatch on fields: ['checkpoint']); falling back "
                        + "to disk loading");
        assertThat(running.simulator.engine().latestStart().servedCheckpoint()).isEqualTo("qwen3-0.6b-base");
    }

    @Test
    void daemonWithAnotherCheckpointOfTheSameLayoutServesTheWrongWeights() {
        running = RunningSimulator.serving(workDir);
        JsonNode expected = complete(EngineApiContractTests.canary());
        running.simulator
                .daemon()
                .start("qwen3-0.6b-finetune-step2000", null, null)
                .block(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> running.simulator.daemon().phase() == WeightCacheDaemon.Phase.SERVING);
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        // Only the usual hit line: nothing in the log says the weights are another checkpoint's (vLLM #59647).
        assertThat(logSince(before))
                .contains("Mapped 339 tensors")
                .doesNotContain("WARNING")
                .doesNotContain("ERROR");
        running.engine().get().uri("/health").exchange().expectStatus().isOk();
        JsonNode actual = complete(EngineApiContractTests.canary());
        assertThat(actual.at("/choices/0/token_ids")).isNotEqualTo(expected.at("/choices/0/token_ids"));
        assertThat(running.simulator.engine().latestStart().servedCheckpoint())
                .isEqualTo("qwen3-0.6b-finetune-step2000");
        assertThat(running.simulator.ableToServe()).isFalse();
    }

    @Test
    void copyModeReleasesTheCacheSoTheNextRestartFallsBack() {
        running = RunningSimulator.serving(workDir, "preload.mode=copy");
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        assertThat(running.simulator.engine().latestStart().path()).isEqualTo(StartupPath.PRELOAD_HIT);
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        SimulatedEngine.StartInfo start = running.simulator.engine().latestStart();
        assertThat(start.path()).isEqualTo(StartupPath.PRELOAD_FALLBACK);
        assertThat(start.fallbackReason()).isEqualTo("Weight cache daemon error: Weights were released");
    }

    @Test
    void daemonOutlivesEngineRestarts() {
        running = RunningSimulator.serving(workDir);
        var servingSince = running.simulator.daemon().servingSince();
        running.restartAndAwait(StartupPath.COLD);
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        assertThat(running.simulator.daemon().servingSince()).isEqualTo(servingSince);
        running.daemonHealth().get().uri("/health").exchange().expectStatus().isOk();
    }

    @Test
    void snapshotManifestHoldsTheOracleTheEngineAnswers() throws IOException {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        JsonNode manifest = Sse.JSON.readTree(Files.readString(workDir.resolve("snapshot/manifest.json")));
        assertThat(manifest.get("schema_version").intValue()).isEqualTo(1);
        for (String field : new String[] {
            "boundary",
            "created_at",
            "artifact_bytes",
            "model",
            "served_model_name",
            "model_revision",
            "tokenizer_revision",
            "engine_argv",
            "process_tree",
            "cuda_holders",
            "vllm_version",
            "python_version",
            "torch_version",
            "cuda_runtime",
            "driver_version",
            "criu_version",
            "cuda_checkpoint_sha256",
            "kernel_release",
            "host_id",
            "gpu_name",
            "gpu_uuid",
            "environment"
        }) {
            assertThat(manifest.has(field)).as(field).isTrue();
        }
        assertThat(manifest.get("vllm_version").asString()).isEqualTo("0.31.0");
        assertThat(manifest.get("gpu_uuid").asString()).isEqualTo("GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da");
        assertThat(manifest.get("oracle_token_ids").size()).isEqualTo(1);
        JsonNode answer = complete(EngineApiContractTests.canary()).at("/choices/0");
        assertThat(answer.get("token_ids")).isEqualTo(manifest.get("oracle_token_ids"));
        assertThat(answer.get("text").asString())
                .isEqualTo(manifest.get("oracle_text").asString());
        assertThat(answer.at("/logprobs/token_logprobs/0").doubleValue())
                .isEqualTo(manifest.get("oracle_sampled_token_logprob").doubleValue());
        assertThat(workDir.resolve("snapshot/ready.json")).exists();
        assertThat(workDir.resolve("snapshot/images")).isDirectory();
    }

    @Test
    void snapshotRestoreIsSilentSkipsEngineInitAndStartsWithNonZeroCounters() throws IOException {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.SNAPSHOT_RESTORE);
        // vLLM's snapshot controller and restored server log nothing: only the old engine's shutdown line.
        assertThat(logSince(before).lines())
                .singleElement()
                .asString()
                .endsWith("[launcher.py:120] Shutting down FastAPI HTTP server.");
        String metrics = metrics();
        assertThat(Metrics.value(metrics, "vllm:request_success_total")).isEqualTo(3);
        assertThat(Metrics.value(metrics, "vllm:generation_tokens_total")).isEqualTo(3);
        Path dir = workDir.resolve("snapshot");
        JsonNode release = Sse.JSON.readTree(Files.readString(dir.resolve("release.json")));
        assertThat(release.get("release").booleanValue()).isTrue();
        assertThat(release.get("port").intValue()).isEqualTo(running.properties.port());
        assertThat(release.get("host").asString()).isEqualTo("127.0.0.1");
        // CRIU restores the captured process ids, those in the manifest's process_tree.
        assertThat(Files.readString(dir.resolve("restored.pid")).strip()).isEqualTo("4192");
        assertThat(dir.resolve("child.log")).doesNotExist();
        assertThat(running.simulator.engine().latestStart().path()).isEqualTo(StartupPath.SNAPSHOT_RESTORE);
        assertThat(running.simulator.ableToServe()).isTrue();
    }

    @Test
    void snapshotRestoreWithoutAManifestFailsAndNeverFallsBack() throws IOException {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        Files.delete(workDir.resolve("snapshot/manifest.json"));
        running.simulator.restart(StartupPath.SNAPSHOT_RESTORE).block(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> running.simulator.engine().lastFailure() != null);
        assertThat(running.simulator.engine().lastFailure()).contains("SnapshotRestoreError");
        assertThat(running.simulator.engine().phase()).isEqualTo(SimulatedEngine.Phase.STOPPED);
        assertRefused(running.properties.port());
    }

    @Test
    void snapshotRestoreWithTheWrongWeightsFailsTheOracleAndKillsTheRestoredEngine() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "auto-restart=false");
        running.simulator.setFault(Fault.WRONG_WEIGHTS, true, FaultSet.Scope.INFERENCE);
        running.simulator.restart(StartupPath.SNAPSHOT_RESTORE).block(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> running.simulator.engine().lastFailure() != null);
        assertThat(running.simulator.engine().lastFailure())
                .startsWith("SnapshotRestoreError: snapshot oracle mismatch: " + "expected=");
        await().atMost(Duration.ofSeconds(5)).until(() -> !accepts(running.properties.port()));
        assertThat(workDir.resolve("snapshot/release.json")).doesNotExist();
    }

    @Test
    void snapshotRestoreOnAnotherGpuFailsTheIdentityCheck() throws IOException {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        Path manifest = workDir.resolve("snapshot/manifest.json");
        Files.writeString(manifest, Files.readString(manifest).replace("GPU-4f5b61fa", "GPU-00000000"));
        running.simulator.restart(StartupPath.SNAPSHOT_RESTORE).block(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> running.simulator.engine().lastFailure() != null);
        assertThat(running.simulator.engine().lastFailure())
                .isEqualTo("SnapshotCompatibilityError: snapshot mismatch: gpu_uuid");
        assertRefused(running.properties.port());
    }

    @Test
    void crashClosesTheListenerAndTheEngineIsRestartedAutomatically() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "auto-restart-delay=500ms");
        running.simulator.engine().crash("simulated crash").block(Duration.ofSeconds(5));
        assertRefused(running.properties.port());
        assertThat(running.engineLog())
                .containsSubsequence(
                        "(EngineCore pid=4243) ERROR ",
                        "[core.py:1062] EngineCore encountered a fatal error.",
                        "[core.py:1062] RuntimeError: simulated crash",
                        "(APIServer pid=4242) ERROR ",
                        "[async_llm.py:487] AsyncLLM output_handler failed.",
                        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",
                        "(APIServer pid=4242) CRITICAL ",
                        "[launcher.py:116] VLLM Engine failed, terminating server.")
                .doesNotContainPattern("] Engine failed, terminating server")
                .doesNotContain("fatal error: ");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> running.startNumber() == 2 && accepts(running.properties.port()));
    }

    @Test
    void crashLoopCrashesEveryStart() {
        running = RunningSimulator.serving(
                workDir,
                "preload.enabled=false",
                "faults.crash-loop-uptime=200ms",
                "auto-restart-delay=100ms",
                "load-time=100ms");
        running.simulator.setFault(Fault.CRASH_LOOP, true, FaultSet.Scope.INFERENCE);
        await().atMost(Duration.ofSeconds(15)).until(() -> running.startNumber() >= 4);
        running.simulator.setFault(Fault.CRASH_LOOP, false, FaultSet.Scope.INFERENCE);
        int settled = running.startNumber();
        await().atMost(Duration.ofSeconds(10)).until(() -> accepts(running.properties.port()));
        assertThat(running.startNumber()).isBetween(settled, settled + 1);
    }

    @Test
    void stopLeavesThePortClosed() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        running.simulator.engine().stop().block(Duration.ofSeconds(5));
        assertRefused(running.properties.port());
        assertThat(running.engineLog()).contains("Shutting down FastAPI HTTP server");
    }
}
