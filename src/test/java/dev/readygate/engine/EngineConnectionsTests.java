package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.SelfSignedCertificates;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.netty.DisposableServer;
import reactor.netty.resources.LoopResources;
import reactor.test.StepVerifier;

/**
 * The gateway's own connections to the engine, against engines on plain sockets that answer exactly as written here:
 * kept and reused on their loop, sent again once when a kept one was closed under the request, read only as fast as
 * the client takes the answer, closed when idle, and TLS to an {@code https} engine.
 */
class EngineConnectionsTests {

    @TempDir
    Path dir;

    private final LoopResources loops = LoopResources.create("engine-connections-test", 1, 1, true);
    private final List<AutoCloseable> running = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable each : running.reversed()) {
            each.close();
        }
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(Duration.ofSeconds(5));
    }

    @Test
    void connectionIsKeptAndReusedForTheNextRequest() throws IOException {
        AtomicInteger accepted = new AtomicInteger();
        URI engine = engine(accepted, EngineConnectionsTests::answersOk);
        EngineConnections connections = connections(engine, Duration.ofSeconds(4));

        for (int i = 0; i < 3; i++) {
            assertThat(body(connections, loop())).isEqualTo("ok");
        }
        assertThat(accepted).hasValue(1);
        assertThat(connections.openConnections()).isEqualTo(1);
    }

    /**
     * The race every keep-alive client meets: the engine's keep-alive runs out as the next request goes out, and it
     * closes the connection without an answer. Not the engine's failure: sent once more, on a new connection.
     */
    @Test
    void keptConnectionClosedUnderTheRequestIsSentAgainOnANewOne() throws IOException {
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger unanswered = new AtomicInteger();
        URI engine = engine(accepted, (socket, number) -> {
            boolean first = true;
            while (readRequest(socket)) {
                if (number == 1 && !first) {
                    unanswered.incrementAndGet();
                    return;
                }
                answer(socket, "ok");
                first = false;
            }
        });
        EngineConnections connections = connections(engine, Duration.ofSeconds(4));
        EventLoop loop = loop();

        assertThat(body(connections, loop)).isEqualTo("ok");
        assertThat(body(connections, loop)).isEqualTo("ok");
        assertThat(unanswered).hasValue(1);
        assertThat(accepted).hasValue(2);
    }

    /** An engine named by a host name (localhost here) rather than an address: resolved, then connected to. */
    @Test
    void engineNamedByAHostNameIsReached() throws IOException {
        AtomicInteger accepted = new AtomicInteger();
        URI engine = engine(accepted, EngineConnectionsTests::answersOk);
        EngineConnections connections =
                connections(URI.create("http://localhost:" + engine.getPort()), Duration.ofSeconds(4));

        assertThat(body(connections, loop())).isEqualTo("ok");
        assertThat(body(connections, loop())).isEqualTo("ok");
        assertThat(accepted).hasValue(1);
    }

    @Test
    void newConnectionClosedBeforeAnAnswerIsTheEnginesFailure() throws IOException {
        AtomicInteger accepted = new AtomicInteger();
        URI engine = engine(accepted, (socket, number) -> readRequest(socket));
        EngineConnections connections = connections(engine, Duration.ofSeconds(4));

        StepVerifier.create(exchange(connections, loop(), new AtomicReference<>()))
                .expectError(EngineConnections.EngineClosed.class)
                .verify(Duration.ofSeconds(10));
        assertThat(accepted).hasValue(1);
    }

    /** A slow client never makes readygate hold the engine's whole answer: the engine's writes wait instead. */
    @Test
    void answerIsReadOnlyAsTheClientTakesIt() throws IOException {
        AtomicLong written = new AtomicLong();
        AtomicBoolean engineSawTheEnd = new AtomicBoolean();
        byte[] chunk = ("4000\r\n" + "x".repeat(0x4000) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        URI engine = engine(new AtomicInteger(), (socket, number) -> {
            readRequest(socket);
            OutputStream out = socket.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            try {
                // Up to 256 MiB, far more than the socket buffers on both sides hold.
                for (int i = 0; i < 16_384; i++) {
                    out.write(chunk);
                    written.addAndGet(chunk.length);
                }
            } catch (IOException e) {
                engineSawTheEnd.set(true);
            }
        });
        EngineConnections connections = connections(engine, Duration.ofSeconds(4));
        AtomicInteger received = new AtomicInteger();
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        exchange(connections, loop(), new AtomicReference<>()).subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                subscription.set(s);
                s.request(1);
            }

            @Override
            protected void hookOnNext(ByteBuf buffer) {
                received.incrementAndGet();
                buffer.release();
            }
        });

        await().atMost(Duration.ofSeconds(10)).until(() -> received.get() == 1);
        // The engine wrote what the sockets' buffers hold, then waits: well under the 256 MiB it would write.
        long limit = 64L << 20;
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> written.get() < limit);

        subscription.get().cancel();
        await().atMost(Duration.ofSeconds(10)).untilTrue(engineSawTheEnd);
        assertThat(written.get()).isLessThan(limit);
    }

    @Test
    void idleConnectionIsClosedAfterItsIdleTime() throws IOException {
        AtomicBoolean engineSawTheEnd = new AtomicBoolean();
        URI engine = engine(new AtomicInteger(), (socket, number) -> {
            while (readRequest(socket)) {
                answer(socket, "ok");
            }
            engineSawTheEnd.set(true);
        });
        EngineConnections connections = connections(engine, Duration.ofMillis(200));

        assertThat(body(connections, loop())).isEqualTo("ok");

        await().atMost(Duration.ofSeconds(10)).untilTrue(engineSawTheEnd);
        assertThat(connections.openConnections()).isZero();
    }

    /** An {@code https} engine is spoken to over TLS: one whose certificate nobody trusts fails the handshake. */
    @Test
    void httpsEngineIsSpokenToOverTls() throws Exception {
        AtomicInteger requests = new AtomicInteger();
        DisposableServer engine = SelfSignedCertificates.tlsServer(dir)
                .handle((request, response) -> {
                    requests.incrementAndGet();
                    return response.sendString(reactor.core.publisher.Mono.just("ok"));
                })
                .bindNow();
        running.add(engine::disposeNow);
        EngineConnections connections =
                connections(URI.create("https://127.0.0.1:" + engine.port()), Duration.ofSeconds(4));

        StepVerifier.create(exchange(connections, loop(), new AtomicReference<>()))
                .expectErrorSatisfies(failure -> assertThat(failure)
                        .isInstanceOf(SSLHandshakeException.class)
                        .hasMessageContaining("PKIX"))
                .verify(Duration.ofSeconds(10));
        assertThat(requests).hasValue(0);
    }

    @Test
    void requestCarriesTheEnginesHostTheBasePathAndTheBodysOwnLength() throws IOException {
        AtomicReference<String> head = new AtomicReference<>();
        URI engine = engine(new AtomicInteger(), (socket, number) -> {
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            StringBuilder lines = new StringBuilder();
            String line;
            while ((line = in.readLine()) != null && !line.isEmpty()) {
                lines.append(line).append('\n');
            }
            head.set(lines.toString());
            answer(socket, "ok");
        });
        URI base = URI.create(engine + "/engine/");
        EngineConnections connections = connections(base, Duration.ofSeconds(4));
        DefaultHttpHeaders headers = new DefaultHttpHeaders();
        headers.add("Authorization", "Bearer sk-client");
        headers.add("Content-Length", "999");
        headers.add("Host", "gateway.example");

        Flux<ByteBuf> answer = connections.exchange(
                loop(),
                HttpMethod.POST,
                "/v1/completions?x=1",
                headers,
                "{}".getBytes(StandardCharsets.UTF_8),
                response -> {});
        StepVerifier.create(answer.map(EngineConnectionsTests::text))
                .expectNext("ok")
                .verifyComplete();
        assertThat(head.get())
                .startsWith("POST /engine/v1/completions?x=1 HTTP/1.1\n")
                .contains("Authorization: Bearer sk-client\n")
                .containsIgnoringCase("host: 127.0.0.1:" + engine.getPort() + "\n")
                .contains("content-length: 2\n")
                .doesNotContain("999")
                .doesNotContain("gateway.example");
    }

    private EngineConnections connections(URI engine, Duration idle) {
        EngineConnections connections =
                new EngineConnections(engine, Duration.ofSeconds(2), idle, loops, ByteBufAllocator.DEFAULT);
        running.add(() -> connections.close().block(Duration.ofSeconds(5)));
        return connections;
    }

    private EventLoop loop() {
        return loops.onServer(true).next();
    }

    private static Flux<ByteBuf> exchange(
            EngineConnections connections, EventLoop loop, AtomicReference<HttpResponse> head) {
        return connections.exchange(loop, HttpMethod.GET, "/v1/models", new DefaultHttpHeaders(), null, head::set);
    }

    private static String body(EngineConnections connections, EventLoop loop) {
        AtomicReference<HttpResponse> head = new AtomicReference<>();
        String body = exchange(connections, loop, head)
                .map(EngineConnectionsTests::text)
                .reduce("", String::concat)
                .block(Duration.ofSeconds(10));
        assertThat(head.get().status().code()).isEqualTo(200);
        return body;
    }

    private static String text(ByteBuf buffer) {
        try {
            return buffer.toString(StandardCharsets.UTF_8);
        } finally {
            buffer.release();
        }
    }

    /** Reads one request's head (these requests have no body); false at the connection's end. */
    private static boolean readRequest(Socket socket) throws IOException {
        var in = socket.getInputStream();
        String end = "\r\n\r\n";
        int matched = 0;
        int next;
        while ((next = in.read()) >= 0) {
            if (next == end.charAt(matched)) {
                matched++;
                if (matched == end.length()) {
                    return true;
                }
            } else {
                matched = next == '\r' ? 1 : 0;
            }
        }
        return false;
    }

    /** Answers every request on the connection "ok", until the connection ends. */
    private static void answersOk(Socket socket, int number) throws IOException {
        while (readRequest(socket)) {
            answer(socket, "ok");
        }
    }

    private static void answer(Socket socket, String body) throws IOException {
        socket.getOutputStream()
                .write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                        .getBytes(StandardCharsets.US_ASCII));
    }

    /** What the engine does with one connection; {@code number} counts them from 1. */
    private interface Connection {
        void serve(Socket socket, int number) throws IOException;
    }

    /** An engine on a plain socket, each connection on a virtual thread of its own. */
    private URI engine(AtomicInteger accepted, Connection connection) throws IOException {
        ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        running.add(listener);
        Thread.ofVirtual().start(() -> {
            while (!listener.isClosed()) {
                try {
                    Socket socket = listener.accept();
                    int number = accepted.incrementAndGet();
                    running.add(socket);
                    Thread.ofVirtual().start(() -> {
                        try (socket) {
                            connection.serve(socket, number);
                        } catch (IOException e) {
                            // the connection ended
                        }
                    });
                } catch (IOException e) {
                    return;
                }
            }
        });
        return URI.create("http://127.0.0.1:" + listener.getLocalPort());
    }
}
