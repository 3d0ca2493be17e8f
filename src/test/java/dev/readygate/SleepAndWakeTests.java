package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.readyz;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
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
                "--readygate.node.name=node-a",
                "--readygate.gpu.nvidia-smi=" + engine.nvidiaSmi(),
                "--readygate.gpu.interval=500ms",
                "--readygate.gpu.timeout=500ms"));
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

    /** The history, newest first, once it holds {@code count} records whose memory at readiness was read. */
    static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            JsonNode history = status(client).at("/restarts/history");
            return history.size() >= count
                    && history.valueStream()
                            .allMatch(r -> !"ready".equals(r.path("outcome").asString(null))
                                    || r.at("/memory/atReady").isObject());
        });
        return status(client).at("/restarts/history");
    }

    static long usedMiB(JsonNode moment) {
        return moment.path("usedMiB").asLong();
    }

    @Test
    void asleepIsSleepingWithNothingProbedAndAWakeIsVerifiedAndRecordedAsAStartLevelTwoWithoutReloadIsCaught()
            throws Exception {
        try (RunningSimulator engine = sleepModeEngine(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            awaitReadyz(client, 200, null);
            JsonNode cold = awaitRecords(client, 1).get(0);
            List<String> failuresBefore = lastFailures(client);

            engine(engine, "/sleep?level=1");
            awaitReadyz(client, 503, "sleeping");
            // Asleep for a while: still sleeping, no probe failed meanwhile, nothing new recorded.
            await().during(Duration.ofSeconds(5))
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> readyz(client) == 503
                            && "sleeping".equals(status(client).path("reason").asString(null)));
            assertThat(lastFailures(client)).isEqualTo(failuresBefore);
            assertThat(status(client).at("/restarts/history").size()).isEqualTo(1);
            // The start that served stopped when it fell asleep: the process lives on, its memory is not "held".
            assertThat(status(client).at("/restarts/history/0/stop/how").asString())
                    .isEqualTo("slept");

            engine(engine, "/wake_up");
            awaitReadyz(client, 200, null);
            assertThat(lastFailures(client)).isEqualTo(failuresBefore);
            JsonNode history = awaitRecords(client, 2);
            JsonNode wake = history.get(0);
            assertThat(wake.path("path").asString()).isEqualTo("wake");
            assertThat(wake.path("outcome").asString()).isEqualTo("ready");
            assertThat(wake.path("engineStartSource").asString()).isEqualTo("wake");
            assertThat(wake.path("comparable").asBoolean()).isTrue();
            assertThat(wake.at("/sleep/level").asInt()).isEqualTo(1);
            assertThat(wake.at("/sleep/asleepSeconds").asDouble()).isGreaterThanOrEqualTo(5.0);
            assertThat(wake.at("/recovery/kind").asString()).isEqualTo("woke");
            assertThat(wake.path("readinessLatencyBound").asBoolean()).isFalse();
            assertThat(wake.path("readinessLatencySeconds").asDouble()).isPositive();
            // Verified as a start is: the representative probe and the canary passed after the wake.
            assertThat(wake.at("/phaseOffsetsSeconds/canary_ok").isNumber()).isTrue();
            assertThat(wake.path("engineArgs").asString()).contains("enable_sleep_mode");
            // The same engine and model as the start that slept: the comparison groups the wake with its release.
            assertThat(wake.path("model").asString())
                    .isEqualTo(cold.path("model").asString());
            assertThat(wake.path("configuration").asString())
                    .isEqualTo(cold.path("configuration").asString());
            // vLLM's own time to wake, from its log ("It took %.6f seconds to wake up tags ..."): the simulator's
            // level 1 wake of its 1.12 GiB of weights, 0.04 s + 0.06 s per GiB.
            assertThat(wake.at("/loggedDurations/wake_up").asDouble()).isCloseTo(0.1072, within(0.001));
            // The start that slept kept none: its logged figures are its own start's.
            assertThat(history.get(1).at("/loggedDurations").has("wake_up")).isFalse();
            // GPU memory: asleep (the wake's before-start moment) the engine held less than when it served, and as
            // much again once awake; the start that slept reads the same moment after its stop.
            long serving = usedMiB(cold.at("/memory/atReady"));
            long asleep = usedMiB(wake.at("/memory/beforeStart"));
            assertThat(asleep).isLessThan(serving);
            assertThat(usedMiB(wake.at("/memory/atReady"))).isGreaterThan(asleep);
            assertThat(history.get(1).at("/memory/afterStop")).isEqualTo(wake.at("/memory/beforeStart"));
            assertThat(status(client).at("/memory/signals").valueStream().map(JsonNode::asString))
                    .doesNotContain("held_after_stop");
            assertThat(ReadygateClients.prometheus(client))
                    .contains("readygate_engine_starts_total{path=\"wake\"} 1.0")
                    .contains("readygate_readiness_latency_seconds_count{path=\"wake\"} 1")
                    .contains("readygate_restart_loop 0.0");

            // Level 2 discards the weights: woken without reload_weights they are garbage, and the canary says so.
            engine(engine, "/sleep?level=2");
            awaitReadyz(client, 503, "sleeping");
            engine(engine, "/wake_up");
            awaitReadyz(client, 503, "canary_mismatch");
            JsonNode mismatched = awaitRecords(client, 3).get(0);
            assertThat(mismatched.path("path").asString()).isEqualTo("wake");
            assertThat(mismatched.at("/sleep/level").asInt()).isEqualTo(2);
            assertThat(mismatched.path("notReadyReason").asString()).isEqualTo("canary_mismatch");
            assertThat(ReadygateClients.prometheus(client))
                    .contains("readygate_canary_mismatches_total{path=\"wake\"} 1.0");
        }
    }
}
