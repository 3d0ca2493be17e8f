package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.FileSystemUtils;
import tools.jackson.databind.JsonNode;

/**
 * readygate against the simulator as an SGLang engine ({@code readygate.simulator.engine=sglang}): the dialect found
 * from the engine's own answers, and every SGLang start (cold, weight-cache hit, fallback to disk with its reason)
 * attributed live from the lines the engine writes in SGLang's formats, as the fixtures of {@code
 * SglangLogCorpusTests} hold them, and the GPU memory of a cache hit split between the daemon's process and the
 * scheduler's by SGLang's process names.
 */
class SglangStartsTests {

    @TempDir
    Path workDir;

    /** readygate in front of the simulated SGLang engine, reading its log, the dialect left to find. */
    private ConfigurableApplicationContext readygate(RunningSimulator engine, Path sim, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.reactor.netty.shutdown-quiet-period=0s",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4"));
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    @Test
    void everySglangStartIsAttributedFromItsOwnLogLines() throws Exception {
        Path sim = workDir.resolve("engine");
        // SGLang's socket and ready files, in a directory short enough for a Unix socket's path (108 bytes at most:
        // the name holds the GPU's UUID).
        Path sockets = Files.createTempDirectory("rg-sg");
        try (RunningSimulator engine = RunningSimulator.serving(sim, "engine=sglang", "preload.socket-dir=" + sockets);
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        sim,
                        "--readygate.gpu.nvidia-smi=" + engine.nvidiaSmi(),
                        "--readygate.evidence.daemon-socket-dir=" + sockets,
                        "--readygate.gpu.interval=1s",
                        "--readygate.gpu.timeout=1s",
                        // Three starts in a row on purpose: not a restart loop to hold.
                        "--readygate.restart.loop-hold=0s")) {
            WebTestClient client = client(readygate);
            JsonNode first = awaitRecords(client, 1).get(0);
            assertThat(first.get("path").asString()).isEqualTo("cold");
            assertThat(first.get("outcome").asString()).isEqualTo("ready");
            JsonNode seen = status(client).at("/engine");
            assertThat(seen.get("dialect").asString()).isEqualTo("sglang");
            assertThat(seen.get("unseen").size()).isPositive();

            engine.restartAndAwait(StartupPath.PRELOAD_HIT);
            JsonNode hit = awaitRecords(client, 2).get(0);
            assertThat(hit.get("path").asString()).as(hit.toString()).isEqualTo("preload_hit");
            assertThat(hit.get("outcome").asString()).isEqualTo("ready");
            // The daemon's process holds the cache, the scheduler its own share: told apart by SGLang's process names.
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> !status(client)
                                    .at("/restarts/history/0/memory/atReady")
                                    .isNull()
                            && !status(client)
                                    .at("/restarts/history/0/memory/atReady")
                                    .isMissingNode());
            JsonNode owners = status(client).at("/restarts/history/0/memory/atReady/byOwnerMiB");
            assertThat(owners.get("preload_daemon").asLong())
                    .as(owners.toString())
                    .isPositive();
            assertThat(owners.get("engine").asLong()).as(owners.toString()).isPositive();
            assertThat(hit.get("evidence").valueStream().map(JsonNode::asString))
                    .anyMatch(line -> line.startsWith("log: Mapped ") && line.contains("(sglang ipc mode)"))
                    // The daemon's own state: its ready file beside its socket, what it holds.
                    .anyMatch(line -> line.startsWith("daemon: SGLang daemon ready file sglang_weight_cache_GPU-")
                            && line.contains(
                                    ", model Qwen/Qwen3-0.6B revision c1899de289a04d12100db370d81485cdf75e47ca,"
                                            + " tp rank 0 of 1, socket present"));
            assertThat(status(client)
                            .at("/restarts/evidence/daemonReadyFilesNow")
                            .size())
                    .as(status(client).at("/restarts/evidence").toString())
                    .isEqualTo(1);

            engine.restartAndAwait(StartupPath.PRELOAD_FALLBACK);
            JsonNode fallback = awaitRecords(client, 3).get(0);
            assertThat(fallback.get("path").asString()).isEqualTo("preload_fallback");
            assertThat(fallback.get("fallbackReason").asString()).startsWith("Daemon socket not found at ");
            assertThat(fallback.get("outcome").asString()).isEqualTo("ready");

            assertThat(ReadygateClients.prometheus(client))
                    .contains("readygate_engine_starts_total{path=\"preload_hit\"}")
                    .contains("readygate_engine_starts_total{path=\"preload_fallback\"}");
        } finally {
            FileSystemUtils.deleteRecursively(sockets);
        }
        String log = Files.readString(sim.resolve("engine.log"));
        assertThat(log)
                .containsPattern(
                        "(?m)^\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d] server_args=ServerArgs\\(model_path=")
                .contains("[IpcModelLoader] Fetched ")
                .contains("falling back to disk load")
                .contains("The server is fired up and ready to roll!")
                .doesNotContain("EngineCore");
        // The daemon's lines, in its own log and its own format (weight_cache/daemon.py @366325d6).
        assertThat(Files.readString(sim.resolve("preload-daemon.log")))
                .containsPattern(
                        "(?m)^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d,\\d{3} \\[Daemon gpu=0 tp_rank=0] INFO"
                                + " \\[WeightCacheDaemon gpu=0 tp_rank=0] Exported 339 tensors as IPC handles\\. Ready to serve\\.$");
    }

    @Test
    void sglangsWarmupIsLoadingNotADeadEngine() throws Exception {
        Path sim = workDir.resolve("engine");
        // SGLang's port is open while its own warmup request runs, and /health answers 503 until it came back.
        try (RunningSimulator engine = RunningSimulator.serving(sim, "engine=sglang", "timing.sglang-warmup=12s");
                ConfigurableApplicationContext readygate = readygate(engine, sim)) {
            WebTestClient client = client(readygate);
            List<String> seen = new CopyOnWriteArrayList<>();
            try {
                await().atMost(Duration.ofSeconds(12)).until(() -> {
                    String now = reason(client);
                    seen.add(now);
                    return "engine_loading".equals(now);
                });
            } catch (ConditionTimeoutException ex) {
                throw new AssertionError("reasons seen: " + new LinkedHashSet<>(seen), ex);
            }
            assertThat(ReadygateClients.readyz(client)).isEqualTo(503);
            ReadygateClients.awaitReady(client);
            assertThat(status(client).at("/engine/dialect").asString()).isEqualTo("sglang");
            assertThat(Files.readString(sim.resolve("engine.log")))
                    .contains("The server is fired up and ready to roll!");
        }
    }

    /** The reason {@code /readyz} gives now (its engine component's), or its whole body in brackets when none. */
    private static String reason(WebTestClient client) {
        JsonNode answer = ReadygateClients.json(
                ReadygateClients.readyzBody(client).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        JsonNode reason = answer.at("/components/engine/details/reason");
        return reason.isString() ? reason.asString() : "(" + answer + ")";
    }

    @Test
    void theSimulatorAnswersAsSglangDoes() throws Exception {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "engine=sglang")) {
            WebTestClient client =
                    WebTestClient.bindToServer().baseUrl(engine.baseUrl()).build();
            client.get()
                    .uri("/v1/models")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.data[0].owned_by")
                    .isEqualTo("sglang");
            client.get()
                    .uri("/get_server_info")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.version")
                    .isNotEmpty();
            // Its warmup first: 503 from the open port, then 200.
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> client.get()
                                    .uri("/health_generate")
                                    .exchange()
                                    .returnResult(Void.class)
                                    .getStatus()
                                    .value()
                            == 200);
            client.get().uri("/version").exchange().expectStatus().isNotFound();
            client.get()
                    .uri("/metrics")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .value(text -> assertThat(text)
                            .contains("sglang:num_running_reqs{model_name=")
                            .contains("sglang:generation_tokens_total{model_name=")
                            .doesNotContain("vllm:")
                            .doesNotContain("process_start_time_seconds"));
        }
    }

    private static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> status(client).at("/restarts/history").size() >= count);
        return status(client).at("/restarts/history");
    }
}
