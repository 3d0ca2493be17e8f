package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * Where an engine start's readiness latency is measured from (issue 24, item 9): from the engine's own evidence (its
 * {@code process_start_time_seconds}, its log's first line) where there is any; without it, from what readygate saw,
 * which is only a bound, recorded as one and kept out of the latency and phase meters.
 */
class StartOriginTests {

    @TempDir
    Path workDir;

    ConfigurableApplicationContext readygate(RunningSimulator engine, boolean engineLog) {
        return readygate(engine, workDir.resolve("state"), engineLog);
    }

    /**
     * A readygate for {@code engine} on {@code state}, with small probes; with or without the engine log (without one,
     * a start is dated by the engine's {@code /metrics} or by what readygate saw, and begins once the engine answers).
     */
    static ConfigurableApplicationContext readygate(RunningSimulator engine, Path state, boolean engineLog) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.reactor.netty.shutdown-quiet-period=0s",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + state,
                "--readygate.restart.loop-hold=0s",
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4"));
        if (engineLog) {
            args.add("--readygate.evidence.engine-log=" + engine.engineLogFile());
        }
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    /** Two API servers: {@code /metrics} in multiprocess mode, without {@code process_start_time_seconds}. */
    static RunningSimulator engineWithoutProcessStartTime(Path dir) {
        return RunningSimulator.serving(dir, "preload.enabled=false", "deployment.data-parallel-size=2");
    }

    static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> status(client).at("/restarts/history").size() >= count);
        return status(client).at("/restarts/history");
    }

    @Test
    void aStartTheEngineGaveNoTimeOfIsRecordedAsABoundAndKeptOutOfTheLatencyMeters() {
        try (RunningSimulator engine = engineWithoutProcessStartTime(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine, false)) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            engine.restartAndAwait(StartupPath.COLD);
            JsonNode restart = awaitRecords(client, 2).get(0);
            assertThat(restart.get("firstSeen").booleanValue()).isFalse();
            assertThat(restart.get("outcome").asString()).isEqualTo("ready");
            assertThat(restart.get("engineStartSource").asString()).isEqualTo("observed_down");
            assertThat(restart.get("readinessLatencySeconds").doubleValue()).isPositive();
            assertThat(restart.get("readinessLatencyBound").booleanValue())
                    .as("from when readygate saw the old engine go away: the engine started at or after it")
                    .isTrue();
            await().atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(FirstSeenStartTests.sum(
                                    ReadygateClients.prometheus(client), "readygate_engine_starts_total"))
                            .as("an engine start all the same")
                            .isEqualTo(1));
            String prometheus = ReadygateClients.prometheus(client);
            assertThat(FirstSeenStartTests.sum(prometheus, "readygate_readiness_latency_seconds_count"))
                    .as("a bound is no measurement")
                    .isZero();
            assertThat(FirstSeenStartTests.sum(prometheus, "readygate_phase_duration_seconds_count"))
                    .isZero();
            JsonNode comparison = status(client).at("/restarts/comparison");
            assertThat(comparison.at("/groups/0/starts").intValue()).isEqualTo(1);
            assertThat(comparison.at("/groups/0/ready").intValue()).isEqualTo(1);
            assertThat(comparison.at("/groups/0/readinessSeconds").isNull())
                    .as("counted, not timed")
                    .isTrue();
        }
    }

    @Test
    void aStartTheEngineLogDatedIsMeasuredFromItsFirstLine() {
        try (RunningSimulator engine = engineWithoutProcessStartTime(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine, true)) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            engine.restartAndAwait(StartupPath.COLD);
            JsonNode restart = awaitRecords(client, 2).get(0);
            assertThat(restart.get("outcome").asString()).isEqualTo("ready");
            assertThat(restart.get("engineStartSource").asString()).isEqualTo("log");
            assertThat(restart.get("readinessLatencyBound").booleanValue()).isFalse();
            await().atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(FirstSeenStartTests.sum(
                                    ReadygateClients.prometheus(client), "readygate_readiness_latency_seconds_count"))
                            .isEqualTo(1));
        }
    }
}
