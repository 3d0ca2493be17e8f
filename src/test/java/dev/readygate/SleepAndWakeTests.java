package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.readyz;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
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
 * readygate against a simulated vLLM started with sleep mode, slept and woken through vLLM's own endpoints: asleep is
 * {@code sleeping} (no probe fails, no restart is recorded), a level 1 wake is verified and ready again, a level 2 wake
 * without {@code reload_weights} serves garbage weights: {@code canary_mismatch}.
 */
class SleepAndWakeTests {

    @TempDir
    Path workDir;

    ConfigurableApplicationContext readygate(RunningSimulator engine) {
        Path sim = workDir.resolve("engine");
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.reactor.netty.shutdown-quiet-period=0s",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.evidence.snapshot-dir=" + sim.resolve("snapshot"),
                "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4",
                "--readygate.restart.loop-hold=0s",
                "--readygate.node.name=node-a"));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    static RunningSimulator sleepModeEngine(Path dir) {
        return RunningSimulator.serving(dir, "preload.enabled=false", "sleep-mode=true");
    }

    static void engine(RunningSimulator engine, String uri) {
        engine.engine().post().uri(uri).exchange().expectStatus().isOk();
    }

    static void awaitReadyz(WebTestClient client, int code, String reason) {
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    JsonNode now = status(client);
                    return readyz(client) == code
                            && (reason == null
                                    || reason.equals(now.path("reason").asString(null)));
                });
    }

    /** Each probe kind's last failure, as {@code /status} shows it. */
    static List<String> lastFailures(WebTestClient client) {
        List<String> failures = new ArrayList<>();
        status(client).path("probes").properties().forEach(entry -> {
            JsonNode failure = entry.getValue().path("lastFailure");
            if (!failure.isMissingNode()) {
                failures.add(entry.getKey() + "=" + failure);
            }
        });
        return failures;
    }

    @Test
    void asleepIsSleepingWithNothingProbedAndAWakeIsVerifiedAgainLevelTwoWithoutReloadIsCaught() throws Exception {
        try (RunningSimulator engine = sleepModeEngine(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            awaitReadyz(client, 200, null);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> status(client).at("/restarts/history").size() >= 1);
            int records = status(client).at("/restarts/history").size();
            List<String> failuresBefore = lastFailures(client);

            engine(engine, "/sleep?level=1");
            awaitReadyz(client, 503, "sleeping");
            // Asleep for a while: still sleeping, no probe failed meanwhile, no restart recorded.
            await().during(Duration.ofSeconds(5))
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> readyz(client) == 503
                            && "sleeping".equals(status(client).path("reason").asString(null)));
            assertThat(lastFailures(client)).isEqualTo(failuresBefore);
            assertThat(status(client).at("/restarts/history").size()).isEqualTo(records);

            engine(engine, "/wake_up");
            awaitReadyz(client, 200, null);
            assertThat(lastFailures(client)).isEqualTo(failuresBefore);
            assertThat(status(client).at("/restarts/history").size()).isEqualTo(records);

            // Level 2 discards the weights: woken without reload_weights they are garbage, and the canary says so.
            engine(engine, "/sleep?level=2");
            awaitReadyz(client, 503, "sleeping");
            engine(engine, "/wake_up");
            awaitReadyz(client, 503, "canary_mismatch");
            assertThat(status(client).at("/restarts/history").size()).isEqualTo(records);
        }
    }
}
