package dev.readygate;

import static dev.readygate.HttpStatusPoll.statusOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import dev.readygate.support.FreePorts;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** readygate starts only when it knows its engine, and the demo profile embeds the simulator. */
class ReadygateApplicationTests {

    /**
     * These starts fail on purpose and the test reads the failure itself: Spring Boot's printed report of it would
     * read as a failure in a passing run (SettingProblemsTests checks what the report prints).
     */
    static final String QUIET_FAILURE =
            "--logging.level.org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter=off";

    @TempDir
    Path workDir;

    @Test
    void startWithoutEngineBaseUrlFailsNamingTheKey() {
        assertThatException()
                .isThrownBy(() -> SpringApplication.run(ReadygateApplication.class, "--server.port=0", QUIET_FAILURE))
                .havingRootCause()
                .withMessageStartingWith("readygate.engine.base-url: is not set");
    }

    @Test
    void startWithAnEngineBaseUrlThatIsNotHttpFailsNamingTheKey() {
        assertThatException()
                .isThrownBy(() -> SpringApplication.run(
                        ReadygateApplication.class,
                        "--server.port=0",
                        "--readygate.engine.base-url=ftp://engine",
                        QUIET_FAILURE))
                .havingRootCause()
                .withMessageStartingWith("readygate.engine.base-url: must be an http(s) URL");
    }

    @Test
    void demoProfileStartsReadygateWithTheEmbeddedSimulator() {
        // Below the ephemeral range and each checked free (a random port there was once an outgoing connection's).
        int engine = FreePorts.free();
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ReadygateApplication.class)
                .profiles("demo")
                .run(
                        "--server.port=0",
                        "--readygate.simulator.port=" + engine,
                        "--readygate.simulator.admin-port=" + FreePorts.free(),
                        "--readygate.simulator.preload.health-port=" + FreePorts.free(),
                        "--readygate.engine.base-url=http://127.0.0.1:" + engine,
                        "--readygate.simulator.load-time=300ms",
                        "--readygate.simulator.log-to-stdout=false",
                        "--readygate.simulator.work-dir=" + workDir,
                        "--readygate.state-dir=" + workDir.resolve("state"))) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            WebTestClient readygate = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + port)
                    .build();
            readygate.get().uri("/livez").exchange().expectStatus().isOk();
            readygate
                    .get()
                    .uri("/actuator/prometheus")
                    .exchange()
                    .expectStatus()
                    .isOk();
            WebTestClient simulated = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + engine)
                    .build();
            await().atMost(Duration.ofSeconds(10))
                    .ignoreExceptions()
                    .until(() -> statusOf(simulated, "/health") == 200);
            assertThat(workDir.resolve("snapshot/manifest.json")).exists();
        }
    }
}
