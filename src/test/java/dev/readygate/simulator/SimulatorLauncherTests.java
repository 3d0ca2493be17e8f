package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The standalone simulator ({@code readygate simulate ...}) binds its command-line settings and serves. */
class SimulatorLauncherTests {

    @TempDir
    Path workDir;

    @Test
    void simulateStartsTheEngineFromCommandLineSettings() {
        int port = RunningSimulator.freePort();
        int admin = RunningSimulator.freePort();
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(SimulatorConfiguration.class)
                .web(WebApplicationType.NONE)
                .properties("spring.config.name=simulator")
                .run(
                        "--readygate.simulator.port=" + port,
                        "--readygate.simulator.admin-port=" + admin,
                        "--readygate.simulator.preload.health-port=" + RunningSimulator.freePort(),
                        "--readygate.simulator.startup=cold",
                        "--readygate.simulator.load-time=300ms",
                        "--readygate.simulator.log-to-stdout=false",
                        "--readygate.simulator.work-dir=" + workDir)) {
            WebTestClient engine = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + port)
                    .build();
            await().atMost(Duration.ofSeconds(10))
                    .ignoreExceptions()
                    .untilAsserted(() -> engine.get()
                            .uri("/health")
                            .exchange()
                            .expectStatus()
                            .isOk());
            WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + admin)
                    .build()
                    .get()
                    .uri("/admin/state")
                    .exchange()
                    .expectStatus()
                    .isOk();
            assertThat(workDir.resolve("engine.log")).exists();
            assertThat(context.getBean(EngineSimulator.class).ableToServe()).isTrue();
        }
    }
}
