package dev.readygate.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateApplication;
import dev.readygate.ReadygateClients;
import dev.readygate.gateway.ExchangeEnding;
import dev.readygate.gateway.ExchangeEnds;
import dev.readygate.gateway.GatewayMode;
import dev.readygate.gateway.ProxiedExchange;
import dev.readygate.gateway.WorkInFlight;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.Stop;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Gateway mode in front of llama.cpp's {@code llama-server} (one slot, an API key): a streamed completion passes event
 * by event, a client that goes away frees the engine's slot within seconds, and the client's {@code Authorization} is
 * what the engine checks (readygate never adds its own key), and a stream in flight when readygate stops finishes in the
 * drain and is counted so (the last test: it stops readygate). One llama-server and one readygate for the class.
 */
@Tag("llama-server")
@ExtendWith(OutputCaptureExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayLlamaServerIT {

    private static final String KEY = "sk-gateway-it-7f3a";
    private static final String PROMPT = "Once upon a time in a quiet gateway";
    private static final JsonMapper json = JsonMapper.builder().build();

    @TempDir
    static Path dir;

    static LlamaServer engine;
    static ConfigurableApplicationContext readygate;
    static WebTestClient traffic;
    static WebTestClient direct;
    static final List<ProxiedExchange> exchanges = new CopyOnWriteArrayList<>();

    /** A source of the test's readygate, not a {@code @Configuration}: readygate's component scan would take that up. */
    static class Listener {
        @Bean
        ExchangeEnds recordingEnds() {
            return exchanges::add;
        }
    }

    @BeforeAll
    static void start() throws IOException {
        Path model = GgufModel.small(1).writeTo(dir.resolve("small-1.gguf"));
        engine = LlamaServer.start(
                LlamaServer.binary(),
                model,
                dir.resolve("llama.log"),
                Map.of(),
                "-c",
                "4096",
                "-np",
                "1",
                "--slots",
                "--api-key",
                KEY);
        Path keyFile = Files.writeString(dir.resolve("api-key"), KEY + "\n");
        readygate = new SpringApplicationBuilder(ReadygateApplication.class, Listener.class)
                .run(
                        "--server.address=127.0.0.1",
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.engine.api-key-file=" + keyFile,
                        "--readygate.state-dir=" + dir.resolve("state"),
                        "--readygate.gateway.enabled=true",
                        "--readygate.gateway.port=0");
        WebTestClient admin = ReadygateClients.client(readygate);
        try {
            await().atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions()
                    .until(() -> ReadygateClients.readyz(admin) == 200);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(
                    "not ready: " + ReadygateClients.status(admin) + "\nllama-server's log:\n" + engine.logTail(30), e);
        }
        traffic = WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:"
                        + java.util.Objects.requireNonNull(
                                        readygate.getBean(GatewayMode.class).server())
                                .port())
                .responseTimeout(Duration.ofSeconds(30))
                .build();
        direct = WebTestClient.bindToServer()
                .baseUrl(engine.baseUrl())
                .defaultHeader("Authorization", "Bearer " + KEY)
                .responseTimeout(Duration.ofSeconds(10))
                .build();
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

    @Test
    void streamedCompletionPassesEventByEventAndEndsWithDone(CapturedOutput output) {
        exchanges.clear();
        List<String> events = stream(8).collectList().block(Duration.ofSeconds(60));

        assertThat(events).isNotNull();
        assertThat(events.getLast()).isEqualTo("[DONE]");
        // One event per token (some servers add a last one with the usage), then [DONE].
        assertThat(events.size()).isGreaterThanOrEqualTo(9);
        await().atMost(Duration.ofSeconds(5)).until(() -> !exchanges.isEmpty());
        ProxiedExchange exchange = exchanges.getLast();
        assertThat(exchange.ending()).isEqualTo(ExchangeEnding.COMPLETED);
        assertThat(exchange.streamed()).isTrue();
        assertThat(exchange.events()).isEqualTo(events.size());
        assertThat(output.getAll()).doesNotContain(KEY).doesNotContain(PROMPT);
    }

    @Test
    void clientThatGoesAwayFreesTheEnginesSlot(CapturedOutput output) {
        exchanges.clear();
        int asked = 3500;

        // The first event comes while the engine still generates: the gateway did not wait for the stream's end.
        java.util.concurrent.atomic.AtomicInteger received = new java.util.concurrent.atomic.AtomicInteger();
        reactor.core.Disposable client = stream(asked).subscribe(event -> received.incrementAndGet());
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> received.get() > 0);
            assertThat(slot().path("is_processing").booleanValue())
                    .as(
                            "slot busy with the stream after %d events; llama-server's log:%n%s",
                            received.get(), engine.logTail(15))
                    .isTrue();
        } finally {
            client.dispose();
        }

        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> !slot().path("is_processing").booleanValue());
        JsonNode next = slot().path("next_token");
        int decoded = (next.isArray() ? next.path(0) : next).path("n_decoded").intValue();
        assertThat(decoded).as("tokens decoded before the slot was freed").isLessThan(asked);
        await().atMost(Duration.ofSeconds(5)).until(() -> !exchanges.isEmpty());
        assertThat(exchanges.getLast().ending()).isEqualTo(ExchangeEnding.CLIENT_CANCELLED);
        assertThat(output.getAll()).doesNotContain(KEY).doesNotContain(PROMPT);
    }

    @Test
    void theEngineChecksTheClientsAuthorizationNotReadygatesKey() {
        // llama-server's /v1/models is public; a completion needs the key.
        assertThat(complete(null)).startsWith("401");
        assertThat(complete("Bearer wrong")).startsWith("401");
        assertThat(complete("Bearer " + KEY)).startsWith("200");
    }

    /**
     * Issue 27, item 4, on a real engine: readygate is stopped (its context closed, as SIGTERM does) while a stream is
     * in flight through its gateway; the stream still reaches its client whole (the engine keeps serving, as its preStop
     * lets it in the pod), and the start's stop records the gateway's count: 1 in flight, 1 finished, 0 cut.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void aStreamInFlightWhenReadygateStopsFinishesInTheDrainAndIsCounted() {
        RestartRecords records = readygate.getBean(RestartRecords.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> !records.history().isEmpty());
        String startId = records.history().getLast().id();
        WorkInFlight work = readygate.getBean(WorkInFlight.class);
        List<String> events = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> ended = new CompletableFuture<>();
        stream(1500).subscribe(events::add, ended::completeExceptionally, () -> ended.complete(null));
        await().atMost(Duration.ofSeconds(30)).until(() -> !events.isEmpty());
        assertThat(work.inFlight())
                .as("the stream is still in flight as readygate stops")
                .isEqualTo(1);

        readygate.close();

        assertThat(ended).succeedsWithin(Duration.ofSeconds(5));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        Stop stop = java.util.Objects.requireNonNull(records.history().stream()
                .filter(record -> record.id().equals(startId))
                .findFirst()
                .orElseThrow()
                .stop());
        assertThat(stop.how()).isEqualTo(Stop.How.POD_STOPPED);
        assertThat(stop.traffic()).isEqualTo(new Stop.Traffic(1, 1, 0, 0));
    }

    /** The status and body of a one-token completion sent with {@code authorization}. */
    private static String complete(@Nullable String authorization) {
        var result = traffic.post()
                .uri("/v1/completions")
                .headers(headers -> {
                    if (authorization != null) {
                        headers.set("Authorization", authorization);
                    }
                })
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", PROMPT, "max_tokens", 1))
                .exchange()
                .expectBody(String.class)
                .returnResult();
        return result.getStatus().value() + " " + result.getResponseBody();
    }

    private static Flux<String> stream(int tokens) {
        return traffic.post()
                .uri("/v1/completions")
                .header("Authorization", "Bearer " + KEY)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of(
                        "prompt", PROMPT, "max_tokens", tokens, "ignore_eos", true, "temperature", 0, "stream", true))
                .exchange()
                .expectStatus()
                .isOk()
                .returnResult(String.class)
                .getResponseBody();
    }

    /** The engine's only slot, asked directly. */
    private static JsonNode slot() {
        byte[] body = direct.get()
                .uri("/slots")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult()
                .getResponseBody();
        return json.readTree(body).path(0);
    }
}
