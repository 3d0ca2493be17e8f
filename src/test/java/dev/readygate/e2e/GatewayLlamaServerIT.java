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
import dev.readygate.support.StateChanges;
import dev.readygate.support.StreamingClients;
import dev.readygate.support.StreamingClients.Outcome;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
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
 * what the engine checks (readygate never adds its own key). Under steady traffic ({@value #CLIENTS} clients streaming
 * back to back), a {@code kill -9} cuts the streams in flight and new requests are refused (503 with
 * {@code Retry-After}), at most one per client forwarded to the dead port before the first refused connection is
 * judged; a {@code SIGSTOP} has the stalled streams cut by the gateway's
 * limits and the engine taken out after at most {@code failure-threshold} (3) failed client requests, and back after
 * {@code SIGCONT}; a stream in flight when readygate stops finishes in the drain and is counted so (it stops
 * readygate); last, an announced restart through a readygate of its own with {@code hold} on fails and refuses none. One llama-server and one readygate for the class (a test that stops the engine starts it
 * again).
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
    static WebTestClient admin;
    static WebTestClient direct;
    static final List<ProxiedExchange> exchanges = new CopyOnWriteArrayList<>();
    static final StateChanges states = new StateChanges();
    static final int CLIENTS = 2;
    static final int THRESHOLD = 3;

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
                .listeners(states)
                .run(
                        "--server.address=127.0.0.1",
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.engine.api-key-file=" + keyFile,
                        "--readygate.state-dir=" + dir.resolve("state"),
                        "--readygate.gateway.enabled=true",
                        "--readygate.gateway.port=0",
                        // A kill and its restart are not a restart loop to hold the engine out for.
                        "--readygate.restart.loop-hold=0s",
                        // Small limits, so that a stopped engine's streams are cut within seconds.
                        "--readygate.gateway.connect-timeout=1s",
                        "--readygate.gateway.first-byte-timeout=5s",
                        "--readygate.gateway.between-events-timeout=2s");
        admin = ReadygateClients.client(readygate);
        awaitReady();
        traffic = trafficClient(readygate, Duration.ofSeconds(30));
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

    @Test
    void killDashNineCutsTheStreamsInFlightAndNewRequestsAreRefusedNotForwardedToTheDeadPort() {
        exchanges.clear();
        Instant killed;
        List<StreamingClients.Request> requests;
        try (StreamingClients clients = clients()) {
            await().atMost(Duration.ofSeconds(60)).until(() -> clients.count(Outcome.COMPLETED) >= 2L * CLIENTS);
            killed = Instant.now();
            engine.kill();
            await().atMost(Duration.ofSeconds(20)).until(() -> ReadygateClients.readyz(admin) == 503);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> countAfter(clients.requests(), killed, Outcome.REFUSED) >= 2L * CLIENTS);
            requests = clients.requests();
        } finally {
            restartIfGone();
        }

        Map<Outcome, Long> after = tally(requests, killed);
        String story = "after kill -9: %s; forwarded %s"
                .formatted(
                        after,
                        exchanges.stream()
                                .map(e -> e.ending() + "/" + e.status())
                                .toList());
        System.out.println("[gateway-llama] " + story);
        // The requests in flight at the kill fail (nothing can save them: cut, or a 502 before their answer). A refused
        // connection takes the engine out at once and every request after it is refused cleanly; but the clients whose
        // requests the kill ended all send their next one after the same pause, at once, and each of those may reach
        // the
        // dead port before the first refusal is judged: at most one per client (as GatewayFaultsTests' PORT_GONE
        // bound).
        // Seen in CI: {CUT=1, FAILED=3}, two of them refused connections sent within the same moment.
        assertThat(after.get(Outcome.CUT) + after.get(Outcome.FAILED)).as(story).isLessThanOrEqualTo(2L * CLIENTS);
        assertThat(exchanges.stream().filter(e -> e.ending() == ExchangeEnding.CONNECT_REFUSED))
                .as("forwarded to the dead port: " + story)
                .hasSizeLessThanOrEqualTo(CLIENTS);
        assertThat(exchanges.stream().filter(e -> states.outAt(e.startedAt())))
                .as("forwarded while out: " + story)
                .isEmpty();
        assertThat(after.get(Outcome.REFUSED)).as(story).isGreaterThanOrEqualTo(2L * CLIENTS);
    }

    @Test
    void sigstopHasTheStalledStreamsCutAndTakesTheEngineOutAfterAtMostThreeFailedClientRequests() {
        exchanges.clear();
        Instant stopped;
        List<StreamingClients.Request> requests;
        Instant out;
        try (StreamingClients clients = clients()) {
            await().atMost(Duration.ofSeconds(60)).until(() -> clients.count(Outcome.COMPLETED) >= 2L * CLIENTS);
            stopped = Instant.now();
            engine.pause();
            try {
                await().atMost(Duration.ofSeconds(60)).until(() -> ReadygateClients.readyz(admin) == 503);
                out = java.util.Objects.requireNonNull(states.outSince(stopped));
                // The requests in flight when it was taken out end too (cut by the limits), then only refusals.
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> countAfter(clients.requests(), stopped, Outcome.REFUSED) >= 2L * CLIENTS);
            } finally {
                engine.resume();
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> ReadygateClients.readyz(admin) == 200);
            Instant resumed = Instant.now();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> countAfter(clients.requests(), resumed, Outcome.COMPLETED) >= CLIENTS);
            requests = clients.requests();
        } finally {
            restartIfGone();
        }

        Instant taken = out;
        long failedBeforeOut = requests.stream()
                .filter(r -> !r.ended().isBefore(stopped) && r.ended().isBefore(taken))
                .filter(r -> r.outcome() == Outcome.CUT || r.outcome() == Outcome.FAILED)
                .count();
        Map<Outcome, Long> after = tally(requests, stopped);
        String story = "after SIGSTOP (out at %s, %d failed before): %s; forwarded %s"
                .formatted(
                        taken,
                        failedBeforeOut,
                        after,
                        exchanges.stream()
                                .map(e -> e.ending() + "/" + e.status())
                                .toList());
        System.out.println("[gateway-llama] " + story);
        assertThat(failedBeforeOut).as(story).isLessThanOrEqualTo(THRESHOLD);
        // Those already in flight when it was taken out are cut by the limits; none was forwarded while it was out.
        assertThat(after.get(Outcome.CUT) + after.get(Outcome.FAILED))
                .as(story)
                .isLessThanOrEqualTo(THRESHOLD + CLIENTS - 1L);
        // The streams the stopped engine held: in flight at the SIGSTOP or sent before it was taken out, ending after
        // it (readygate's own /health check may take it out before any request is sent to the stopped engine).
        assertThat(exchanges.stream()
                        .filter(e ->
                                !e.endedAt().isBefore(stopped) && e.startedAt().isBefore(taken))
                        .map(ProxiedExchange::ending))
                .as("the stalled streams cut by the gateway's limits: " + story)
                .containsAnyOf(ExchangeEnding.STALLED, ExchangeEnding.FIRST_BYTE_TIMED_OUT);
        assertThat(exchanges.stream().filter(e -> states.outAt(e.startedAt())))
                .as("forwarded while out: " + story)
                .isEmpty();
    }

    private static StreamingClients clients() {
        return clients(readygate);
    }

    /** {@link #CLIENTS} clients streaming back to back through {@code gateway}'s traffic port. */
    private static StreamingClients clients(ConfigurableApplicationContext gateway) {
        int port = trafficPort(gateway);
        String body = "{\"prompt\":\"" + PROMPT + "\",\"max_tokens\":16,\"ignore_eos\":true,\"temperature\":0,"
                + "\"stream\":true}";
        return StreamingClients.start(
                () -> URI.create("http://127.0.0.1:" + port + "/v1/completions"),
                CLIENTS,
                body,
                Map.of("Authorization", "Bearer " + KEY),
                Duration.ofMillis(100),
                at -> true);
    }

    private static long countAfter(List<StreamingClients.Request> requests, Instant from, Outcome outcome) {
        return requests.stream()
                .filter(r -> !r.sent().isBefore(from) && r.outcome() == outcome)
                .count();
    }

    /** The outcomes of the requests that ended at or after {@code from}. */
    private static Map<Outcome, Long> tally(List<StreamingClients.Request> requests, Instant from) {
        Map<Outcome, Long> counts = new java.util.EnumMap<>(Outcome.class);
        for (Outcome outcome : Outcome.values()) {
            counts.put(
                    outcome,
                    requests.stream()
                            .filter(r -> !r.ended().isBefore(from) && r.outcome() == outcome)
                            .count());
        }
        return counts;
    }

    /** Starts llama-server again if a test killed it, and waits until readygate says ready. */
    private static void restartIfGone() {
        if (!engine.alive()) {
            engine.restart();
        }
        awaitReady();
    }

    private static void awaitReady() {
        try {
            await().atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions()
                    .until(() -> ReadygateClients.readyz(admin) == 200);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(
                    "not ready: " + ReadygateClients.status(admin) + "\nllama-server's log:\n" + engine.logTail(30), e);
        }
    }

    /**
     * Issue 27, items 3 and 4, on a real engine: a planned restart of llama-server under steady streams, announced first
     * to a readygate with {@code hold} and {@code retry-before-first-byte} on ({@code POST /gateway/drain}, answered once
     * nothing is in flight), fails no client request and refuses none: the requests that arrive while the engine is
     * away wait, and go to the new start once readygate verified it. A readygate of its own (the class's has hold off),
     * in front of the same llama-server, started once the class's is closed (the last test before this one closes it):
     * two readygates in one JVM share Reactor Netty's global resources, and closing one would stop the other's server.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void anAnnouncedRestartWithHoldOnFailsAndRefusesNoClientRequest() {
        ConfigurableApplicationContext holding = ownReadygate(
                "state-hold", "--readygate.gateway.hold=true", "--readygate.gateway.retry-before-first-byte=true");
        List<StreamingClients.Request> requests;
        Instant announced;
        String drain;
        try {
            WebTestClient holdingAdmin = ReadygateClients.client(holding);
            await().atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> ReadygateClients.readyz(holdingAdmin) == 200);
            try (StreamingClients clients = clients(holding)) {
                await().atMost(Duration.ofSeconds(60)).until(() -> clients.count(Outcome.COMPLETED) >= 2L * CLIENTS);
                announced = Instant.now();
                // The drain answers once the streams in flight have ended: on a loaded machine 16 tokens of
                // llama-server can take longer than the client's default 5 s (seen in CI), so wait up to max-wait.
                drain = holdingAdmin
                        .mutate()
                        .responseTimeout(Duration.ofSeconds(35))
                        .build()
                        .post()
                        .uri("/gateway/drain")
                        .exchange()
                        .expectStatus()
                        .isOk()
                        .expectBody(String.class)
                        .returnResult()
                        .getResponseBody();
                engine.kill();
                engine.restart();
                Instant restarted = Instant.now();
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> clients.requests().stream()
                                        .filter(r -> r.outcome() == Outcome.COMPLETED
                                                && r.sent().isAfter(restarted))
                                        .count()
                                >= 2L * CLIENTS);
                requests = clients.requests();
            }
        } finally {
            holding.close();
            if (!engine.alive()) {
                engine.restart();
            }
        }

        Map<Outcome, Long> after = tally(requests, announced);
        String story = "after the announced restart: %s; drain answered %s".formatted(after, drain);
        System.out.println("[gateway-llama] " + story);
        assertThat(after.get(Outcome.COMPLETED)).as(story).isGreaterThanOrEqualTo(2L * CLIENTS);
        assertThat(after.get(Outcome.FAILED)).as(story).isZero();
        assertThat(after.get(Outcome.CUT)).as(story).isZero();
        assertThat(after.get(Outcome.REFUSED)).as(story).isZero();
    }

    /**
     * Issue 27, item 3, on a real engine: an unannounced {@code kill -9} of llama-server through a readygate with
     * {@code retry-before-first-byte} on. A stream that had begun is cut (a byte reached its client: never sent again);
     * a request the engine had taken but not answered (a non-streamed completion waiting in llama-server's queue behind
     * that stream: llama-server writes nothing before its result) fails before any byte of an answer, waits for the
     * engine's next verified start, and is sent once more: its client gets the engine's 200, and the gateway counts its
     * first attempt as sent again. A readygate of its own, started once the class's is closed (see
     * {@link #anAnnouncedRestartWithHoldOnFailsAndRefusesNoClientRequest}).
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void aRequestTheKilledEngineHadNotAnsweredIsSentOnceMoreAfterItsRestart() throws Exception {
        exchanges.clear();
        ConfigurableApplicationContext retrying =
                ownReadygate("state-retry", "--readygate.gateway.retry-before-first-byte=true");
        List<String> streamed = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> streamEnded = new CompletableFuture<>();
        CompletableFuture<String> queued;
        try {
            WebTestClient retryAdmin = ReadygateClients.client(retrying);
            await().atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> ReadygateClients.readyz(retryAdmin) == 200);
            WebTestClient retryTraffic = trafficClient(retrying, Duration.ofSeconds(90));
            WorkInFlight work = retrying.getBean(WorkInFlight.class);
            stream(retryTraffic, 1500)
                    .subscribe(streamed::add, streamEnded::completeExceptionally, () -> streamEnded.complete(null));
            await().atMost(Duration.ofSeconds(30)).until(() -> !streamed.isEmpty());
            queued = CompletableFuture.supplyAsync(() -> {
                var result = retryTraffic
                        .post()
                        .uri("/v1/completions")
                        .header("Authorization", "Bearer " + KEY)
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(Map.of("prompt", PROMPT, "max_tokens", 4, "ignore_eos", true, "temperature", 0))
                        .exchange()
                        .expectBody(String.class)
                        .returnResult();
                return result.getStatus().value() + " " + result.getResponseBody();
            });
            // Both forwarded: the stream holds the only slot, the completion waits in llama-server's queue.
            await().atMost(Duration.ofSeconds(10)).until(() -> work.inFlight() == 2);
            Instant killed = Instant.now();
            engine.kill();
            engine.restart();
            assertThat(queued)
                    .as("the queued request, sent once more after the restart")
                    .succeedsWithin(Duration.ofSeconds(90));
            String answer = queued.get();
            String story = "answer %s; exchanges %s"
                    .formatted(
                            answer.length() > 80 ? answer.substring(0, 80) : answer,
                            exchanges.stream()
                                    .map(e -> e.ending() + "/" + e.status() + (e.sentAgain() ? "/sent-again" : ""))
                                    .toList());
            System.out.println("[gateway-llama] after kill -9 with retry: " + story);
            assertThat(answer).as(story).startsWith("200 ").contains("\"text\"");
            assertThat(exchanges.stream().filter(ProxiedExchange::sentAgain))
                    .as("the queued request's first attempt, failed before any answer: " + story)
                    .singleElement()
                    .satisfies(first -> {
                        assertThat(first.streamed()).isFalse();
                        assertThat(first.bytes()).isZero();
                        assertThat(first.startedAt()).isBefore(killed);
                    });
            assertThat(streamEnded)
                    .as("the stream that had begun is cut, not sent again")
                    .failsWithin(Duration.ofSeconds(30));
            assertThat(streamed).doesNotContain("[DONE]");
        } finally {
            retrying.close();
            if (!engine.alive()) {
                engine.restart();
            }
        }
    }

    /**
     * Issue 27, item 4, on a real engine: readygate is stopped (its context closed, as SIGTERM does) while a stream is
     * in flight through its gateway; the stream still reaches its client whole (the engine keeps serving, as its preStop
     * lets it in the pod), and the start's stop records the gateway's count: 1 in flight, 1 finished, 0 cut.
     */
    @Test
    @Order(Integer.MAX_VALUE - 1)
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

    /**
     * A readygate of a test's own in front of the class's llama-server, gateway on, its exchanges recorded in
     * {@link #exchanges}: started only once the class's is closed (two share Reactor Netty's global resources).
     */
    private static ConfigurableApplicationContext ownReadygate(String stateDir, String... settings) {
        List<String> args = new java.util.ArrayList<>(List.of(
                "--server.address=127.0.0.1",
                "--server.port=0",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.engine.api-key-file=" + dir.resolve("api-key"),
                "--readygate.state-dir=" + dir.resolve(stateDir),
                "--readygate.gateway.enabled=true",
                "--readygate.gateway.port=0",
                "--readygate.restart.loop-hold=0s"));
        args.addAll(List.of(settings));
        return new SpringApplicationBuilder(ReadygateApplication.class, Listener.class)
                .run(args.toArray(String[]::new));
    }

    /** {@code gateway}'s traffic port. */
    private static int trafficPort(ConfigurableApplicationContext gateway) {
        return java.util.Objects.requireNonNull(
                        gateway.getBean(GatewayMode.class).server())
                .port();
    }

    /** A client of {@code gateway}'s traffic port, waiting at most {@code timeout} for an answer. */
    private static WebTestClient trafficClient(ConfigurableApplicationContext gateway, Duration timeout) {
        return WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + trafficPort(gateway))
                .responseTimeout(timeout)
                .build();
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
        return stream(traffic, tokens);
    }

    private static Flux<String> stream(WebTestClient through, int tokens) {
        return through.post()
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
