package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Users' traffic in flight (what a crash loses, as {@code vllm:num_requests_running} shows it) and the engine
 * container's start id (a new one when the container restarts after a crash, the same one when the engine process
 * restarts in it).
 */
class TrafficAndContainerTests {

    @TempDir
    Path workDir;

    static String container(Path workDir) throws Exception {
        JsonNode doc = JsonMapper.builder()
                .build()
                .readTree(Files.readString(workDir.resolve(SimulatedEngine.CONTAINER_FILE)));
        return doc.get("container_start").asString();
    }

    @Test
    void trafficKeepsItsClientsRequestsInFlightUntilItIsStopped() {
        // Decode at 10 ms a token: each request runs for about 15 s.
        try (RunningSimulator simulator =
                RunningSimulator.serving(workDir.resolve("sim"), "timing.decode-per-token=10ms")) {
            simulator.traffic(3);
            await().atMost(Duration.ofSeconds(10)).until(() -> simulator.requestsRunning() == 3);
            assertThat(simulator.simulator.state())
                    .extracting("engine")
                    .asString()
                    .contains("trafficClients=3");

            simulator.traffic(0);

            await().atMost(Duration.ofSeconds(10)).until(() -> simulator.requestsRunning() == 0);
        }
    }

    @Test
    void aCrashRestartsTheContainerAndAnAdminRestartOnlyTheEngineProcess() throws Exception {
        Path sim = workDir.resolve("sim");
        try (RunningSimulator simulator = RunningSimulator.serving(sim)) {
            String first = container(sim);

            simulator.restartAndAwait(StartupPath.COLD);
            assertThat(container(sim)).isEqualTo(first);

            int before = simulator.latestStartNumber();
            simulator.crash();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> simulator.latestStartNumber() > before
                            && simulator.simulator.engine().phase() == SimulatedEngine.Phase.SERVING);
            assertThat(container(sim)).isNotEqualTo(first).matches("[0-9a-f-]{36}");
        }
    }

    /**
     * Issue 25, item 4: a second demo started while one ran wrote its own container start id into the running one's
     * work directory (then failed to bind its ports), and readygate recorded the running engine's next restart as a
     * container restart, naming a container that engine never had. A second simulator is refused before it writes
     * anything there; once the first has closed, the directory is free again.
     */
    @Test
    void aSecondSimulatorInTheSameWorkDirIsRefusedBeforeItWritesItsContainerStartId() throws Exception {
        Path sim = workDir.resolve("sim");
        try (RunningSimulator running = RunningSimulator.serving(sim)) {
            String container = container(sim);

            assertThatIllegalStateException()
                    .isThrownBy(() -> RunningSimulator.start(sim).close())
                    .withMessageStartingWith("readygate.simulator.work-dir: " + sim + " is in use by another simulator"
                            + " (pid " + ProcessHandle.current().pid() + " since ")
                    .withMessageEndingWith(
                            "): stop it, or give this one its own work-dir (the demo's is under readygate.state-dir)");

            assertThat(container(sim)).isEqualTo(container);
            assertThat(running.simulator.engine().container()).isEqualTo(container);
        }
        try (RunningSimulator next = RunningSimulator.serving(sim)) {
            assertThat(next.simulator.engine().container()).isEqualTo(container(sim));
        }
    }

    @Test
    void parseOfTrafficWithoutANumberNamesTheAction() {
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> Scenario.traffic("lots"))
                .withMessage("traffic needs a number of clients, 0 or more, e.g. 'traffic: 3' (was lots)");
    }
}
