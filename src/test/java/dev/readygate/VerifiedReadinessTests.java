package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * readygate against the simulator over real HTTP: not ready (with the right reason) for every fault that stops the
 * engine serving correctly (the heavy probes' reasons: ReadyEngineTests has the light checks', and load), ready when it
 * serves. Real time is unavoidable here
 * (two real servers); every wait is an Awaitility condition, never a sleep.
 */
class VerifiedReadinessTests {

    @TempDir
    static Path workDir;

    static RunningSimulator engine;
    static ConfigurableApplicationContext readygate;
    static WebTestClient client;
    static final JsonMapper json = JsonMapper.builder().build();

    @BeforeAll
    static void start() {
        engine = RunningSimulator.serving(
                workDir.resolve("engine"),
                "preload.enabled=false",
                "faults.truncate-prompt-limit=128",
                "faults.kv-too-small-tokens=150",
                "faults.slow-factor=40",
                "timing.decode-per-token=2ms",
                "timing.ttft-base=20ms",
                "auto-restart-delay=300ms");
        readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.engine.request-timeout=400ms",
                        "--readygate.state-dir=" + workDir.resolve("state"),
                        "--readygate.probe.not-ready-interval=100ms",
                        "--readygate.probe.ready-interval=500ms",
                        "--readygate.probe.heavy-interval=2s",
                        "--readygate.probe.heavy-retry-interval=300ms",
                        "--readygate.probe.heavy-timeout=2s",
                        "--readygate.probe.failure-threshold=1",
                        "--readygate.probe.suspend-after-failures=1000",
                        "--readygate.probe.representative.prompt-tokens=200",
                        "--readygate.probe.representative.output-tokens=8",
                        "--readygate.probe.representative.max-time-to-first-token=500ms",
                        // The heavy probes' own reasons: the light checks, which would see these faults first, are
                        // ReadyEngineTests'.
                        "--readygate.probe.generation.enabled=false",
                        // The tests restart the engine (crash, wrong weights): not a restart loop to hold.
                        "--readygate.restart.loop-hold=0s");
        client = ReadygateClients.client(readygate);
    }

    @AfterAll
    static void stop() {
        if (readygate != null) {
            readygate.close();
        }
        engine.close();
    }

    @AfterEach
    void recover() {
        engine.clearFaults();
        awaitReady();
    }

    /** The readiness verdict as the kubelet sees it: status code and the engine's reason. */
    record Verdict(int status, String state, String reason) {}

    static Verdict readyz() {
        var result = client.get().uri("/readyz").exchange().expectBody().returnResult();
        JsonNode body = json.readTree(result.getResponseBody());
        JsonNode details = body.at("/components/engine/details");
        return new Verdict(
                result.getStatus().value(),
                details.path("state").asString(""),
                details.path("reason").asString(""));
    }

    static void awaitReady() {
        await().atMost(Duration.ofSeconds(15)).until(() -> readyz().status() == 200);
    }

    static Verdict awaitNotReady(String reason) {
        await().atMost(Duration.ofSeconds(15)).until(() -> {
            Verdict verdict = readyz();
            return verdict.status() == 503 && verdict.reason().equals(reason);
        });
        return readyz();
    }

    static JsonNode status() {
        return ReadygateClients.status(client);
    }

    @Test
    void readyOnlyAfterRepresentativeAndCanaryPassed() {
        awaitReady();
        // /readyz (answered ahead of Spring's web stack) says what Actuator's own readiness group says.
        assertThat(ReadygateClients.assertProbeIsActuators(client, "/readyz", "/actuator/health/readiness"))
                .isEqualTo(200);
        JsonNode status = status();
        assertThat(status.get("ready").booleanValue()).isTrue();
        assertThat(status.get("state").asString()).isEqualTo("ready");
        JsonNode representative = status.at("/probes/representative/last");
        assertThat(representative.get("outcome").asString()).isEqualTo("passed");
        assertThat(representative.at("/measurement/plannedPromptTokens").intValue())
                .isEqualTo(200);
        assertThat(representative.at("/measurement/promptTokens").intValue()).isEqualTo(200);
        assertThat(representative.at("/measurement/completionTokens").intValue())
                .isEqualTo(8);
        JsonNode canary = status.at("/probes/canary/last/canary");
        assertThat(canary.get("matches").booleanValue()).isTrue();
        assertThat(status.at("/engine/model").asString()).isEqualTo("Qwen/Qwen3-0.6B");
        assertThat(status.at("/engine/maxModelLen").intValue()).isEqualTo(4096);
        assertThat(status.at("/engine/vllmVersion").asString()).isEqualTo("0.31.0");
        assertThat(status.at("/engine/endpoints/tokenize").asString()).startsWith("usable: gave");
        assertThat(status.at("/engine/dialect").asString()).isEqualTo("vllm");
        // vLLM's surface is read whole: nothing it cannot see.
        assertThat(status.at("/engine/unseen").isArray()).isTrue();
        assertThat(status.at("/engine/unseen").isEmpty()).isTrue();
        assertThat(status.at("/engine/capabilities/promptTokens").asString()).startsWith("exact:");
        assertThat(status.at("/probes/circuitBreaker/state").asString()).isEqualTo("closed");
        assertThat(status.at("/probes/tokenBudget/tokensPerMinute").intValue()).isPositive();
        assertThat(status.at("/probes/tokenBudget/tokensLeftThisMinute").isInt())
                .isTrue();
        client.get().uri("/livez").exchange().expectStatus().isOk();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "engine-dead, engine_dead, false",
        "generation-fails, error_event, false",
        "error-5xx, http_status, false",
        "busy-429, http_status, false",
        "malformed-json, malformed_response, false",
        "truncated-sse, truncated_stream, false",
        "reset, connection_reset, false",
        "hang, timed_out, false",
        "stall-stream, stalled, false",
        "truncate-prompt, prompt_tokens_mismatch, false",
        "kv-too-small, error_event, false",
        "slow, slow, false",
        "reset, connection_reset, true",
    })
    void faultMakesTheEngineNotReadyWithItsReason(String fault, String reason, boolean everywhere) {
        awaitReady();
        engine.fault(fault, everywhere);
        Verdict verdict = awaitNotReady(reason);
        assertThat(verdict.status()).isEqualTo(503);
        // /health still answers 200 for most of these: only verification tells.
        engine.clearFaults();
        awaitReady();
    }

    @Test
    void wrongWeightsAreACanaryMismatchHeldUntilTheEngineRestarts() {
        awaitReady();
        engine.fault("wrong-weights", false);
        Verdict verdict = awaitNotReady("canary_mismatch");
        // The start had been ready: not "verification_failed" (which means never ready), but not_ready, latched.
        assertThat(verdict.state()).isEqualTo("not_ready");
        assertThat(status().path("latched").asBoolean()).isTrue();
        JsonNode canary = status().at("/probes/canary/lastFailure/canary");
        assertThat(canary.get("expected").asString())
                .isNotEqualTo(canary.get("actual").asString());
        assertThat(canary.get("expectedFrom").asString()).isEqualTo("learned_baseline");
        // Clearing the fault is not enough: the verdict holds for this engine start.
        engine.clearFaults();
        await().during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(4))
                .until(() -> readyz().reason().equals("canary_mismatch"));
        engine.restartAndAwait(StartupPath.COLD);
        awaitReady();
    }

    @Test
    void crashDropsReadinessAtOnceAndTheRestartedEngineIsVerifiedAgain() {
        awaitReady();
        engine.crash();
        awaitNotReady("engine_down");
        awaitReady();
        assertThat(status().at("/probes/representative/last/outcome").asString())
                .isEqualTo("passed");
    }
}
