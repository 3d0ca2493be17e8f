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
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * Engine starts that only the engine log shows, against the simulator writing vLLM's deployment styles: a start that
 * dies before its port opens (recorded as failed, with vLLM's reason, counted, shown, and a restart loop when it
 * repeats), and a data-parallel engine (multiprocess {@code /metrics}, no {@code process_start_time_seconds}) restarting
 * before any traffic, faster than the probes see its port close. The logs come behind log collectors' prefixes.
 */
class EngineStartFailureTests {

    static final String OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.";

    @TempDir
    Path workDir;

    ConfigurableApplicationContext readygate(RunningSimulator engine, String... extra) {
        Path sim = workDir.resolve("engine");
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.evidence.snapshot-dir=" + sim.resolve("snapshot"),
                "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4",
                // Starts that fail on purpose, one after another: no restart-loop hold between them, and no light
                // generation checks, which would be traffic before the "before any traffic" restarts.
                "--readygate.restart.loop-hold=0s",
                "--readygate.probe.generation.enabled=false"));
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    static JsonNode history(WebTestClient client) {
        return status(client).at("/restarts/history");
    }

    static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(20)).until(() -> history(client).size() >= count);
        return history(client);
    }

    static List<JsonNode> failed(JsonNode history) {
        return history.valueStream()
                .filter(record -> record.get("outcome").asString().equals("failed"))
                .toList();
    }

    static double counter(String metrics, String series) {
        Matcher matcher = Pattern.compile(Pattern.quote(series) + " (\\S+)").matcher(metrics);
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : Double.NaN;
    }

    /**
     * Once readygate recorded the engine's first start ready, turns {@code fault} on and crashes the engine: its next
     * start (the container's) fails. Returns readygate's status once it records the failed start and tells {@code
     * start_failed}; the fault is off again, for the start after.
     */
    static JsonNode failTheNextStart(RunningSimulator engine, WebTestClient client, String fault) {
        assertThat(awaitRecords(client, 1).get(0).get("outcome").asString()).isEqualTo("ready");
        engine.fault(fault, false);
        engine.crash();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            JsonNode now = status(client);
            return !failed(now.at("/restarts/history")).isEmpty()
                    && now.get("reason").asString().equals("start_failed");
        });
        JsonNode status = status(client);
        engine.clearFault(fault);
        return status;
    }

    @Test
    void startThatDiesBeforeServingIsRecordedAsFailedWithVllmsReasonCountedAndShown() throws Exception {
        // The container starts the engine again 3 s after it died: long enough to see the failed start's state.
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"),
                        "preload.enabled=false",
                        "deployment.log-prefix=docker-desktop",
                        "auto-restart-delay=3s");
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            // The engine crashes; the container starts it again, and that start runs out of GPU memory while it
            // profiles: its port never opens.
            JsonNode status = failTheNextStart(engine, client, "startup-failure");
            JsonNode failure = failed(status.at("/restarts/history")).getLast();
            assertThat(failure.get("startFailure").asString()).startsWith(OOM);
            assertThat(failure.get("notReadyReason").asString()).isEqualTo("start_failed");
            assertThat(failure.get("path").asString()).isEqualTo("cold");
            assertThat(failure.get("firstSeen").booleanValue()).isFalse();
            assertThat(failure.get("engineStartSource").asString()).isEqualTo("log");
            assertThat(failure.get("readinessLatencySeconds").isNull()).isTrue();
            assertThat(failure.at("/phaseOffsetsSeconds").propertyNames()).containsExactly("engine_start");
            assertThat(failure.at("/loggedDurations/weights_loading").isNumber())
                    .isTrue();
            // The engine is down with vLLM's reason until the next start.
            assertThat(status.get("state").asString()).isEqualTo("down");
            assertThat(status.get("detail").asString()).startsWith(OOM);
            assertThat(client.get()
                            .uri("/readyz")
                            .exchange()
                            .expectStatus()
                            .isEqualTo(503)
                            .expectBody(String.class)
                            .returnResult()
                            .getResponseBody())
                    .contains("start_failed");
            String metrics = ReadygateClients.prometheus(client);
            assertThat(counter(metrics, "readygate_engine_start_failures_total{path=\"cold\"}"))
                    .isGreaterThanOrEqualTo(1);
            assertThat(counter(metrics, "readygate_engine_start_failures_total{path=\"preload_hit\"}"))
                    .isZero();

            // The fault is off: the next start serves, and the history keeps the failure, on disk too.
            await().atMost(Duration.ofSeconds(20))
                    .until(() ->
                            history(client).get(0).get("outcome").asString().equals("ready")
                                    && history(client).size() >= 3);
            assertThat(Files.readAllLines(workDir.resolve("state/restarts.jsonl")))
                    .anyMatch(line ->
                            line.contains("\"outcome\":\"failed\"") && line.contains("\"startFailure\":\"" + OOM));
            String csv = client.get()
                    .uri("/status/restarts.csv")
                    .exchange()
                    .expectBody(String.class)
                    .returnResult()
                    .getResponseBody();
            assertThat(csv.lines()).anyMatch(line -> line.contains(",failed,start_failed," + OOM));
        }
    }

    @Test
    void configurationErrorInTheApiServerIsRecordedAsAFailedStartWithPydanticsValidationError() {
        String title = "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig";
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"), "preload.enabled=false", "auto-restart-delay=3s");
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            // The engine crashes; the container starts it again, and the API server refuses its configuration before
            // any engine core exists: its port never opens.
            JsonNode status = failTheNextStart(engine, client, "config-error");
            JsonNode failure = failed(status.at("/restarts/history")).getLast();
            // pydantic's title and its message from the next line, the input it echoes never read (issue 28 item 2).
            String reason = title + ": Value error, Cannot find the config file for awq_marlin";
            assertThat(failure.get("startFailure").asString()).isEqualTo(reason);
            assertThat(failure.get("notReadyReason").asString()).isEqualTo("start_failed");
            // No engine core ever ran: nothing tells how it would have loaded.
            assertThat(failure.get("path").asString()).isEqualTo("unknown");
            assertThat(failure.get("engineStartSource").asString()).isEqualTo("log");
            assertThat(status.get("state").asString()).isEqualTo("down");
            assertThat(status.get("detail").asString()).isEqualTo(reason);
        }
    }

    @Test
    void startsThatKeepDyingBeforeServingAreARestartLoop() {
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"), "preload.enabled=false", "deployment.log-prefix=compose");
                ConfigurableApplicationContext readygate = readygate(engine, "--readygate.restart.loop-starts=3")) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            engine.fault("startup-failure", false);
            engine.crash();

            // Only the log shows these starts: the port stays closed from the crash on.
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> failed(history(client)).size() >= 3);
            assertThat(status(client).at("/restarts/restartLoop").booleanValue())
                    .isTrue();
            assertThat(ReadygateClients.prometheus(client)).contains("readygate_restart_loop 1.0");
            JsonNode history = history(client);
            assertThat(failed(history))
                    .allSatisfy(record ->
                            assertThat(record.get("startFailure").asString()).startsWith(OOM));
            assertThat(failed(history).stream().map(record -> record.get("id").asString()))
                    .doesNotHaveDuplicates();
        }
    }

    @Test
    void dataParallelEngineWithMultiprocessMetricsRestartingBeforeAnyTrafficIsSeenOncePerRestart() {
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"),
                        "preload.enabled=false",
                        "deployment.data-parallel-size=2",
                        "deployment.log-prefix=iso-bracket");
                // No heavy probes (no traffic at all: every counter stays at zero), and /health so rarely that the
                // port's gap during a restart goes unseen: only the engine log can tell the restart.
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        "--readygate.probe.representative.enabled=false",
                        "--readygate.probe.canary.enabled=false",
                        "--readygate.probe.health-interval=30s",
                        "--readygate.probe.ready-interval=30s")) {
            WebTestClient client = client(readygate);
            JsonNode first = awaitRecords(client, 1).get(0);
            assertThat(first.get("outcome").asString()).isEqualTo("ready");
            String metrics = engine.engine()
                    .get()
                    .uri("/metrics")
                    .exchange()
                    .expectBody(String.class)
                    .returnResult()
                    .getResponseBody();
            assertThat(metrics)
                    .doesNotContain("process_start_time_seconds")
                    .contains("vllm:request_success_total{engine=\"1\"");
            assertThat(metrics.lines().filter(line -> line.startsWith("vllm:request_success_total")))
                    .allMatch(line -> line.endsWith(" 0.0"));

            for (int restarts = 1; restarts <= 2; restarts++) {
                engine.restartAndAwait(StartupPath.COLD);
                JsonNode history = awaitRecords(client, restarts + 1);
                JsonNode latest = history.get(0);
                assertThat(latest.get("outcome").asString()).isEqualTo("ready");
                assertThat(latest.get("path").asString()).isEqualTo("cold");
                assertThat(latest.get("firstSeen").booleanValue()).isFalse();
                assertThat(latest.get("engineStartSource").asString()).isEqualTo("log");
                // One start per restart: the engine cores' own headers (the second core's late, after the first
                // core's weights), the API servers' lines are this start's, and they reset none of its evidence.
                assertThat(history).hasSize(restarts + 1);
                assertThat(latest.get("engineArgs").asString()).contains("'data_parallel_size': 2");
                assertThat(latest.get("vllmVersion").asString()).isEqualTo("0.31.0");
                assertThat(latest.get("loggedDurations").get("weights_loading").isNumber())
                        .isTrue();
            }
        }
    }
}
