package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateClients;
import dev.readygate.metrics.MeterNames;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.Stop;
import dev.readygate.simulator.RunningSimulator;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/**
 * A drain during a rollout (issue 27, items 4 and 5), against the simulator: readygate is stopped (as SIGTERM does,
 * by closing its context) with four streams in flight through its gateway. The three that finish within
 * {@code readygate.gateway.drain-timeout} reach their clients whole; the one longer than the deadline is cut; the
 * traffic port keeps answering (503 {@code engine_draining}) and {@code /readyz} says 503 meanwhile; the start's stop
 * records the gateway's own count, and the metrics count what was cut.
 */
class GatewayDrainTests {

    @TempDir
    Path workDir;

    private GatewayReadygate gateway;
    private RunningSimulator engine;
    private ConfigurableApplicationContext readygate;
    private WebTestClient admin;
    private RestartRecords records;
    private String startId;
    private int port;

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
    }

    /** One client's stream: what it received, whole or cut. */
    static final class ClientStream {
        private final StringBuilder received = new StringBuilder();
        private final CompletableFuture<Boolean> ended = new CompletableFuture<>();

        synchronized void append(String chunk) {
            received.append(chunk);
        }

        /** The token-carrying events received: one {@code data: {...}} line each. */
        synchronized long tokenEvents() {
            return received.toString()
                    .lines()
                    .filter(line -> line.startsWith("data: {"))
                    .count();
        }

        synchronized boolean whole() {
            return received.toString().contains("data: [DONE]");
        }
    }

    private static ClientStream stream(int port, int maxTokens) {
        ClientStream stream = new ClientStream();
        String body = """
                {"model":"Qwen/Qwen3-0.6B","prompt":"Tell me a story","max_tokens":%d,"ignore_eos":true,"stream":true}""".formatted(maxTokens);
        HttpClient.create()
                .host("127.0.0.1")
                .port(port)
                .headers(headers -> headers.set(HttpHeaderNames.CONTENT_TYPE, "application/json"))
                .post()
                .uri("/v1/completions")
                .send(ByteBufFlux.fromString(Mono.just(body)))
                .responseContent()
                .asString()
                .doOnNext(stream::append)
                .then()
                .subscribe(done -> {}, failure -> stream.ended.complete(false), () -> stream.ended.complete(true));
        return stream;
    }

    /**
     * The simulator at 20 ms a token, and readygate with its gateway in front of it, draining for 3 s; returns once the
     * engine is verified ready and its start recorded.
     */
    private static int status(WebTestClient client, String path) {
        return client.get()
                .uri(path)
                .exchange()
                .returnResult(String.class)
                .getStatus()
                .value();
    }

    private void start() {
        gateway = GatewayReadygate.start(
                RunningSimulator.serving(
                        workDir.resolve("engine"), "preload.enabled=false", "timing.decode-per-token=20ms"),
                workDir.resolve("state"),
                List.of(),
                "--readygate.gateway.drain-timeout=3s");
        engine = gateway.engine;
        readygate = gateway.readygate;
        admin = ReadygateClients.client(readygate);
        await().atMost(Duration.ofSeconds(30)).until(() -> ReadygateClients.readyz(admin) == 200);
        records = readygate.getBean(RestartRecords.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> !records.history().isEmpty());
        startId = records.history().getLast().id();
        port = Objects.requireNonNull(readygate.getBean(GatewayMode.class).server())
                .port();
    }

    @Test
    void streamsThatFinishWithinTheDeadlineAreWholeAndOneLongerIsCutAndCounted() throws Exception {
        start();
        MeterRegistry meters = readygate.getBean(MeterRegistry.class);

        // Three streams of about 1 s and one of about 12 s, each under way (a token received) before the stop.
        List<ClientStream> shortStreams =
                IntStream.range(0, 3).mapToObj(i -> stream(port, 50)).toList();
        ClientStream longStream = stream(port, 600);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> shortStreams.stream().allMatch(s -> s.tokenEvents() > 0) && longStream.tokenEvents() > 0);
        assertThat(shortStreams).noneMatch(ClientStream::whole);

        assertThat(status(admin, "/readyz/gateway")).isEqualTo(200);
        CompletableFuture<Void> closed = CompletableFuture.runAsync(readygate::close);

        // Draining: readiness says 503 on readygate's own port, the gateway's too (the pod readiness that
        // gateway.podReadiness: gateway chooses), and the traffic port refuses new requests.
        await().atMost(Duration.ofSeconds(3)).until(() -> ReadygateClients.readyz(admin) == 503);
        ReadygateClients.gatewayNotReady(admin, "traffic_port_closed");
        WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + port)
                .build()
                .get()
                .uri("/v1/models")
                .exchange()
                .expectStatus()
                .isEqualTo(503)
                .expectBody()
                .jsonPath("$.error.code")
                .isEqualTo("engine_draining");
        assertThat(longStream.ended).isNotDone();

        closed.get(20, TimeUnit.SECONDS);

        // 0 lost of those that finish within the deadline; the longer one cut.
        assertThat(CompletableFuture.allOf(
                        shortStreams.stream().map(s -> s.ended).toArray(CompletableFuture[]::new)))
                .succeedsWithin(Duration.ofSeconds(5));
        assertThat(shortStreams).allMatch(ClientStream::whole);
        assertThat(longStream.ended).succeedsWithin(Duration.ofSeconds(5));
        assertThat(longStream.whole()).isFalse();
        long received = longStream.tokenEvents();
        assertThat(received).isPositive().isLessThan(600);

        RestartRecord record = records.history().stream()
                .filter(r -> r.id().equals(startId))
                .findFirst()
                .orElseThrow();
        Stop stop = Objects.requireNonNull(record.stop());
        assertThat(stop.how()).isEqualTo(Stop.How.POD_STOPPED);
        Stop.Traffic traffic = Objects.requireNonNull(stop.traffic());
        assertThat(traffic.inFlight()).isEqualTo(4);
        assertThat(traffic.finished()).isEqualTo(3);
        assertThat(traffic.cut()).isEqualTo(1);
        // What the gateway passed; the client may have missed the last events the cut closed the connection under.
        assertThat(traffic.cutTokens()).isGreaterThanOrEqualTo(received);
        assertThat(meters.get(MeterNames.GATEWAY_STOP_CUT_REQUESTS)
                        .functionCounter()
                        .count())
                .isEqualTo(1.0);
        assertThat(meters.get(MeterNames.GATEWAY_STOP_CUT_TOKENS)
                        .functionCounter()
                        .count())
                .isEqualTo(traffic.cutTokens());
    }

    @Test
    void aCrashCountsTheStreamsItCutFromTheGatewaysOwnCount() {
        start();
        List<ClientStream> streams =
                IntStream.range(0, 2).mapToObj(i -> stream(port, 600)).toList();
        await().atMost(Duration.ofSeconds(10)).until(() -> streams.stream().allMatch(s -> s.tokenEvents() > 0));

        engine.crash();

        // The engine is down, so /readyz says 503; the traffic port still takes requests (and refuses them with
        // Retry-After), so /readyz/gateway stays 200.
        await().atMost(Duration.ofSeconds(5)).until(() -> ReadygateClients.readyz(admin) == 503);
        assertThat(status(admin, "/readyz/gateway")).isEqualTo(200);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> records.history().stream()
                        .anyMatch(r -> r.id().equals(startId)
                                && r.stop() != null
                                && r.stop().traffic() != null));
        Stop stop = Objects.requireNonNull(records.history().stream()
                .filter(r -> r.id().equals(startId))
                .findFirst()
                .orElseThrow()
                .stop());
        assertThat(stop.how()).isIn(Stop.How.WENT_AWAY, Stop.How.REPLACED);
        Stop.Traffic traffic = Objects.requireNonNull(stop.traffic());
        assertThat(traffic.inFlight()).isEqualTo(2);
        assertThat(traffic.finished()).isZero();
        assertThat(traffic.cut()).isEqualTo(2);
        assertThat(streams).noneMatch(ClientStream::whole);
        assertThat(traffic.cutTokens())
                .isGreaterThanOrEqualTo(
                        streams.stream().mapToLong(ClientStream::tokenEvents).sum());
        assertThat(readygate
                        .getBean(MeterRegistry.class)
                        .get(MeterNames.GATEWAY_STOP_CUT_REQUESTS)
                        .functionCounter()
                        .count())
                .isEqualTo(2.0);
    }
}
