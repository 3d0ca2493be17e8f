package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateClients;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Item 3's goal, end to end: readygate's gateway with {@code hold} in front of the simulator, under steady streamed
 * traffic (four clients sending requests back to back). A preload-hit restart announced to the gateway
 * ({@code POST /gateway/drain}) fails no client request: those in flight finish before the engine stops, those that
 * arrive during the restart wait and are served by the new start. An unannounced crash cuts only the streams the
 * engine was writing; with {@code retry-before-first-byte} none of the requests sent after it fails.
 */
class GatewayHoldTests {

    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path workDir;

    GatewayReadygate gateway;
    RunningSimulator engine;
    ConfigurableApplicationContext readygate;
    ExecutorService clients;
    final AtomicBoolean sending = new AtomicBoolean(true);
    final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** One client request: when it was sent, when it ended, and whether it was served whole. */
    record Outcome(Instant sent, Instant ended, int status, boolean whole, String detail) {
        boolean ok() {
            return status == 200 && whole;
        }
    }

    @AfterEach
    void stop() throws InterruptedException {
        sending.set(false);
        if (clients != null) {
            clients.shutdown();
            clients.awaitTermination(30, TimeUnit.SECONDS);
        }
        if (gateway != null) {
            gateway.close();
        }
    }

    void start(String... extra) {
        start(4, false, extra);
    }

