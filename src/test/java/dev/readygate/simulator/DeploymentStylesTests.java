package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The deployment styles the simulator writes so that end-to-end tests meet them (issue 18): log collector prefixes,
 * data parallel, speculative decoding, a loader without {@code Loading weights took}, a start that dies before
 * serving, vLLM 0.10 to 0.30's formats, and the unconfirmed preload lines.
 */
class DeploymentStylesTests {

    @TempDir
    Path workDir;

    RunningSimulator running;

    @AfterEach
    void stop() {
        if (running != null) {
            running.close();
        }
    }

    @Test
    void composePrefixPrecedesEveryLineOfBothLogs() {
        running = RunningSimulator.serving(workDir, "deployment.log-prefix=compose", "deployment.service-name=qwen3");
        running.restartAndAwait(StartupPath.PRELOAD_HIT);

        assertThat(running.engineLog().lines()).isNotEmpty().allMatch(line -> line.startsWith("qwen3  | "));
        assertThat(running.engineLog())
                .contains("qwen3  | (APIServer pid=4252) INFO:     Application startup complete.");
        assertThat(running.daemonLog().lines()).isNotEmpty().allMatch(line -> line.startsWith("qwen3  | "));
    }

    @Test
    void timestampedCollectorPrefixesCarryTheYear() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.log-prefix=iso-bracket");
        assertThat(running.engineLog().lines())
                .allMatch(line -> line.matches("\\[\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ] .*"));
        running.close();

        running = RunningSimulator.serving(
                workDir.resolve("desktop"), "preload.enabled=false", "deployment.log-prefix=docker-desktop");
        assertThat(running.engineLog().lines())
                .allMatch(line -> line.matches("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} \\| .*"));
        running.close();

        running =
                RunningSimulator.serving(workDir.resolve("cri"), "preload.enabled=false", "deployment.log-prefix=cri");
        assertThat(running.engineLog().lines())
                .allMatch(line -> line.matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{9}Z stdout F .*"));
    }

    @Test
    void dataParallelCoresLogTheirOwnStartTheLastOneLateAndMetricsComeFromMultiprocessMode() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.data-parallel-size=2");

