package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * A ready engine, at readygate's default cadences, against the simulator: a fault that makes generation fail or hang,
 * stalls streams or swaps the weights is seen by the light checks within seconds, idle and under steady traffic, each
 * with its own reason; traffic with the simulator's batch variance (vLLM's kernels are not batch-invariant) never
 * makes the canary mismatch ({@link SaturatedEngineTests}: a saturated engine is busy, never broken). Real time (two real servers); every wait is
 * an Awaitility condition. The bounds asserted here are loose (the machine is shared): the benchmark measures the
 * distributions.
 */
class ReadyEngineTests {

    /** What the tests allow from a fault to {@code /readyz} 503: five seconds is the goal, the rest is the machine. */
    static final Duration LOOSE_BOUND = Duration.ofSeconds(12);

    @TempDir
    static Path workDir;

    static RunningSimulator engine;
    static ConfigurableApplicationContext readygate;
    static WebTestClient client;
    static final List<Change> changes = new CopyOnWriteArrayList<>();

    /** One readiness change, as readygate published it. */
    record Change(Instant at, boolean serving, @Nullable String reason) {}

    @BeforeAll
    static void start() {
        engine = RunningSimulator.serving(
                workDir.resolve("engine"),
                "preload.enabled=false",
                "timing.decode-per-token=2ms",
                "auto-restart-delay=300ms");
        readygate = readygate(engine, workDir.resolve("state"), changes);
        client = ReadygateClients.client(readygate);
    }

