package dev.readygate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateApplication;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * readygate's server stays answerable to the kubelet under a flood of idle connections. readygate runs in a JVM of
 * its own whose file descriptor limit is {@value #FD_LIMIT} (as a container's might be), and this test opens
 * {@value #FLOOD} idle sockets to it, more than that limit, and leaves them open: {@code /livez} and {@code /readyz}
 * must still answer. Before the cap, readygate accepted connections until it ran out of file descriptors, and both
 * probes timed out until the sockets closed. The numbers are written to {@value #REPORT}.
 */
class ConnectionFloodTests {

    static final int FD_LIMIT = 4096;
    static final int FLOOD = 6000;
    static final String REPORT = "target/connection-flood.txt";

    @TempDir
    Path dir;

    final List<Socket> sockets = new ArrayList<>();

    @Nullable
    Process readygate;

    @AfterEach
    void close() throws InterruptedException {
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException ex) {
                // Closed by the server already.
            }
        }
        if (readygate != null) {
            readygate.destroy();
            if (!readygate.waitFor(30, TimeUnit.SECONDS)) {
                readygate.destroyForcibly();
            }
        }
    }

    @Test
    void livezAndReadyzAnswerThroughAFloodOfIdleConnections() throws Exception {
        int port = freePort();
        Path output = dir.resolve("readygate.out");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String command = "ulimit -n " + FD_LIMIT + " && exec " + java + " -cp " + System.getProperty("java.class.path")
                + " " + ReadygateApplication.class.getName() + " --server.port=" + port
                + " --server.address=127.0.0.1 --readygate.engine.base-url=http://127.0.0.1:" + freePort()
                + " --readygate.state-dir=" + dir.resolve("state");
        readygate = new ProcessBuilder("bash", "-c", command)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        String base = "http://127.0.0.1:" + port;
        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> status(http, base + "/livez", Duration.ofSeconds(2)) == 200);

        long floodStart = System.nanoTime();
        for (int i = 0; i < FLOOD; i++) {
            Socket socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            sockets.add(socket);
        }
        double floodSeconds = (System.nanoTime() - floodStart) / 1e9;
        // Each probe opens a connection of its own (a client of its own), as the kubelet's do.
        Timed livez = timed(base + "/livez");
        Timed readyz = timed(base + "/readyz");
        assertThat(livez.status()).as(() -> tail(output)).isEqualTo(200);
        // No engine: not ready, but answered.
        assertThat(readyz.status()).as(() -> tail(output)).isEqualTo(503);
        String metrics = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        double open = gauge(metrics, "readygate_server_connections");
        double evicted = gauge(metrics, "readygate_server_connections_evicted_total");
        long closedByServer =
                sockets.stream().filter(ConnectionFloodTests::closedByPeer).count();
        assertThat(open).isLessThanOrEqualTo(256 + 4);
        assertThat(evicted).isGreaterThanOrEqualTo(FLOOD - 256);
        String report = """
                Connection flood: readygate with ulimit -n %d (readygate.server.max-connections 256, idle-timeout 60s)
                %d idle sockets opened in %.1f s and left open
                GET /livez during the flood: %d in %d ms; GET /readyz: %d in %d ms
                readygate held %d connections (readygate_server_connections); %d were closed to make room \
                (readygate_server_connections_evicted_total); %d of the flood's sockets saw the server close them
                """.formatted(
                        FD_LIMIT,
                        FLOOD,
                        floodSeconds,
                        livez.status(),
                        livez.millis(),
                        readyz.status(),
                        readyz.millis(),
                        (long) open,
                        (long) evicted,
                        closedByServer);
        Files.createDirectories(Path.of(REPORT).getParent());
        Files.writeString(Path.of(REPORT), report);
        System.out.println(report);
    }

    @Test
    void idleConnectionIsClosedAfterTheIdleTimeout() throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--server.address=127.0.0.1",
                        "--readygate.engine.base-url=http://127.0.0.1:" + freePort(),
                        "--readygate.state-dir=" + dir.resolve("state"),
                        "--readygate.server.idle-timeout=1s")) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            try (Socket socket = new Socket("127.0.0.1", port)) {
                socket.setSoTimeout(15_000);
                // Nothing is sent: the server closes the connection (end of stream) after the idle timeout.
                assertThat(socket.getInputStream().read()).isEqualTo(-1);
            }
            assertThat(context.getBean(ConnectionGuard.class).maxConnections()).isEqualTo(256);
        }
    }

    /** Whether the server closed this socket (end of stream, or a reset), without waiting. */
    static boolean closedByPeer(Socket socket) {
        try {
            socket.setSoTimeout(1);
            InputStream in = socket.getInputStream();
            return in.read() == -1;
        } catch (java.net.SocketTimeoutException ex) {
            return false;
        } catch (IOException ex) {
            return true;
        }
    }

    record Timed(int status, long millis) {}

    static Timed timed(String url) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long start = System.nanoTime();
        int status = status(http, url, Duration.ofSeconds(10));
        return new Timed(status, (System.nanoTime() - start) / 1_000_000);
    }

    static int status(HttpClient http, String url, Duration timeout) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create(url)).timeout(timeout).build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    static double gauge(String exposition, String name) {
        Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*})? ([0-9.eE+-]+)$")
                .matcher(exposition);
        assertThat(matcher.find()).as(name + " in the exposition").isTrue();
        return Double.parseDouble(matcher.group(1));
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    static String tail(Path file) {
        try {
            String text = Files.readString(file);
            return text.substring(Math.max(0, text.length() - 3000));
        } catch (IOException ex) {
            return ex.toString();
        }
    }
}
