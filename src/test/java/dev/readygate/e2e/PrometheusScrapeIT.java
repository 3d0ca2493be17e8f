package dev.readygate.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import dev.readygate.ExternalTool;
import dev.readygate.ReadygateApplication;
import dev.readygate.simulator.RunningSimulator;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

/**
 * A real Prometheus, Debian's {@code prometheus} package, scrapes readygate gating the simulator: the target is up and
 * readygate's meters can be queried through Prometheus's HTTP API. Prometheus runs as a process on loopback with a
 * generated configuration and its own storage directory. It is required, not optional: {@code .ci/run} installs it;
 * {@code ./mvnw verify -DskipITs} skips this test on purpose.
 */
@Tag("prometheus")
class PrometheusScrapeIT {

    static final String JOB = "readygate";

    @TempDir
    static Path dir;

    static @Nullable RunningSimulator engine;
    static @Nullable ConfigurableApplicationContext readygate;
    static @Nullable Process prometheus;
    static final int prometheusPort = Loopback.freePort();

    @BeforeAll
    static void start() throws IOException {
        Path binary = prometheusBinary();
        engine = RunningSimulator.serving(dir.resolve("engine"));
        readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.address=127.0.0.1",
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.state-dir=" + dir.resolve("state"),
                        "--readygate.probe.representative.prompt-tokens=100",
                        "--readygate.probe.representative.output-tokens=4");
        int readygatePort =
                ((WebServerApplicationContext) readygate).getWebServer().getPort();
        Path config = Files.writeString(dir.resolve("prometheus.yml"), """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: %s
                    metrics_path: /actuator/prometheus
                    static_configs:
                      - targets: ["127.0.0.1:%d"]
                """.formatted(JOB, readygatePort));
        prometheus = new ProcessBuilder(
                        binary.toString(),
                        "--config.file=" + config,
                        "--storage.tsdb.path=" + dir.resolve("tsdb"),
                        "--web.listen-address=127.0.0.1:" + prometheusPort)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("prometheus.log").toFile())
                .start();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (prometheus != null) {
            prometheus.destroy();
            if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly();
            }
        }
        if (readygate != null) {
            readygate.close();
        }
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void prometheusScrapesReadygateAndQueriesItsMeters() throws IOException {
        try {
            await().atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> target().get("health").asString().equals("up"));
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> value("readygate_engine_ready") == 1);
        } catch (ConditionTimeoutException e) {
            fail(
                    "Prometheus did not get there; its log:\n"
                            + Loopback.tail(Files.readString(dir.resolve("prometheus.log")), 30),
                    e);
        }
        assertThat(target().get("scrapeUrl").asString()).endsWith("/actuator/prometheus");
        assertThat(value("up{job=\"" + JOB + "\"}")).isEqualTo(1);
        assertThat(value("readygate_engine_state{state=\"ready\"}")).isEqualTo(1);
        assertThat(value("sum(readygate_engine_transitions_total)")).isPositive();
    }

    /** The one target Prometheus scrapes, from {@code /api/v1/targets}. */
    static JsonNode target() {
        JsonNode targets = Loopback.json(prometheusPort, "/api/v1/targets").at("/data/activeTargets");
        assertThat(targets.size()).isEqualTo(1);
        return targets.get(0);
    }

    /** The single value of an instant query through Prometheus's HTTP API. */
    static double value(String query) {
        JsonNode answer = Loopback.json(
                prometheusPort, "/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8));
        JsonNode result = answer.at("/data/result");
        assertThat(result.size()).as("%s: %s", query, answer).isEqualTo(1);
        return Double.parseDouble(result.get(0).get("value").get(1).asString());
    }

    /** Debian's {@code /usr/bin/prometheus} ({@link ExternalTool#PROMETHEUS}: the property, the variable or the PATH). */
    static Path prometheusBinary() {
        return ExternalTool.PROMETHEUS.path();
    }
}
