package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateClients;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.simulator.RunningSimulator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Passive health from real traffic, end to end: readygate in gateway mode in front of the simulator, its light checks
 * and heavy probes set far apart so that only client traffic can notice a fault. A GPU fault under traffic (generation
 * fails, {@code /health} stays 200) takes the engine out after at most {@code failure-threshold} (3) failed client
 * requests; the next request is refused by the gateway and never reaches the engine.
 */
class GatewayPassiveHealthTests {

    @TempDir
    Path workDir;

    GatewayReadygate gateway;
    ConfigurableApplicationContext readygate;
    final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
    }

    @Test
    void aGpuFaultUnderTrafficTakesTheEngineOutAfterAtMostThreeFailedClientRequests() throws Exception {
        gateway = GatewayReadygate.start(
                RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false"),
                workDir.resolve("state"),
                List.of(),
                "--readygate.probe.generation.interval=1h",
                "--readygate.probe.heavy-interval=1h");
        readygate = gateway.readygate;
        WebTestClient admin = gateway.admin();
        ReadygateClients.awaitReady(admin);
        EngineStateMachine machine = readygate.getBean(EngineStateMachine.class);
        assertThat(completion().ok()).as("a client request before the fault").isTrue();

        gateway.engine.fault("generation-fails", false);
        int failed = 0;
        while (machine.current().acceptsTraffic() && failed < 10) {
            Answer answer = completion();
            assertThat(answer.ok()).as("a request during the fault: %s", answer).isFalse();
            failed++;
        }

        assertThat(failed)
                .as("failed client requests before the engine was taken out")
                .isBetween(1, 3);
        await().atMost(Duration.ofSeconds(10)).until(() -> ReadygateClients.readyz(admin) == 503);
        EngineState state = machine.current();
        assertThat(state)
                .isInstanceOfSatisfying(
                        EngineState.NotReady.class,
                        // The failures in a row were the client requests', and at times, last, the light check a
                        // degraded engine gets at once (the rules count every check's failures together).
                        out -> assertThat(out.detail()).containsAnyOf("client request", "generation check"));
        Answer refused = completion();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.body()).contains("engine_not_ready");
    }

    record Answer(int status, String body) {
        boolean ok() {
            return status == 200 && body.contains("[DONE]") && !body.contains("\"error\"");
        }
    }

    Answer completion() throws Exception {
        int port = gateway.server().port();
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .timeout(Duration.ofSeconds(20))
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"model\":\"Qwen/Qwen3-0.6B\",\"prompt\":\"Tell me about the sea.\","
                                        + "\"max_tokens\":8,\"stream\":true}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return new Answer(response.statusCode(), response.body());
    }
}
