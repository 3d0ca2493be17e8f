package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.netty.DisposableServer;

/**
 * Engines that fail every connection in the same way must not flood readygate's log: an engine behind a certificate
 * readygate does not trust (a real TLS server with a self-signed certificate made by {@code keytool}) gives one WARN
 * line, without a stack trace, however many probes fail; an engine that resets every connection gives no WARN per
 * reset. Before, Reactor Netty logged each at WARN with its stack trace (about 106 KB/s for TLS, 10 lines a second for
 * resets).
 */
@ExtendWith(OutputCaptureExtension.class)
class LogFloodTests {

    @TempDir
    Path workDir;

    ConfigurableApplicationContext readygate(String baseUrl) {
        return new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=" + baseUrl,
                        "--readygate.state-dir=" + workDir.resolve("state"));
    }

    @Test
    void engineWithAnUntrustedCertificateIsOneWarnLine(CapturedOutput output) throws Exception {
        AtomicInteger connections = new AtomicInteger();
        DisposableServer engine = SelfSignedCertificates.tlsServer(workDir)
                .doOnChannelInit((observer, channel, remote) -> connections.incrementAndGet())
                .handle((request, response) -> response.sendString(reactor.core.publisher.Mono.just("{}")))
                .bindNow();
        try (ConfigurableApplicationContext readygate = readygate("https://127.0.0.1:" + engine.port())) {
            // Dozens of probes, each failing its TLS handshake.
            await().atMost(Duration.ofSeconds(30)).until(() -> connections.get() >= 40);
            List<String> warnings = warnings(output);
            assertThat(warnings).as(output.getAll()).hasSize(1);
            assertThat(warnings.getFirst()).contains("TLS failed").contains("PKIX");
            assertThat(output.getAll().lines().filter(line -> line.startsWith("\tat ")))
                    .as("no stack trace")
                    .isEmpty();
            assertThat(ReadygateClients.status(ReadygateClients.client(readygate))
                            .get("detail")
                            .asString())
                    .contains("TLS failed");
        } finally {
            engine.disposeNow();
        }
    }

    @Test
    void engineThatResetsEveryConnectionLogsNoWarnPerReset(CapturedOutput output) throws Exception {
        AtomicInteger resets = new AtomicInteger();
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                try (Socket socket = server.accept()) {
                    // Read the request, then reset: SO_LINGER 0 makes close() send RST.
                    InputStream in = socket.getInputStream();
                    in.read(new byte[4096]);
                    socket.setSoLinger(true, 0);
                    resets.incrementAndGet();
                } catch (IOException ex) {
                    // The server closed, or the client went first.
                }
            }
        });
        try (ConfigurableApplicationContext readygate = readygate("http://127.0.0.1:" + server.getLocalPort())) {
            await().atMost(Duration.ofSeconds(30)).until(() -> resets.get() >= 40);
            assertThat(warnings(output)).as(output.getAll()).isEmpty();
            assertThat(ReadygateClients.status(ReadygateClients.client(readygate))
                            .get("reason")
                            .asString())
                    .isEqualTo("connection_reset");
        } finally {
            server.close();
            acceptor.join(TimeUnit.SECONDS.toMillis(10));
        }
    }

    static List<String> warnings(CapturedOutput output) {
        return output.getAll().lines().filter(line -> line.contains(" WARN ")).toList();
    }
}
