package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.readiness.EngineState;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Restart tracking against the simulator: every restart path attributed from the evidence the engine leaves, with its
 * phases, in {@code /status}, the record file and the metrics, while readygate keeps running and across a readygate
 * restart.
 */
class RestartTrackingTests {

    @TempDir
    Path workDir;

    static final JsonMapper json = JsonMapper.builder().build();

    ConfigurableApplicationContext readygate(RunningSimulator engine, String... extra) {
        Path sim = workDir.resolve("engine");
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                // Reactor Netty's event loops stop at once when the context closes, not after a 2 s quiet period (the
                // server has shut down gracefully by then): each test's readygate closes about 2 s sooner.
                "--spring.reactor.netty.shutdown-quiet-period=0s",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.evidence.snapshot-dir=" + sim.resolve("snapshot"),
                "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                "--readygate.evidence.daemon-socket-dir=" + sim.resolve("weight-cache"),
                "--readygate.evidence.daemon-log=" + sim.resolve("preload-daemon.log"),
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4",
                "--readygate.node.name=node-a"));
        if (Stream.of(extra).noneMatch(setting -> setting.startsWith("--readygate.restart.loop-hold="))) {
            // The tests restart the engine seconds after it started, on purpose: by the rule a crash loop's second
            // start, held for loop-hold, except in the tests of the restart loop, which set it.
            args.add("--readygate.restart.loop-hold=0s");
        }
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> status(client).at("/restarts/history").size() >= count);
        return status(client).at("/restarts/history");
    }

    @Test
    void everyRestartPathIsAttributedWhileReadygateKeepsRunningAndTheHistorySurvivesReadygate() throws Exception {
        RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"));
        try (engine) {
            List<String> paths = new ArrayList<>();
            List<String> fallbackReasons = new ArrayList<>();
            // Five starts in a row on purpose: not a restart loop to hold.
            try (ConfigurableApplicationContext readygate = readygate(engine, "--readygate.restart.loop-hold=0s")) {
                WebTestClient client = client(readygate);
                JsonNode first = awaitRecords(client, 1).get(0);
                assertThat(first.get("firstSeen").booleanValue()).isTrue();
                assertThat(first.get("outcome").asString()).isEqualTo("ready");
                int records = 1;
                for (StartupPath path : new StartupPath[] {
                    StartupPath.PRELOAD_HIT,
                    StartupPath.PRELOAD_FALLBACK,
                    StartupPath.SNAPSHOT_RESTORE,
                    StartupPath.COLD
                }) {
                    engine.restartAndAwait(path);
                    JsonNode latest = awaitRecords(client, ++records).get(0);
                    paths.add(latest.get("path").asString());
                    if (!latest.get("fallbackReason").isNull()) {
                        fallbackReasons.add(latest.get("fallbackReason").asString());
                    }
                    assertThat(latest.get("evidence").size()).isPositive();
                    assertThat(latest.get("evidence").valueStream().map(JsonNode::asString))
                            .anyMatch(line -> line.startsWith("daemon log: Weight cache daemon READY at "));
                    assertThat(latest.get("firstSeen").booleanValue()).isFalse();
                    assertThat(latest.get("outcome").asString()).isEqualTo("ready");
                    assertThat(latest.get("readinessLatencySeconds").doubleValue())
                            .isPositive();
                    assertThat(latest.at("/phaseOffsetsSeconds/ready").doubleValue())
                            .isGreaterThanOrEqualTo(
                                    latest.at("/phaseOffsetsSeconds/health_ok").doubleValue());
                    assertThat(latest.get("engineStartSource").asString()).isEqualTo("process_start_time");
                    assertThat(latest.at("/node/node_name").asString()).isEqualTo("node-a");
                }
                String metrics = ReadygateClients.prometheus(client);
                assertThat(metrics)
                        .contains("readygate_engine_starts_total{path=\"snapshot_restore\"}")
                        .contains("readygate_readiness_latency_seconds_bucket{path=\"snapshot_restore\",le=\"1.0\"}")
                        .contains("readygate_phase_duration_seconds_count{path=\"snapshot_restore\",phase=\"ready\"}")
                        .containsPattern(
                                "readygate_engine_info\\{model=\"Qwen/Qwen3-0.6B\",readygate_version=\"[^\"]+\","
                                        + "vllm_version=\"0.31.0\"} 1")
                        .contains("readygate_kv_cache_size_tokens 65536.0")
                        .contains("readygate_preload_fallbacks_total{reason=\"daemon_unavailable\"} 1.0");
                String csv = client.get()
                        .uri("/status/restarts.csv")
                        .exchange()
                        .expectStatus()
                        .isOk()
                        .expectBody(String.class)
                        .returnResult()
                        .getResponseBody();
                assertThat(csv.lines()).hasSize(6);
                JsonNode evidenceNow = status(client).at("/restarts/evidence");
                assertThat(evidenceNow.get("daemonSocketsNow").intValue()).isEqualTo(1);
                assertThat(evidenceNow.get("snapshotReleasedAt").asString()).doesNotStartWith("never");
                assertThat(csv.lines().skip(1)).anyMatch(line -> line.contains(",snapshot_restore,"));
                // Pages: the first two starts, and where the next page begins.
                var firstPage = client.get()
                        .uri("/status/restarts.json?limit=2")
                        .exchange()
                        .expectStatus()
                        .isOk()
                        .expectHeader()
                        .contentTypeCompatibleWith("application/json")
                        .expectBody(String.class)
                        .returnResult();
                JsonNode page =
                        tools.jackson.databind.json.JsonMapper.builder().build().readTree(firstPage.getResponseBody());
                assertThat(page.size()).isEqualTo(2);
                assertThat(firstPage.getResponseHeaders().getFirst("Link"))
                        .isEqualTo("</status/restarts.json?since="
                                + page.get(1).get("id").asString() + "&limit=2>; rel=\"next\"");
                client.get()
                        .uri("/status/restarts.csv?limit=0")
                        .exchange()
                        .expectStatus()
                        .isBadRequest()
                        .expectBody(String.class)
                        .value(message -> assertThat(message).contains("limit must be at least 1"));
                assertThat(status(client).at("/restarts/historyExport/json").asString())
                        .isEqualTo("/status/restarts.json");
            }
            assertThat(paths).containsExactly("preload_hit", "preload_fallback", "snapshot_restore", "cold");
            assertThat(fallbackReasons).singleElement().asString().startsWith("Cannot connect to weight cache daemon");
            Path file = workDir.resolve("state/restarts.jsonl");
            assertThat(Files.readAllLines(file)).hasSizeGreaterThanOrEqualTo(5);
            // readygate restarts: the history comes back.
            try (ConfigurableApplicationContext again = readygate(engine, "--readygate.restart.loop-hold=0s")) {
                JsonNode history = awaitRecords(client(again), 6);
                assertThat(history.get(0).get("firstSeen").booleanValue()).isTrue();
                assertThat(history.get(1).get("path").asString()).isEqualTo("cold");
                assertThat(history.get(2).get("path").asString()).isEqualTo("snapshot_restore");
            }
        }
    }

    @Test
    void cacheHitWithAnotherCheckpointsWeightsIsFlaggedAsWrongWeightsFromTheCache() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            engine.daemonHolds("qwen3-0.6b-finetune-step2000");
            engine.restartAndAwait(StartupPath.PRELOAD_HIT);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> status(client).path("reason").asString("").equals("canary_mismatch"));
            JsonNode latest = awaitRecords(client, 2).get(0);
            assertThat(latest.get("path").asString()).isEqualTo("preload_hit");
            assertThat(latest.get("wrongWeightsFromCache").booleanValue()).isTrue();
            assertThat(latest.get("outcome").asString()).isEqualTo("not_ready");
            assertThat(latest.get("notReadyReason").asString()).isEqualTo("canary_mismatch");
            await().atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(ReadygateClients.prometheus(client))
                            .contains("readygate_canary_mismatches_total{path=\"preload_hit\"} 1.0"));
        }
    }

    /** An engine that, once its crash-loop fault is on, crashes 1.5 s into every start and restarts 0.4 s later. */
    RunningSimulator crashLoopReady() {
        return RunningSimulator.serving(
                workDir.resolve("engine"),
                "preload.enabled=false",
                "faults.crash-loop-uptime=1500ms",
                "auto-restart-delay=200ms",
                "load-time=200ms");
    }

    @Test
    void startsTooCloseTogetherAreARestartLoop() {
        try (RunningSimulator engine = crashLoopReady();
                ConfigurableApplicationContext readygate = readygate(engine, "--readygate.restart.loop-starts=3")) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            engine.fault("crash-loop", false);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> status(client).at("/restarts/restartLoop").booleanValue());
            String metrics = ReadygateClients.prometheus(client);
            assertThat(metrics).contains("readygate_restart_loop 1.0");
        }
    }

    @Test
    void aCrashLoopHoldsReadinessAtNotReadyUntilAStartStaysUp() {
        try (RunningSimulator engine = crashLoopReady();
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        // The first seen start and the crash loop's first restart are no loop yet: that restart is
                        // held by the rule for second starts (the first seen start, dated by its log's header, did
                        // not stay up the hold), the next by the same rule, then by the loop.
                        "--readygate.restart.loop-starts=4",
                        // Longer than the first start can live before the fault, even on a loaded machine: the
                        // second start follows one that did not stay up the hold.
                        "--readygate.restart.loop-hold=30s",
                        "--readygate.restart.loop-hold-max=30s")) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            List<EngineState> states = StateChanges.recorded(readygate);
            int first = engine.latestStartNumber();
            engine.fault("crash-loop", false);
            await().atMost(Duration.ofSeconds(30)).until(() -> engine.latestStartNumber() >= first + 4);
            List<EngineState> sinceTheCrash = StateChanges.sinceTheFirstCrash(states);
            // Four crashes, and not one moment of traffic: the loop's second start (the first did not stay up the
            // hold) is held as well as every start once the loop is one.
            assertThat(sinceTheCrash).noneMatch(EngineState::acceptsTraffic);
            assertThat(sinceTheCrash)
                    .extracting(EngineState::kind)
                    .contains(EngineState.Kind.HELD, EngineState.Kind.DOWN);
            // The loop ends: the start that stays up is verified again once it has been up for the hold, and serves.
            engine.clearFault("crash-loop");
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> status(client).path("state").asString().equals("ready"));
        }
    }

    @Test
    void silentSnapshotRestoreIsAttributedFromReleaseJsonTheCountersAndTheManifest() throws Exception {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            Path log = workDir.resolve("engine/engine.log");
            int linesBefore = Files.readAllLines(log).size();
            engine.restartAndAwait(StartupPath.SNAPSHOT_RESTORE);
            JsonNode latest = awaitRecords(client, 2).get(0);

            // vLLM logs nothing for a restore: only the stopped engine's shutdown line came.
            assertThat(Files.readAllLines(log)
                            .subList(linesBefore, Files.readAllLines(log).size()))
                    .singleElement()
                    .asString()
                    .endsWith("[launcher.py:120] Shutting down FastAPI HTTP server.");
            assertThat(latest.get("path").asString()).isEqualTo("snapshot_restore");
            assertThat(latest.get("outcome").asString()).isEqualTo("ready");
            assertThat(latest.get("evidence").valueStream().map(JsonNode::asString))
                    .anyMatch(line -> line.startsWith("snapshot: release.json released this start at "))
                    // The count is the snapshotted engine's requests (its warm-up, readygate's probes and light
                    // checks).
                    .anyMatch(line -> line.matches("metrics: vllm:request_success_total was [1-9][0-9]* at the first"
                            + " scrape \\(counters restored from a snapshot image\\)"))
                    .contains("log: no weight loading or engine init lines for this start");
            // The canary passed against the manifest's oracle.
            assertThat(latest.at("/phaseOffsetsSeconds/canary_ok").isNumber()).isTrue();
        }
    }

    @Test
    void loaderThatLogsNoLoadingWeightsBehindAComposePrefixIsAColdStartTrustedToLearnTheCanary() {
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"),
                        "preload.enabled=false",
                        "deployment.load-format=runai-streamer",
                        "deployment.log-prefix=compose");
                // A canary the snapshot manifest's oracle does not answer: its expectation can only be learned.
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        "--readygate.probe.canary.prompt=The weather today is",
                        "--readygate.probe.canary.learn-when-start-path-unknown=false")) {
            WebTestClient client = client(readygate);
            JsonNode first = awaitRecords(client, 1).get(0);

            assertThat(first.get("path").asString()).isEqualTo("cold");
            assertThat(first.get("outcome").asString()).isEqualTo("ready");
            assertThat(first.get("vllmVersion").asString()).isEqualTo("0.31.0");
            assertThat(first.get("evidence").valueStream().map(JsonNode::asString))
                    .contains("log: no 'Loading weights took' line: load_format 'runai_streamer' logs none");
            // Weights from the engine's own loader: the canary learned its baseline from this start.
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> Files.exists(workDir.resolve("state/canary-baselines.json")));
        }
    }
}
