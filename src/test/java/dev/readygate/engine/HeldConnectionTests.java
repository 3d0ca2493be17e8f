package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;
import reactor.test.StepVerifier;

/** The idle connection held to the engine's port: its close is seen, and a server that closes it at once backs it off. */
class HeldConnectionTests {

    private final LoopResources loops = LoopResources.create("held-connection-test", 1, true);
    private final CopyOnWriteArrayList<Connection> accepted = new CopyOnWriteArrayList<>();
    private DisposableServer server;
    private HeldConnection held;

    @AfterEach
    void stop() {
        if (held != null) {
            held.dispose();
        }
        if (server != null) {
            server.disposeNow();
        }
        loops.dispose();
    }

    private HeldConnection heldTo(int port) {
        held = new HeldConnection(
                TcpClient.newConnection().runOn(loops).host("127.0.0.1").port(port),
                System::nanoTime,
                Schedulers.parallel());
        return held;
    }

    private void listen(boolean closeAtOnce) {
        server = TcpServer.create()
                .host("127.0.0.1")
                .port(0)
                .doOnConnection(connection -> {
                    accepted.add(connection);
                    if (closeAtOnce) {
                        connection.dispose();
                    }
                })
                .handle((in, out) -> Mono.never())
                .bindNow();
    }

    @Test
    void closeByTheServerEndsTheWaitAndTheNextWaitIsOnANewConnection() {
        listen(false);
        HeldConnection connection = heldTo(server.port());
        // A wait given up (a poll came first) keeps the connection: the next wait is on the same one.
        StepVerifier.create(connection.closed())
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(50))
                .thenCancel()
                .verify(Duration.ofSeconds(10));
        StepVerifier.create(connection.closed())
                .then(() -> {
                    awaitAccepted(1);
                    accepted.getFirst().dispose();
                })
                .expectComplete()
                .verify(Duration.ofSeconds(10));
        assertThat(accepted).hasSize(1);
        StepVerifier.create(connection.closed())
                .then(() -> {
                    awaitAccepted(2);
                    accepted.get(1).dispose();
                })
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void refusedConnectEndsTheWaitAtOnce() {
        int port = freePort();
        StepVerifier.create(heldTo(port).closed()).expectComplete().verify(Duration.ofSeconds(10));
    }

    @Test
    void disposedHoldsNothing() {
        listen(false);
        HeldConnection connection = heldTo(server.port());
        connection.dispose();
        StepVerifier.create(connection.closed())
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(100))
                .thenCancel()
                .verify(Duration.ofSeconds(10));
        assertThat(accepted).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({
        // current wait, connection lived, next wait
        "0, 0, 250",
        "250, 0, 500",
        "500, 999, 1000",
        "16000, 10, 30000",
        "30000, 0, 30000",
        "30000, 1000, 0",
        "0, 5000, 0",
    })
    void serverThatKeepsClosingAtOnceIsBackedOffAndOneThatLivedResetsIt(long current, long lived, long next) {
        assertThat(HeldConnection.nextBackOff(Duration.ofMillis(current), Duration.ofMillis(lived)))
                .isEqualTo(Duration.ofMillis(next));
    }

    @Test
    void serverThatClosesAtOnceIsAskedAgainOnlyAfterTheBackOff() {
        listen(true);
        HeldConnection connection = heldTo(server.port());
        AtomicInteger ends = new AtomicInteger();
        // The first end is at once; the next waits the first back-off.
        StepVerifier.create(connection.closed().doOnSuccess(v -> ends.incrementAndGet()))
                .expectComplete()
                .verify(Duration.ofSeconds(10));
        long before = System.nanoTime();
        StepVerifier.create(connection.closed()).expectComplete().verify(Duration.ofSeconds(10));
        assertThat(Duration.ofNanos(System.nanoTime() - before)).isGreaterThanOrEqualTo(HeldConnection.FIRST_BACK_OFF);
        assertThat(ends).hasValue(1);
    }

    private void awaitAccepted(int count) {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> accepted.size() >= count);
    }

    private static int freePort() {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