    static ConfigurableApplicationContext readygate(RunningSimulator engine, Path state, List<Change> sink) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.state-dir=" + state,
                        "--readygate.probe.representative.prompt-tokens=200",
                        "--readygate.probe.representative.output-tokens=8",
                        // A heavy probe that began during a stall waits out this before the recovery's: keep it short.
                        "--readygate.probe.heavy-timeout=5s",
                        // The tests restart the engine after swapped weights: not a restart loop to hold.
                        "--readygate.restart.loop-hold=0s");
        context.addApplicationListener((ApplicationListener<PayloadApplicationEvent<EngineStateChanged>>) event -> {
            EngineState now = event.getPayload().current();
            sink.add(new Change(
                    now.since(),
                    now.acceptsTraffic(),
                    now.reason() == null ? null : now.reason().value()));
        });
        return context;
    }

    @AfterAll
    static void stop() {
        if (readygate != null) {
            readygate.close();
        }
        engine.close();
    }

    @AfterEach
    void recover() {
        engine.clearFaults();
        awaitReady(client);
    }

    static void awaitReady(WebTestClient client) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> ReadygateClients.status(client)
                        .path("state")
                        .asString("")
                        .equals("ready"));
    }

    /** The first change to not serving at or after {@code from}, or null. */
    static @Nullable Change outAfter(Instant from) {
        return outAfter(changes, from);
    }

    static @Nullable Change outAfter(List<Change> changes, Instant from) {
        return changes.stream()
                .filter(change -> !change.at().isBefore(from) && !change.serving())
                .findFirst()
                .orElse(null);
    }

    /** Turns a fault on and returns the first change to not serving after it. */
    static Change injectAndAwaitOut(String fault, boolean everywhere) {
        engine.fault(fault, everywhere);
        Instant since = java.util.Objects.requireNonNull(engine.faultSince(fault));
        await().atMost(Duration.ofSeconds(30)).until(() -> outAfter(since) != null);
        Change out = java.util.Objects.requireNonNull(outAfter(since));
        assertThat(Duration.between(since, out.at()))
                .as("%s seen %s after it began", fault, Duration.between(since, out.at()))
                .isLessThanOrEqualTo(LOOSE_BOUND);
        return out;
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "generation-fails, generation_failed",
        "error-5xx, generation_failed",
        "malformed-json, generation_failed",
        "truncated-sse, generation_failed",
        "reset, generation_failed",
        "hang, generation_timed_out",
        "stall-stream, generation_stalled",
    })
    void aFaultOnAReadyIdleEngineIsSeenByTheLightChecksWithItsOwnReason(String fault, String reason) {
        awaitReady(client);
        Change out = injectAndAwaitOut(fault, false);
        assertThat(out.reason()).isEqualTo(reason);
        JsonNode generation = ReadygateClients.status(client).at("/probes/generation/lastFailure");
        assertThat(generation.path("reason").asString()).isIn(reason, "timed_out", "stalled");
    }

    @Test
    void weightsSwappedOnAReadyIdleEngineAreACanaryMismatchWithinSeconds() {
        awaitReady(client);
        Change out = injectAndAwaitOut("wrong-weights", false);
        assertThat(out.reason()).isEqualTo("canary_mismatch");
        engine.clearFaults();
        engine.restartAndAwait(StartupPath.COLD);
    }

    /** Steady traffic: {@code workers} clients, each sending completions one after the other. */
    static Disposable traffic(int workers, AtomicInteger succeeded, AtomicBoolean stop) {
        return traffic(workers, Duration.ofSeconds(20), succeeded, stop);
    }

    /** The same, each client giving up on a request after {@code patience} and sending the next. */
    static Disposable traffic(int workers, Duration patience, AtomicInteger succeeded, AtomicBoolean stop) {
        WebClient web = WebClient.create(engine.baseUrl());
        return Flux.range(0, workers)
                .flatMap(
                        worker -> Mono.defer(() -> web.post()
                                        .uri("/v1/completions")
                                        .bodyValue(Map.of(
                                                "model",
                                                "Qwen/Qwen3-0.6B",
                                                "prompt",
                                                " the".repeat(60) + worker,
                                                "max_tokens",
                                                100,
                                                "ignore_eos",
                                                true))
                                        .retrieve()
                                        .toBodilessEntity()
                                        .timeout(patience)
                                        .doOnNext(ok -> succeeded.incrementAndGet())
                                        .then()
                                        .onErrorResume(error -> Mono.delay(Duration.ofMillis(20))
                                                .then()))
                                .repeat(() -> !stop.get()),
                        workers)
                .subscribe();
    }

    @ParameterizedTest(name = "{0} under traffic -> {1}")
    @CsvSource({
        "generation-fails, generation_failed",
        "stall-stream, generation_stalled",
        "wrong-weights, canary_mismatch",
    })
    void aFaultUnderSteadyTrafficIsSeenWithinSeconds(String fault, String reason) {
        awaitReady(client);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger succeeded = new AtomicInteger();
        Disposable load = traffic(24, succeeded, stop);
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> succeeded.get() > 50);
            Change out = injectAndAwaitOut(fault, false);
            assertThat(out.reason()).isEqualTo(reason);
        } finally {
            stop.set(true);
            load.dispose();
        }
        if (fault.equals("wrong-weights")) {
            engine.clearFaults();
            engine.restartAndAwait(StartupPath.COLD);
        }
    }

    @Test
    void streamsThatStallWhileNewRequestsKeepComingAreSeenWithinSeconds() {
        // Clients that give up after a second and send the next request: the engine admits and prefills new requests
        // all
        // along, and each gets its first tokens before it stalls, so vLLM's token counters keep rising.
        awaitReady(client);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger succeeded = new AtomicInteger();
        Disposable load = traffic(24, Duration.ofSeconds(1), succeeded, stop);
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> succeeded.get() > 50);
            Change out = injectAndAwaitOut("stall-stream", false);
            assertThat(out.reason()).isEqualTo("generation_stalled");
            JsonNode generation = ReadygateClients.status(client).at("/probes/generation/lastFailure");
            // Judged on the running requests' progress, not the new ones': either they did not advance, or they did and
            // the check's own stream was left out of the batch (how many new requests came in meanwhile decides).
            assertThat(generation.path("detail").asString())
                    .containsPattern("no progress of them|advanced its other requests")
                    .contains("requests running before the probe");
        } finally {
            stop.set(true);
            load.dispose();
        }
    }

    @Test
    void steadyTrafficNeverMakesTheCanaryMismatchOrTheEngineFlap() {
        awaitReady(client);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger succeeded = new AtomicInteger();
        Disposable load = traffic(24, succeeded, stop);
        Instant from = Instant.now();
        try {
            // Long enough for several canaries under load (one every 4 s), with the simulator's batch variance.
            await().during(Duration.ofSeconds(16))
                    .atMost(Duration.ofSeconds(20))
                    .until(() -> outAfter(from) == null);
        } finally {
            stop.set(true);
            load.dispose();
        }
        assertThat(outAfter(from)).isNull();
        assertThat(succeeded.get()).isPositive();
        JsonNode canary = ReadygateClients.status(client).at("/probes/canary/last");
        assertThat(canary.path("outcome").asString()).isEqualTo("passed");
    }
}
