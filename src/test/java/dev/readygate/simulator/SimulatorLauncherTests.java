package dev.readygate.simulator;

import static dev.readygate.HttpStatusPoll.statusOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.FileSystemUtils;

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
            await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> statusOf(engine, "/health") == 200);
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

    /**
     * Two standalone simulators side by side, each given nothing but its engine port (the README's command): the admin
     * API, the daemon's health port and the work directory follow it. Before, the second died with "Failed to bind on
     * [127.0.0.1:18002]".
     */
    @Test
    void twoSimulatorsGivenOnlyTheirPortsRunSideBySide() throws IOException {
        int first = freeBlockOfThree();
        int second = freeBlockOfThree();
        List<Path> workDirs = new ArrayList<>();
        try (ConfigurableApplicationContext one = simulate(first);
                ConfigurableApplicationContext two = simulate(second)) {
            workDirs.add(one.getBean(EngineSimulator.class).properties().effectiveWorkDir());
            workDirs.add(two.getBean(EngineSimulator.class).properties().effectiveWorkDir());
            for (int port : new int[] {first, second}) {
                awaitOk(port, "/health");
                awaitOk(port + 1, "/admin/state");
                awaitOk(port + 2, "/health");
            }
            assertThat(workDirs.get(0)).isNotEqualTo(workDirs.get(1));
        } finally {
            for (Path dir : workDirs) {
                FileSystemUtils.deleteRecursively(dir);
            }
        }
    }

    static ConfigurableApplicationContext simulate(int port) {
        return new SpringApplicationBuilder(SimulatorConfiguration.class)
                .web(WebApplicationType.NONE)
                .properties("spring.config.name=simulator")
                .run(
                        "--readygate.simulator.port=" + port,
                        "--readygate.simulator.load-time=300ms",
                        "--readygate.simulator.timing.daemon-load-time=100ms",
                        "--readygate.simulator.log-to-stdout=false");
    }

    static void awaitOk(int port, String path) {
        WebTestClient client =
                WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> statusOf(client, path) == 200);
    }

    /** A port whose next two are free as well, from the ephemeral range's neighbourhood. */
    static int freeBlockOfThree() {
        for (int attempt = 0; attempt < 50; attempt++) {
            int port = RunningSimulator.freePort();
            if (port + 2 <= 65535 && free(port + 1) && free(port + 2)) {
                return port;
            }
        }
        throw new IllegalStateException("no three free consecutive ports found");
    }

    static boolean free(int port) {
        try {
            new ServerSocket(port, 1, InetAddress.getLoopbackAddress()).close();
            return true;
        } catch (IOException ex) {
            return false;
        }
    }
}