    /**
     * The engine and readygate in front, and {@code senders} clients sending; with {@code preloadHitFirst} the engine
     * restarted along a preload hit before they begin.
     */
    void start(int senders, boolean preloadHitFirst, String... extra) {
        Path sim = workDir.resolve("engine");
        List<String> settings = new java.util.ArrayList<>(List.of(
                "--spring.reactor.netty.shutdown-quiet-period=0s",
                "--readygate.evidence.snapshot-dir=" + sim.resolve("snapshot"),
                "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                "--readygate.evidence.daemon-socket-dir=" + sim.resolve("weight-cache"),
                "--readygate.evidence.daemon-log=" + sim.resolve("preload-daemon.log"),
                "--readygate.gateway.hold=true",
                "--readygate.gateway.max-wait=20s"));
        settings.addAll(List.of(extra));
        gateway = GatewayReadygate.start(
                RunningSimulator.serving(sim), workDir.resolve("state"), List.of(), settings.toArray(String[]::new));
        engine = gateway.engine;
        readygate = gateway.readygate;
        WebTestClient admin = ReadygateClients.client(readygate);
        ReadygateClients.awaitReady(admin);
        if (preloadHitFirst) {
            // The engine's latest start a preload hit: while it is down between starts, the next is expected the same.
            engine.restartAndAwait(StartupPath.PRELOAD_HIT);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> ReadygateClients.status(admin)
                                    .at("/restarts/history")
                                    .size()
                            >= 2);
            ReadygateClients.awaitReady(admin);
        }
        if (senders == 0) {
            return;
        }
        clients = Executors.newFixedThreadPool(senders);
        for (int i = 0; i < senders; i++) {
            clients.submit(() -> {
                while (sending.get()) {
                    outcomes.add(completion());
                }
            });
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> served() >= 8);
    }

    long served() {
        return outcomes.stream().filter(Outcome::ok).count();
    }

    List<Outcome> failed() {
        return outcomes.stream().filter(outcome -> !outcome.ok()).toList();
    }

    /** A streamed completion of {@code tokens} tokens through the gateway. */
    HttpRequest completionRequest(int tokens) {
        int port = Objects.requireNonNull(readygate.getBean(GatewayMode.class).server())
                .port();
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                .header("Content-Type", "application/json")
                .timeout(REQUEST_TIMEOUT)
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"model\":\"Qwen/Qwen3-0.6B\",\"prompt\":\"Tell me about the sea.\"," + "\"max_tokens\":"
                                + tokens + ",\"stream\":true}"))
                .build();
    }

    Outcome completion() {
        Instant sent = Instant.now();
        try {
            HttpResponse<String> response = http.send(completionRequest(16), HttpResponse.BodyHandlers.ofString());
            String body = response.body();
            boolean whole = body.contains("[DONE]") && !body.contains("\"error\"");
            return new Outcome(
                    sent,
                    Instant.now(),
                    response.statusCode(),
                    whole,
                    whole ? "" : body.substring(0, Math.min(200, body.length())));
        } catch (Exception e) {
            return new Outcome(sent, Instant.now(), 0, false, e.toString());
        }
    }

    /** Waits until the restart's new start is verified and {@code more} requests were served after it. */
    void awaitServedAfter(int before, long more) {
        await().atMost(Duration.ofSeconds(60))
                .until(() -> engine.latestStartNumber() > before
                        && ReadygateClients.readyz(ReadygateClients.client(readygate)) == 200);
        long now = served();
        await().atMost(Duration.ofSeconds(30)).until(() -> served() >= now + more);
    }

    @Test
    void anAnnouncedPreloadHitRestartUnderSteadyTrafficFailsNoClientRequest() {
        start();
        WebTestClient admin = ReadygateClients.client(readygate);
        int before = engine.latestStartNumber();
        Instant announced = Instant.now();

        admin.post()
                .uri(GatewayDrainController.PATH)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.drained")
                .isEqualTo(true)
                .jsonPath("$.inFlight")
                .isEqualTo(0);
        Instant stopped = Instant.now();
        engine.restartAndAwait(StartupPath.PRELOAD_HIT);
        awaitServedAfter(before, 8);
        sending.set(false);

        assertThat(failed())
                .as("failed client requests (announced at %s, the engine stopped after %s)", announced, stopped)
                .isEmpty();
        assertThat(outcomes)
                .as("requests sent while the engine restarted, held and served by the new start")
                .anyMatch(outcome -> outcome.sent().isAfter(stopped) && outcome.ok());
        assertThat(ReadygateClients.status(admin).at("/restarts/history/0/path").asString())
                .isEqualTo("preload_hit");
    }

    @Test
    void anUnannouncedCrashCutsOnlyTheStreamsInFlightAndWithRetryNoLaterRequestFails() {
        start(4, true, "--readygate.gateway.retry-before-first-byte=true");
        int before = engine.latestStartNumber();
        double running = engine.requestsRunning();

        engine.crash();
        // When readygate saw the engine down: from then on the gateway holds new requests; a request sent before may
        // have reached the crashing process (with a real process, at once refused or cut).
        EngineStateMachine machine = readygate.getBean(EngineStateMachine.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> machine.current() instanceof EngineState.Down);
        Instant crashed = machine.current().since();
        awaitServedAfter(before, 8);
        sending.set(false);

        // Refused cleanly (503 with Retry-After) is not failed: a request arriving as the new start's path still reads
        // cold (before the engine's log shows the cache mapping) is told to come back, not held.
        List<Outcome> failed =
                failed().stream().filter(outcome -> outcome.status() != 503).toList();
        assertThat(failed)
                .as(
                        "only streams the crashing engine took may fail: one in flight per client (4), and one per client it"
                                + " accepted as it went (the simulator closes its listener after its connections)")
                .hasSizeLessThanOrEqualTo(8)
                .allSatisfy(outcome -> assertThat(outcome.sent()).isBefore(crashed));
        assertThat(running)
                .as("the engine was serving the clients when it crashed")
                .isPositive();
    }

    @Test
    void aFloodOfStreamsBeyondTheBoundAndTheQueueIsToldToComeBackWhileTheProbesAnswer() {
        start(0, false, "--readygate.gateway.max-in-flight=2", "--readygate.gateway.max-queued=2");
        WebTestClient admin = ReadygateClients.client(readygate);

        List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> flood = new java.util.ArrayList<>();
        for (int i = 0; i < 12; i++) {
            flood.add(http.sendAsync(completionRequest(64), HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> flood.stream().filter(f -> f.isDone()).count() >= 8);
        assertThat(ReadygateClients.readyz(admin))
                .as("the probes answer during the flood")
                .isEqualTo(200);
        List<HttpResponse<String>> answers =
                flood.stream().map(java.util.concurrent.CompletableFuture::join).toList();

        assertThat(answers).extracting(HttpResponse::statusCode).containsOnly(200, 429);
        assertThat(answers.stream().filter(answer -> answer.statusCode() == 200))
                .as("2 in flight and 2 queued are served whole")
                .hasSizeGreaterThanOrEqualTo(4)
                .allSatisfy(answer -> assertThat(answer.body()).contains("[DONE]"));
        assertThat(answers.stream().filter(answer -> answer.statusCode() == 429))
                .isNotEmpty()
                .allSatisfy(answer -> {
                    assertThat(answer.headers().firstValue("Retry-After")).hasValue("1");
                    assertThat(answer.body()).contains("\"code\":\"engine_saturated\"");
                });
    }
}