        assertThat(running.engineLog())
                .containsSubsequence(
                        "(APIServer pid=4242) INFO ",
                        "non-default args: {",
                        "'data_parallel_size': 2",
                        "Defaulting api_server_count to data_parallel_size (2).",
                        "(EngineCore_DP0 pid=4243) INFO ",
                        "Initializing a V1 LLM engine (v0.31.0)",
                        "(EngineCore_DP0 pid=4243) INFO ",
                        "Loading weights took",
                        // The second core starts late: its header after the first core's weights (issue 18, item 6).
                        "(EngineCore_DP1 pid=4244) INFO ",
                        "Initializing a V1 LLM engine (v0.31.0)",
                        "(EngineCore_DP1 pid=4244) INFO ",
                        "Starting to load model",
                        "(EngineCore_DP1 pid=4244) INFO ",
                        "Loading weights took",
                        "(ApiServer_0 pid=4245) INFO ",
                        "Starting vLLM server on",
                        "(ApiServer_0 pid=4245) INFO:     Application startup complete.",
                        "(ApiServer_1 pid=4246) INFO:     Application startup complete.");
        running.postJson("/v1/completions", Map.of("prompt", "hello world", "max_tokens", 4, "ignore_eos", true));
        String metrics = running.metricsText();
        assertThat(metrics)
                .doesNotContain("process_start_time_seconds")
                .doesNotContain("_created")
                .containsPattern(
                        "(?m)^vllm:cache_config_info\\{.*engine=\"0\".*kv_cache_size_tokens=\"65536\".*} 1\\.0$")
                .containsPattern(
                        "(?m)^vllm:cache_config_info\\{.*engine=\"1\".*kv_cache_size_tokens=\"65536\".*} 1\\.0$")
                .contains("vllm:num_requests_running{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 0.0");
        assertThat(Metrics.value(metrics, "vllm:generation_tokens_total")).isEqualTo(4);
        assertThat(Metrics.value(metrics, "vllm:request_success_total")).isEqualTo(1);
    }

    @Test
    void tensorParallelWorkersWriteThePerRankLinesAndTheCoreKeepsItsOwn() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.tensor-parallel-size=2");

        String log = running.engineLog();
        assertThat(log)
                .containsSubsequence(
                        "(APIServer pid=4242) INFO ",
                        "'tensor_parallel_size': 2",
                        "(EngineCore pid=4243) INFO ",
                        "Initializing a V1 LLM engine (v0.31.0)",
                        "tensor_parallel_size=2, pipeline_parallel_size=1, data_parallel_size=1",
                        "(Worker_TP0 pid=4244) INFO ",
                        "Starting to load model Qwen/Qwen3-0.6B...",
                        "(Worker_TP1 pid=4245) INFO ",
                        "Starting to load model Qwen/Qwen3-0.6B...",
                        "(Worker_TP0 pid=4244) INFO ",
                        "Loading weights took",
                        "(Worker_TP0 pid=4244) INFO ",
                        "Model loading took",
                        "(Worker_TP1 pid=4245) INFO ",
                        "Loading weights took",
                        "(Worker_TP1 pid=4245) INFO ",
                        "Model loading took",
                        "(Worker_TP0 pid=4244) INFO ",
                        "torch_compile_cache/4f1c2e9a7b/rank_0_0/backbone",
                        "(Worker_TP1 pid=4245) INFO ",
                        "torch_compile_cache/4f1c2e9a7b/rank_1_0/backbone",
                        "(Worker_TP0 pid=4244) INFO ",
                        "Available KV cache memory: ",
                        "(EngineCore pid=4243) INFO ",
                        "GPU KV cache size: 65,536 tokens",
                        "(Worker_TP0 pid=4244) INFO ",
                        "Graph capturing finished",
                        "(Worker_TP1 pid=4245) INFO ",
                        "Graph capturing finished",
                        "(EngineCore pid=4243) INFO ",
                        "init engine (profile, create kv cache, warmup model) took",
                        "(APIServer pid=4242) INFO:     Application startup complete.");
        // Rank 0 alone sizes the KV cache in 0.31's log; the core writes no per-rank line of its own.
        assertThat(log.lines().filter(line -> line.contains("Available KV cache memory")))
                .singleElement()
                .asString()
                .startsWith("(Worker_TP0 pid=4244) ");
        assertThat(log.lines().filter(line -> line.startsWith("(EngineCore pid=4243)")))
                .noneMatch(line -> line.contains("Loading weights took")
                        || line.contains("Model loading took")
                        || line.contains("torch.compile")
                        || line.contains("Graph capturing"));

        // The next start's pids follow on: no worker shares the last start's.
        running.restartAndAwait(StartupPath.COLD);
        assertThat(running.engineLog()).contains("(Worker_TP1 pid=4255) INFO ");
    }

    @Test
    void tensorParallelWorkersOfDataParallelCoresAndOfLegacyFormatsAreNamedAsVllmNamesThem() {
        running = RunningSimulator.serving(
                workDir,
                "preload.enabled=false",
                "deployment.tensor-parallel-size=2",
                "deployment.data-parallel-size=2");
        // Each core's workers, after both cores and both API servers (4245, 4246).
        assertThat(running.engineLog())
                .contains(
                        "(Worker_DP0_TP0 pid=4247) INFO ",
                        "(Worker_DP0_TP1 pid=4248) INFO ",
                        "(Worker_DP1_TP0 pid=4249) INFO ",
                        "(Worker_DP1_TP1 pid=4250) INFO ",
                        "rank_1_1/backbone");
        running.close();

        running = RunningSimulator.serving(
                workDir.resolve("legacy"),
                "preload.enabled=false",
                "deployment.tensor-parallel-size=2",
                "deployment.formats=legacy");
        String legacy = running.engineLog();
        // 0.10.1: VllmWorker TP<r>, and every rank logs its KV cache memory (real 0.10.1 logs).
        assertThat(legacy)
                .contains("(VllmWorker TP0 pid=4244) INFO ", "(VllmWorker TP1 pid=4245) INFO ")
                .containsSubsequence(
                        "(EngineCore_0 pid=4243) INFO ", "Initializing", "(VllmWorker TP0 pid=4244) INFO ", "Loading");
        assertThat(legacy.lines().filter(line -> line.contains("Available KV cache memory")))
                .hasSize(2);
    }

    @Test
    void pipelineParallelWorkersAreOnePerStageAndRankNamedAsVllmsMultiprocExecutorNamesThem() {
        running = RunningSimulator.serving(
                workDir,
                "preload.enabled=false",
                "deployment.pipeline-parallel-size=2",
                "deployment.tensor-parallel-size=2");
        String log = running.engineLog();
        // multiproc_executor.py: "Worker", then _PP<pp_rank> and _TP<tp_rank> where that size is above 1.
        assertThat(log)
                .contains(
                        "(Worker_PP0_TP0 pid=4244) INFO ",
                        "(Worker_PP0_TP1 pid=4245) INFO ",
                        "(Worker_PP1_TP0 pid=4246) INFO ",
                        "(Worker_PP1_TP1 pid=4247) INFO ",
                        "'pipeline_parallel_size': 2, 'tensor_parallel_size': 2",
                        "tensor_parallel_size=2, pipeline_parallel_size=2, data_parallel_size=1",
                        "rank_3_0/backbone");
        assertThat(log.lines().filter(line -> line.contains("Loading weights took")))
                .hasSize(4);
        running.close();

        running = RunningSimulator.serving(
                workDir.resolve("stages"), "preload.enabled=false", "deployment.pipeline-parallel-size=2");
        assertThat(running.engineLog()).contains("(Worker_PP0 pid=4244) INFO ", "(Worker_PP1 pid=4245) INFO ");
    }

    @Test
    void rayWorkersLinesComeThroughTheEngineCoresOutputBehindBothPrefixes() {
        running = RunningSimulator.serving(
                workDir,
                "preload.enabled=false",
                "deployment.pipeline-parallel-size=2",
                "deployment.distributed-executor-backend=ray");
        String log = running.engineLog();
        // Ray prefixes an actor's lines with its class and pid; vLLM's engine core prints them behind its own, as the
        // fixture v0.16-ray-pipeline-parallel.log shows (one node here: no ip).
        assertThat(log)
                .contains(
                        "'distributed_executor_backend': 'ray', 'pipeline_parallel_size': 2",
                        "(EngineCore pid=4243) (RayWorkerWrapper pid=4244) INFO ",
                        "(EngineCore pid=4243) (RayWorkerWrapper pid=4245) INFO ")
                .doesNotContain("(Worker_PP");
        assertThat(log.lines()
                        .filter(line -> line.contains("RayWorkerWrapper") && line.contains("Loading weights took")))
                .hasSize(2);
    }

    @Test
    void speculativeDecodingLoadsTheDrafterAfterTheModel() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.speculative-decoding=true");

        String log = running.engineLog();
        assertThat(log)
                .contains("'speculative_config': {'method': 'eagle3'")
                .contains("speculative_config=SpeculativeConfig(method='eagle3'")
                .containsSubsequence("Loading weights took", "Loading drafter model...", "Loading weights took");
        assertThat(log.lines().filter(line -> line.contains("Loading weights took")))
                .hasSize(2);
    }

    @Test
    void loaderWithoutALoadingWeightsLineLogsOnlyModelLoading() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.load-format=runai-streamer");

        assertThat(running.engineLog())
                .contains("'load_format': 'runai_streamer'")
                .contains("load_format=runai_streamer")
                .contains("Model loading took 1.12 GiB memory and ")
                .contains("init engine (profile, create kv cache, warmup model) took ")
                .doesNotContain("Loading weights took");
    }

    @Test
    void startupFailureWritesVllmsFailureLinesAndTheEngineNeverListens() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "auto-restart=false");
        running.simulator.setFault(Fault.STARTUP_FAILURE, true, FaultSet.Scope.INFERENCE);
        running.simulator.restart(StartupPath.COLD).block(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> running.simulator.engine().lastFailure() != null);

        String log = running.engineLog();
        assertThat(log)
                .containsSubsequence(
                        "Loading weights took",
                        "(EngineCore pid=4253) ERROR ",
                        "[core.py:1100] EngineCore failed to start.",
                        "[core.py:1100] Traceback (most recent call last):",
                        "[core.py:1100] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                        "(EngineCore pid=4253) Process EngineCore:",
                        "(EngineCore pid=4253) torch.OutOfMemoryError: CUDA out of memory.",
                        "(APIServer pid=4252) Traceback (most recent call last):",
                        "(APIServer pid=4252) RuntimeError: Engine core initialization failed. See root cause above. "
                                + "Failed core proc(s): {'EngineCore': 1}")
                .doesNotContain("Engine start failed");
        assertThat(log.substring(log.indexOf("pid=4252)")))
                .doesNotContain("Application startup complete.")
                .doesNotContain("init engine");
        assertThat(running.simulator.engine().lastFailure()).startsWith("torch.OutOfMemoryError: CUDA out of memory.");
        assertThat(running.simulator.engine().phase()).isEqualTo(SimulatedEngine.Phase.STOPPED);
        assertThat(EngineLifecycleTests.accepts(running.properties.port())).isFalse();
    }

    @Test
    void configErrorFailsInTheApiServerBeforeAnyEngineCoreAsTheFixtureShowsAndNeverListens() throws IOException {
        running = RunningSimulator.serving(
                workDir, "preload.enabled=false", "auto-restart=false", "hf-token=hf_SECRETvalue");
        // Through the admin API, as any other fault.
        running.fault("config-error", false);
        running.simulator.restart(StartupPath.COLD).block(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> running.simulator.engine().lastFailure() != null);

        String log = running.engineLog();
        String start = log.substring(log.indexOf("(APIServer pid=4252) INFO "));
        List<String> fixture =
                Files.readAllLines(Path.of("src/test/resources/vllm-logs/v0.31-api-server-validation-error.log"))
                        .stream()
                        .dropWhile(line -> !line.contains(") Traceback"))
                        .map(line -> line.replace("(APIServer pid=1)", "(APIServer pid=4252)"))
                        .toList();
        assertThat(start.lines().dropWhile(line -> !line.contains(") Traceback")))
                .containsExactlyElementsOf(fixture);
        assertThat(start)
                .containsSubsequence(
                        "version 0.31.0", "non-default args: {", "'quantization': 'awq_marlin'", ") Traceback")
                .doesNotContain("EngineCore")
                .doesNotContain("Application startup complete.");
        assertThat(running.simulator.engine().lastFailure())
                .isEqualTo("pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig");
        assertThat(running.simulator.engine().phase()).isEqualTo(SimulatedEngine.Phase.STOPPED);
        assertThat(EngineLifecycleTests.accepts(running.properties.port())).isFalse();
    }

    @Test
    void configErrorWithAutoRestartLoopsUntilItIsCleared() {
        loopsUntilCleared(Fault.CONFIG_ERROR, StartupPath.COLD, "validation error for VllmConfig");
    }

    @Test
    void startupFailureWithAutoRestartLoopsUntilItIsCleared() {
        loopsUntilCleared(Fault.STARTUP_FAILURE, StartupPath.PRELOAD_FALLBACK, "EngineCore failed to start.");
    }

    /** Every start fails under {@code fault} (its line ends {@code failure}); the container restarts the process. */
    private void loopsUntilCleared(Fault fault, StartupPath path, String failure) {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "auto-restart-delay=100ms");
        running.simulator.setFault(fault, true, FaultSet.Scope.INFERENCE);
        running.simulator.restart(path).block(Duration.ofSeconds(5));
        // The container restarts the process, which dies again.
        await().atMost(Duration.ofSeconds(10)).until(() -> running.startNumber() >= 4);
        assertThat(running.engineLog().lines().filter(line -> line.endsWith(failure)))
                .hasSizeGreaterThanOrEqualTo(2);

        running.simulator.setFault(fault, false, FaultSet.Scope.INFERENCE);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> running.simulator.engine().phase() == SimulatedEngine.Phase.SERVING);
    }

    @Test
    void legacyFormatsKeepTheOlderUsageChunkMetricsAndDaemonLine() {
        running = RunningSimulator.serving(workDir, "deployment.formats=legacy");

        assertThat(running.daemonLog())
                .contains(
                        "[daemon.py:402] ===== Weight cache daemon READY: all 1 ranks serving in the default socket dir "
                                + "=====");
        assertThat(running.metricsText()).containsPattern("(?m)^process_start_time_seconds \\d\\.\\d+E9$");
        String body = EngineApiContractTests.postForString(
                running,
                "/v1/completions",
                Map.of(
                        "prompt",
                        "hello",
                        "max_tokens",
                        2,
                        "stream",
                        true,
                        "stream_options",
                        Map.of("include_usage", true)));
        List<JsonNode> events = Sse.jsonEvents(body);
        JsonNode usage = events.getLast().get("usage");
        assertThat(usage.has("prompt_tokens_details")).isTrue();
        assertThat(usage.get("prompt_tokens_details").isNull()).isTrue();
    }

    @Test
    void daemonReadyLineNamesAConfiguredSocketDir() throws IOException {
        Path sockets = Files.createTempDirectory("rg");
        try {
            running = RunningSimulator.serving(workDir, "preload.socket-dir=" + sockets);
            assertThat(running.daemonLog())
                    .contains("===== Weight cache daemon READY: node 0/1 serving 1 local rank(s) x 1 role(s) in "
                            + sockets + " =====");
        } finally {
            running.close();
            running = null;
            Files.deleteIfExists(sockets.resolve("vllm_weight_cache_gpu0.sock"));
            Files.deleteIfExists(sockets);
        }
    }

    @Test
    void unconfirmedPreloadLinesAreConfigurable() {
        running = RunningSimulator.serving(
                workDir,
                "preload.held-outside-line=Weights are held outside this process: %.1f GiB in the daemon",
                "preload.hit-model-loading=weights");
        String before = running.engineLog();
        running.restartAndAwait(StartupPath.PRELOAD_HIT);

        assertThat(running.engineLog().substring(before.length()))
                .contains("Weights are held outside this process: 1.1 GiB in the daemon")
                .contains("Model loading took 1.12 GiB memory and ");
        running.close();

        running = RunningSimulator.serving(workDir.resolve("none"), "preload.held-outside-line=");
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        assertThat(running.engineLog())
                .contains("Mapped 339 tensors")
                .contains("Model loading took 0.00 GiB memory")
                .doesNotContain("held outside");
    }

    @Test
    void restoredEnginesOutputGoesWhereConfigured() throws IOException {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "snapshot.restore-log=child-log");
        running.restartAndAwait(StartupPath.SNAPSHOT_RESTORE);
        assertThat(Files.readString(workDir.resolve("snapshot/child.log")))
                .contains("Starting vLLM server on")
                .contains("Application startup complete.");
    }
}
