package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateClients;
import dev.readygate.chart.Promtool;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
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

    static GatewayReadygate gateway;
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
        RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
        // Not ready until the fault is cleared: /health passes, generation fails (as after a GPU fault).
        engine.fault("generation-fails", false);
        gateway = GatewayReadygate.start(
                engine, workDir.resolve("state"), List.of(Listener.class), "--readygate.gateway.max-connections=4");
        readygate = gateway.readygate;
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
    }

    private static WebTestClient traffic() {
        return gateway.traffic();
    }

    @Test
    void requestIsRefusedWhileNotReadyAndForwardedOnceReadyOnTheGatewaysOwnLoops() {
        WebTestClient client = ReadygateClients.client(readygate);
        assertThat(ReadygateClients.readyz(client)).isEqualTo(503);
        // Never verified yet: not Ready on the traffic port either (gateway.podReadiness: gateway), so a rollout does
        // not replace a serving pod by this one while its engine cannot serve.
        ReadygateClients.gatewayNotReady(client, "engine_never_verified");

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

        gateway.engine.clearFaults();
        await().atMost(Duration.ofSeconds(30)).until(() -> ReadygateClients.readyz(client) == 200);
        client.get().uri("/readyz/gateway").exchange().expectStatus().isOk();

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

        // A stream: its time to first token is the client's.
        traffic()
                .post()
                .uri("/v1/completions")
                .header("Content-Type", "application/json")
                .bodyValue("{\"model\":\"Qwen/Qwen3-0.6B\",\"prompt\":\"Hi\",\"max_tokens\":4,\"stream\":true}")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .value(body -> assertThat(body).contains("[DONE]"));
        await().atMost(Duration.ofSeconds(5)).until(() -> exchanges.size() == 2);
        assertThat(ReadygateClients.prometheus(client))
                .contains("readygate_gateway_requests_total{outcome=\"not_ready\"} 1.0")
                .contains("readygate_gateway_requests_total{outcome=\"completed\"} 2.0")
                .contains("readygate_gateway_requests_total{outcome=\"engine_closed\"} 0.0")
                .contains("readygate_gateway_ttft_seconds_count 1")
                .contains("readygate_gateway_ttft_seconds_bucket{le=\"60.0\"} 1")
                .contains("readygate_gateway_in_flight 0.0")
                .contains("readygate_gateway_held_seconds_count{result=\"forwarded\"} 0");
    }

    @Test
    @Tag("promtool")
    void promtoolCheckMetricsReportsNothingOfTheTrafficMetersEachThereFromTheStart() {
        String exposition = ReadygateClients.prometheus(ReadygateClients.client(readygate));

        Promtool.Result check = Promtool.run(exposition, "check", "metrics");

        assertThat(check.output()).isEmpty();
        assertThat(check.exitCode()).isZero();
        for (String outcome : List.of("draining", "saturated", "too_large", "route_not_proxied", "stalled")) {
            assertThat(exposition).contains("readygate_gateway_requests_total{outcome=\"" + outcome + "\"}");
        }
        assertThat(exposition)
                .contains("readygate_gateway_held_seconds_bucket{result=\"refused\",le=\"300.0\"}")
                .contains("readygate_gateway_ttft_seconds_bucket{le=\"0.01\"}")
                .contains("readygate_gateway_connections ")
                .contains("readygate_gateway_connections_refused_total ");
    }

    @Test
    void probesAnswerWhileTheTrafficPortIsAtItsConnectionCap() throws IOException {
        TrafficServer server = gateway.server();
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 2000);
                held.add(socket);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> server.openConnections() == 4);
            assertThat(server.refusedConnections()).isPositive();
            assertThat(ReadygateClients.prometheus(ReadygateClients.client(readygate)))
                    .contains("readygate_gateway_connections 4.0")
                    .containsPattern("readygate_gateway_connections_refused_total [1-9]");

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
