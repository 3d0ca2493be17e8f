package dev.readygate.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The packaged jar's demo as a new user starts it (README, "Watching the demo"): {@code java -jar readygate.jar
 * --spring.profiles.active=demo} from a folder that is not the repository, with Spring's AOT-processed context
 * switched on as the image runs it. The scenario comes from the jar, the files go to the state directory, the engine
 * is verified, and SIGINT (Ctrl-C) ends it cleanly: readygate's graceful shutdown, exit status 130, no error. Java
 * sends no SIGINT: Perl does (Debian's perl-base is essential, on every Debian machine).
 */
class DemoJarIT {

    private static final Logger logger = LoggerFactory.getLogger(DemoJarIT.class);

    @TempDir
    Path elsewhere;

    @Test
    void theDemoRunsFromAnotherFolderAndCtrlCEndsItCleanly() throws Exception {
        Path jar = Path.of("target/readygate.jar").toAbsolutePath();
        assertThat(jar)
                .as("the jar `./mvnw verify` packages before the *IT run")
                .exists();
        int port = Loopback.freePort();
        int engine = Loopback.freePort();
        Path state = elsewhere.resolve("state");
        Path output = elsewhere.resolve("demo.log");
        List<String> command = List.of(
                // SIGINT as a terminal's Ctrl-C sends it: a JVM started with SIGINT ignored (a background job of a
                // non-interactive shell, as CI may run Maven) would keep ignoring it, so it is reset to the default.
                "perl",
                "-e",
                "$SIG{INT} = 'DEFAULT'; exec @ARGV or die $!",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dspring.aot.enabled=true",
                "-jar",
                jar.toString(),
                "--spring.profiles.active=demo",
                "--server.port=" + port,
                "--readygate.simulator.port=" + engine,
                "--readygate.simulator.admin-port=" + Loopback.freePort(),
                "--readygate.simulator.preload.health-port=" + Loopback.freePort(),
                "--readygate.state-dir=" + state);
        Process demo = new ProcessBuilder(command)
                .directory(elsewhere.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        try {
            await().atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> !demo.isAlive() || Loopback.status(port, "/readyz") == 200);
            assertThat(demo.isAlive())
                    .as("the demo runs; its output:\n%s", tail(output))
                    .isTrue();
            assertThat(Loopback.json(port, "/readyz")
                            .at("/components/engine/details/state")
                            .asString())
                    .isEqualTo("ready");
            assertThat(state.resolve("simulator/engine.log")).exists();
            assertThat(Files.readString(output)).containsPattern("scenario demo step 1/[0-9]+: ");

            long signalled = System.nanoTime();
            Process kill = new ProcessBuilder("perl", "-e", "kill 'INT', " + demo.pid() + " or die $!").start();
            assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0)
                    .isTrue();
            // A bound against a hang, not a speed goal: the demo ends in about a second.
            assertThat(demo.waitFor(30, TimeUnit.SECONDS))
                    .as("the demo ended after SIGINT; its output:\n%s", tail(output))
                    .isTrue();
            logger.info("The demo ended {} ms after SIGINT", (System.nanoTime() - signalled) / 1_000_000);
            String log = Files.readString(output);
            assertThat(demo.exitValue())
                    .as("exit status; output:\n%s", tail(output))
                    .isEqualTo(130);
            assertThat(log).contains("Graceful shutdown complete");
            assertThat(log.lines().filter(line -> line.contains(" ERROR ") || line.contains("Exception")))
                    .as("errors in the demo's output")
                    .isEmpty();
        } finally {
            demo.destroyForcibly();
        }
    }

    static String tail(Path output) throws IOException {
        return Files.exists(output) ? Loopback.tail(Files.readString(output), 60) : "";
    }
}
