package dev.readygate;

import static dev.readygate.ReadygateClients.awaitReady;
import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * readygate in the configurations users run: a plain OpenAI-compatible server, an engine behind an API key, a
 * snapshot manifest's oracle as the canary's expectation, the Prometheus exposition, and shutdown.
 */
@ExtendWith(OutputCaptureExtension.class)
class ReadinessVariantsTests {

    @TempDir
    Path workDir;

    static final JsonMapper json = JsonMapper.builder().build();

    static ConfigurableApplicationContext readygate(RunningSimulator engine, Path state, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + state,
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4"));
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    @Test
    void plainOpenAiCompatibleServerIsVerifiedFromUsageInADegradedMode() {
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"),
                        "openai-only=true",
                        "preload.enabled=false",
                        "faults.truncate-prompt-limit=50");
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        workDir.resolve("state"),
                        "--readygate.probe.heavy-interval=2s",
                        "--readygate.probe.heavy-timeout=2s")) {
            WebTestClient client = client(readygate);
            awaitReady(client);
            JsonNode status = status(client);
            assertThat(status.at("/engine/endpoints/tokenize").asString()).startsWith("missing");
            assertThat(status.at("/engine/endpoints/metrics").asString()).startsWith("missing");
            assertThat(status.at("/engine/vllmVersion").asString()).isEqualTo("unknown");
            assertThat(status.at("/engine/maxModelLen").isNull()).isTrue();
            assertThat(status.at("/probes/representative/last/outcome").asString())
                    .isEqualTo("passed");
            // Without /tokenize, the engine's own count of the calibrated prompt is what later probes are held to.
            engine.fault("truncate-prompt", false);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> status(client).path("reason").asString("").equals("prompt_tokens_mismatch"));
        }
    }

    @Test
    void engineBehindAnApiKeyIsProbedWithTheKeyFromAFileThatNeverShows(CapturedOutput output) throws Exception {
        Path key = Files.writeString(workDir.resolve("api-key"), "sk-readygate-test-key\n");
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"), "api-key=sk-readygate-test-key", "preload.enabled=false");
                ConfigurableApplicationContext readygate =
                        readygate(engine, workDir.resolve("state"), "--readygate.engine.api-key-file=" + key)) {
            WebTestClient client = client(readygate);
            awaitReady(client);
            assertThat(client.get()
                            .uri("/status")
                            .exchange()
                            .expectBody(String.class)
                            .returnResult()
                            .getResponseBody())
                    .doesNotContain("sk-readygate-test-key");
        }
        assertThat(output).doesNotContain("sk-readygate-test-key");
    }

    @Test
    void engineBehindAnApiKeyWithoutTheKeyIsNotReady() {
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"), "api-key=sk-readygate-test-key", "preload.enabled=false");
                ConfigurableApplicationContext readygate = readygate(engine, workDir.resolve("state"))) {
            WebTestClient client = client(readygate);
            // Read as one answer: between /health passing and /v1/models answering 401, the state is healthy with
            // reason model_not_listed and no detail yet.
            await().atMost(Duration.ofSeconds(15)).until(() -> {
                JsonNode status = status(client);
                return status.path("reason").asString("").equals("model_not_listed")
                        && status.path("detail").asString("").contains("401");
            });
        }
    }

    @Test
    void snapshotManifestOracleIsTheCanarysExpectation() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        workDir.resolve("state"),
                        "--readygate.evidence.snapshot-dir=" + workDir.resolve("engine/snapshot"),
                        "--readygate.probe.canary.learn-baseline=false")) {
            WebTestClient client = client(readygate);
            awaitReady(client);
            JsonNode canary = status(client).at("/probes/canary/last/canary");
            assertThat(canary.get("expectedFrom").asString()).isEqualTo("snapshot_manifest");
            assertThat(canary.get("matches").booleanValue()).isTrue();
            assertThat(canary.get("expected").asString())
                    .isEqualTo(canary.get("actual").asString());
        }
    }

    @Test
    void prometheusExpositionHasReadygatesAndResilience4jsMeters() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
                ConfigurableApplicationContext readygate = readygate(engine, workDir.resolve("state"))) {
            WebTestClient client = client(readygate);
            awaitReady(client);
            String metrics = client.get()
                    .uri("/actuator/prometheus")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .returnResult()
                    .getResponseBody();
            assertThat(metrics)
                    .containsPattern("(?m)^readygate_engine_ready(\\{[^}]*})? 1\\.0$")
                    .containsPattern("(?m)^readygate_engine_state\\{.*state=\"ready\".*} 1\\.0$")
                    .containsPattern("(?m)^readygate_engine_state\\{.*state=\"down\".*} 0\\.0$")
                    .contains("readygate_engine_transitions_total{")
                    .contains("readygate_probe_duration_seconds_count{")
                    .contains("readygate_probe_ttft_seconds_count{")
                    .contains("readygate_probe_inter_token_latency_seconds_count{")
                    .containsPattern(
                            "(?m)^readygate_probe_duration_seconds_count\\{kind=\"canary\",outcome=\"passed\"} [1-9]")
                    .containsPattern("(?m)^readygate_probe_tokens_total\\{.*kind=\"representative\".*} [1-9]")
                    .contains("resilience4j_circuitbreaker_state{")
                    .contains("name=\"heavy-probes\"")
                    .contains("resilience4j_ratelimiter_available_permissions{");
        }
    }

    @Test
    void shutdownRefusesTrafficBeforeAnythingElseStops() {
        RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
        List<String> events = new ArrayList<>();
        try (engine) {
            ConfigurableApplicationContext readygate = readygate(engine, workDir.resolve("state"));
            awaitReady(client(readygate));
            EngineStateMachine machine = readygate.getBean(EngineStateMachine.class);
            readygate.addApplicationListener((ApplicationListener<AvailabilityChangeEvent<?>>) event -> {
                if (event.getState() instanceof ReadinessState state) {
                    events.add(state + " engine=" + machine.current().kind());
                }
            });
            readygate.addApplicationListener((ApplicationListener<ContextClosedEvent>) event -> events.add("closed"));
            readygate.close();
            assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.SHUTTING_DOWN);
        }
        // Readiness is refused first (Spring Boot does it as the context starts closing; readygate's engine state
        // follows on the close event), before the web server and the probe loop stop.
        assertThat(events.getFirst()).startsWith("REFUSING_TRAFFIC");
        assertThat(events.indexOf("closed")).isGreaterThan(0);
        assertThat(events).noneMatch(event -> event.startsWith("ACCEPTING"));
    }
}
