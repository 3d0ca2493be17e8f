package dev.readygate;

import static dev.readygate.ReadygateClients.awaitReady;
import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.prometheus;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import dev.readygate.statedir.Tmpfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * Readiness never depends on the state directory: with a real read-only, full or missing state directory readygate
 * verifies the engine and gates it as usual, and says what is degraded in {@code /status}, a metric and one log line
 * per store. Before, the canary's baseline write threw and the probe cycle failed "unexpectedly" on every tick: the
 * engine stayed {@code model_listed} forever.
 */
@ExtendWith(OutputCaptureExtension.class)
class StateDirReadinessTests {

    @TempDir
    Path workDir;

    ConfigurableApplicationContext readygate(RunningSimulator engine, Path state) {
        return new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.state-dir=" + state,
                        "--readygate.probe.representative.prompt-tokens=100",
                        "--readygate.probe.representative.output-tokens=4",
                        // Its engine restarts on purpose, four times in a row: no restart-loop hold.
                        "--readygate.restart.loop-hold=0s");
    }

    @Test
    void readOnlyStateDirLeavesReadygateGatingWithANamedDegradedReason(CapturedOutput output) throws Exception {
        try (Tmpfs fs = Tmpfs.mount(workDir.resolve("mnt"), "256k")) {
            Path state = Files.createDirectories(fs.path().resolve("state"));
            fs.readOnly();
            assertGatesAndSays(state, "state_dir_read_only", output);
        }
    }

    @Test
    void fullStateDirLeavesReadygateGatingWithANamedDegradedReason(CapturedOutput output) throws Exception {
        try (Tmpfs fs = Tmpfs.mount(workDir.resolve("mnt"), "64k")) {
            Path state = Files.createDirectories(fs.path().resolve("state"));
            fs.fill();
            assertGatesAndSays(state, "state_dir_full", output);
        }
    }

    @Test
    void missingStateDirLeavesReadygateGatingWithANamedDegradedReason(CapturedOutput output) throws Exception {
        Path file = Files.writeString(workDir.resolve("a-file"), "");
        assertGatesAndSays(file.resolve("state"), "state_dir_missing", output);
    }

    void assertGatesAndSays(Path state, String reason, CapturedOutput output) throws Exception {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
                ConfigurableApplicationContext readygate = readygate(engine, state)) {
            WebTestClient client = client(readygate);
            awaitReady(client);
            // The start was recorded (in memory: the history could not be written).
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> status(client)
                            .at("/stateDir/stores/restart_history/status")
                            .asString("")
                            .equals("failing"));
            JsonNode stateDir = status(client).get("stateDir");
            assertThat(stateDir.get("degraded").toString()).contains(reason);
            assertThat(stateDir.at("/stores/canary_baselines/reason").asString())
                    .isEqualTo(reason);
            assertThat(stateDir.at("/stores/restart_history/reason").asString()).isEqualTo(reason);
            assertThat(status(client).at("/probes/canary/last/detail").asString())
                    .contains("kept in memory only");
            // The exports hold the starts kept in memory only, and say how many the history's files lack.
            String kept = status(client).at("/restarts/history/0/id").asString();
            var exported = client.get()
                    .uri("/status/restarts.json")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .returnResult();
            assertThat(exported.getResponseBody()).contains("\"id\":\"" + kept + "\"");
            assertThat(exported.getResponseHeaders().getFirst("X-Readygate-Records-Not-Written"))
                    .isNotNull();
            assertThat(prometheus(client))
                    .contains("readygate_state_dir_degraded{reason=\"" + reason + "\",store=\"canary_baselines\"} 1.0")
                    .contains("readygate_state_dir_degraded{reason=\"" + reason + "\",store=\"restart_history\"} 1.0")
                    .contains(
                            "readygate_state_dir_degraded{reason=\"state_dir_locked\",store=\"restart_history\"} 0.0");

            // Another start, more writes: still gating, still one line per store.
            engine.restartAndAwait(StartupPath.COLD);
            awaitReady(client);
            assertThat(output.getAll()).doesNotContain("Probe cycle failed unexpectedly");
            assertThat(output.getAll()).doesNotContain("Exception in thread");
            assertThat(lines(output.getAll(), "Cannot write canary-baselines.json"))
                    .isEqualTo(1);
            assertThat(lines(output.getAll(), "Cannot write restarts.jsonl")).isEqualTo(1);
        }
    }

    @Test
    void secondReadygateOnTheSameStateDirRunsReadOnlyAndEveryStartIsKeptOnce(CapturedOutput output) throws Exception {
        Path state = workDir.resolve("state");
        // Two readygates probe one engine, each verifying every start at the same moment: one's canary shares the
        // batch with the other's probes, which it cannot see. A batch-invariant engine keeps this test on the state
        // dir (one sidecar per engine is the deployment readygate gates).
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"), "preload.enabled=false", "model.batch-variance=0");
                ConfigurableApplicationContext first = readygate(engine, state);
                ConfigurableApplicationContext second = readygate(engine, state)) {
            WebTestClient writer = client(first);
            WebTestClient reader = client(second);
            assertThat(status(writer).at("/stateDir/mode").asString()).isEqualTo("writer");
            assertThat(status(reader).at("/stateDir/mode").asString())
                    .startsWith("read_only: another readygate holds the lock (pid "
                            + ProcessHandle.current().pid());
            assertThat(output.getAll()).contains("this one runs read-only");
            awaitReady(writer);
            awaitReady(reader);
            for (int i = 0; i < 3; i++) {
                engine.restartAndAwait(StartupPath.COLD);
                awaitReady(writer);
                awaitReady(reader);
            }
            // Both saw 4 starts; only the writer wrote them: each start once in the file.
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> distinctIds(state) == 4
                            && status(reader).at("/restarts/history").size() >= 4);
            assertThat(status(reader).at("/stateDir/degraded").toString()).contains("state_dir_locked");
            assertThat(ReadygateClients.readyz(reader)).isEqualTo(200);
        }
        // A readygate started again on the directory lists each start once.
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine2"), "preload.enabled=false");
                ConfigurableApplicationContext again = readygate(engine, state)) {
            assertThat(status(client(again)).at("/stateDir/mode").asString()).isEqualTo("writer");
            assertThat(status(client(again)).at("/restarts/history").size()).isGreaterThanOrEqualTo(4);
            java.util.List<String> ids = new java.util.ArrayList<>();
            status(client(again))
                    .at("/restarts/history")
                    .forEach(record -> ids.add(record.get("id").asString()));
            assertThat(ids).doesNotHaveDuplicates();
        }
    }

    static long distinctIds(Path state) throws java.io.IOException {
        Path file = state.resolve("restarts.jsonl");
        if (!Files.exists(file)) {
            return 0;
        }
        return Files.readAllLines(file).stream()
                .filter(line -> !line.isBlank())
                .map(line -> tools.jackson.databind.json.JsonMapper.builder()
                        .build()
                        .readTree(line)
                        .get("id")
                        .asString())
                .distinct()
                .count();
    }

    static int lines(String text, String part) {
        return (int) text.lines().filter(line -> line.contains(part)).count();
    }
}
