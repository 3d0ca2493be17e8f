package dev.readygate.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gateway mode in the packaged jar with Spring's AOT-processed context, as the image runs it: the setting read at start
 * opens the traffic port (a bean condition would have been decided when the jar was built, with gateway mode off). No
 * engine listens: the traffic port answers 503 with {@code Retry-After}, and the operator's announcement of an engine
 * stop ({@code POST /gateway/drain}) is taken on readygate's port.
 */
class GatewayJarIT {

    @TempDir
    Path dir;

    @Test
    void gatewayModeOpensItsPortInTheAotProcessedJar() throws IOException {
        Path jar = Path.of("target/readygate.jar").toAbsolutePath();
        assertThat(jar)
                .as("the jar `./mvnw verify` packages before the *IT run")
                .exists();
        int port = Loopback.freePort();
        int traffic = Loopback.freePort();
        Path output = dir.resolve("readygate.log");
        Process readygate = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Dspring.aot.enabled=true",
                        "-jar",
                        jar.toString(),
                        "--server.address=127.0.0.1",
                        "--server.port=" + port,
                        "--readygate.engine.base-url=http://127.0.0.1:" + Loopback.freePort(),
                        "--readygate.state-dir=" + dir.resolve("state"),
                        "--readygate.gateway.enabled=true",
                        "--readygate.gateway.port=" + traffic))
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        try {
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> !readygate.isAlive() || Loopback.status(port, "/livez") == 200);
            assertThat(Files.readString(output)).contains("AOT-processed");

            HttpResponse<String> answer = Loopback.get(traffic, "/v1/models");

            assertThat(answer.statusCode()).isEqualTo(503);
            // Nothing listens and no start is recorded: one kubelet probe period.
            assertThat(answer.headers().firstValue("Retry-After")).hasValue("10");
            assertThat(answer.body()).contains("\"code\":\"engine_not_ready\"");
            // The operator's announcement of an engine stop is on readygate's port in the AOT-processed context too.
            HttpResponse<String> announced = Loopback.post(port, "/gateway/drain");
            assertThat(announced.statusCode()).as(announced.body()).isEqualTo(200);
            assertThat(announced.body()).contains("\"drained\":true");
        } catch (java.io.UncheckedIOException e) {
            throw new AssertionError("the traffic port does not answer; output:\n" + DemoJarIT.tail(output), e);
        } finally {
            readygate.destroyForcibly();
        }
    }
}
