package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * An engine process that exits while ready is seen through the idle connection readygate holds to its port, not by the
 * next {@code /health} poll: with the polls ten minutes apart, a crash still takes {@code /readyz} to 503 (the bound
 * here is far below the poll interval, and far above any machine's slowness).
 */
class EngineExitTests {

    @TempDir
    Path workDir;

    private RunningSimulator engine;
    private ConfigurableApplicationContext readygate;

    @AfterEach
    void stop() {
        if (readygate != null) {
            readygate.close();
        }
        if (engine != null) {
            engine.close();
        }
    }

    private WebTestClient start() {
        engine = RunningSimulator.serving(workDir.resolve("engine"), "auto-restart=false", "preload.enabled=false");
        readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.state-dir=" + workDir.resolve("state"),
                        "--readygate.probe.health-interval=10m",
                        "--readygate.probe.ready-interval=10m",
                        "--readygate.probe.heavy-interval=20m",
                        "--readygate.probe.generation.enabled=false",
                        "--readygate.probe.representative.prompt-tokens=64",
                        "--readygate.probe.representative.output-tokens=4");
        WebTestClient client = ReadygateClients.client(readygate);
        await().atMost(Duration.ofSeconds(30)).until(() -> ReadygateClients.readyz(client) == 200);
        return client;
    }

    @Test
    void crashOfAReadyEngineIsNotReadyWithoutWaitingForTheNextHealthCheck() {
        WebTestClient client = start();
        engine.crash();
        await().atMost(Duration.ofSeconds(60)).until(() -> ReadygateClients.readyz(client) == 503);
        assertThat(ReadygateClients.status(client).get("reason").asString()).isEqualTo("engine_down");
    }
}
