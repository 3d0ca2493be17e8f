package dev.readygate.probe;

import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.ServerInfo;
import dev.readygate.engine.SlotsSample;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.engine.TokenCount;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * An {@link EngineClient} whose answers a test sets, for schedule tests in virtual time. By default a healthy vLLM
 * engine that answers every probe correctly and instantly.
 */
final class ScriptedEngine implements EngineClient {

    volatile EngineCall<Void> health = ok(null);
    volatile EngineCall<ModelCard> model = ok(new ModelCard("m", "root", 4096, "vllm"));
    volatile double processStart = 1000.0;
    volatile double running;
    volatile double generated;
    volatile double successes;
    volatile double waiting;
    /** Tokens the engine's other work adds to {@code generated} at every scrape: progress of real traffic. */
    volatile double progressPerScrape;
    /** When set, {@code /metrics} and {@code /v1/models} each answer {@link #slowBy} late, on this scheduler. */
    volatile @Nullable Scheduler slowOn;

    volatile Duration slowBy = Duration.ZERO;

    /** When set, every completion hangs: it times out after its timeout, on this scheduler. */
    volatile @Nullable Scheduler hangOn;

    /** vLLM's {@code vllm:engine_sleep_state} as a sleep level (0 awake), null without the series. */
    volatile @Nullable Integer sleepLevel;

    volatile @Nullable Duration lastTimeout;
    volatile boolean metricsSupported = true;
    volatile boolean tokenizeSupported = true;
    volatile boolean processStartKnown = true;
    /** What {@code /metrics} answers instead of the scripted sample, when set. */
    volatile EngineCall<EngineMetricsSample> metricsAnswer;
    /** What llama-server's {@code /slots} answers; null: not offered ({@code NOT_SUPPORTED}). */
    volatile @Nullable SlotsSample slotsAnswer;

    final AtomicInteger slotsCalls = new AtomicInteger();

    volatile String version = "0.31.0";
    volatile Function<CompletionRequest, Mono<EngineCall<StreamedCompletion>>> completions = ScriptedEngine::correct;
    final AtomicInteger healthCalls = new AtomicInteger();
    /** What {@code /props} (or the like) answers; null: the engine has none. */
    volatile @Nullable ServerInfo serverInfo;
    /** The held connection's close: {@link #closeHeldConnection()} ends it, and the next wait is on a new one. */
    private volatile Sinks.Empty<Void> held = Sinks.empty();
    /** How many times readygate waited on the held connection. */
    final AtomicInteger heldConnectionWaits = new AtomicInteger();

    final AtomicInteger completionCalls = new AtomicInteger();
    final AtomicInteger metricsCalls = new AtomicInteger();

    static <T> EngineCall<T> ok(T value) {
        return new EngineCall.Success<>(value, Duration.ofMillis(1));
    }

    static <T> EngineCall<T> failure(EngineFailure.Kind kind, String detail) {
        return new EngineCall.Failure<>(EngineFailure.of(kind, detail), Duration.ofMillis(1));
    }

    static <T> EngineCall<T> status(int status) {
        return new EngineCall.Failure<>(EngineFailure.status(status, "HTTP " + status), Duration.ofMillis(1));
    }

    /**
     * A correct answer: exactly the prompt sent (a text prompt counts one token a word, and one for BOS), exactly the
     * tokens asked, finish_reason length.
     */
    static Mono<EngineCall<StreamedCompletion>> correct(CompletionRequest request) {
        int prompt = request.promptTokenIds() != null
                ? request.promptTokenIds().size()
                : request.promptText().split(" ").length + 1;
        List<Integer> ids = IntStream.range(0, request.maxTokens())
                .map(i -> 300 + i)
                .boxed()
                .toList();
        return Mono.just(ok(new StreamedCompletion(
                request.maxTokens(),
                " ok".repeat(request.maxTokens()),
                ids,
                ids.stream().map(i -> -0.5).toList(),
                "length",
                prompt,
                request.maxTokens(),
                null,
                Duration.ofMillis(20),
                Duration.ofMillis(5),
                Duration.ofMillis(4),
                Duration.ofMillis(40))));
    }

    @Override
    public Mono<EngineCall<Void>> health() {
        healthCalls.incrementAndGet();
        return Mono.fromSupplier(() -> health);
    }

    @Override
    public Mono<EngineCall<ModelCard>> model() {
        return slow(Mono.fromSupplier(() -> model));
    }

    private <T> Mono<T> slow(Mono<T> answer) {
        Scheduler on = slowOn;
        return on == null ? answer : answer.delayElement(slowBy, on);
    }

    @Override
    public Mono<EngineCall<String>> version() {
        return Mono.fromSupplier(() -> ok(version));
    }

    @Override
    public Mono<EngineCall<String>> detokenize(EngineDialect dialect, String model, List<Integer> tokens) {
        return Mono.just(ok("The quick brown fox jumps over the lazy dog."));
    }

    @Override
    public Mono<EngineCall<ServerInfo>> serverInfo(EngineDialect dialect) {
        ServerInfo info = serverInfo;
        return Mono.just(
                info != null
                        ? ok(info)
                        : new EngineCall.Failure<>(
                                new EngineFailure(EngineFailure.Kind.NOT_SUPPORTED, null, "none"),
                                Duration.ofMillis(1)));
    }

    @Override
    public Mono<EngineCall<TokenCount>> tokenize(EngineDialect dialect, String model, String prompt) {
        if (!tokenizeSupported) {
            return Mono.just(new EngineCall.Failure<>(
                    new EngineFailure(EngineFailure.Kind.NOT_SUPPORTED, 404, "404"), Duration.ofMillis(1)));
        }
        List<Integer> ids = IntStream.range(0, prompt.split(" ").length)
                .map(i -> 1000 + i)
                .boxed()
                .toList();
        return Mono.just(ok(new TokenCount(ids.size(), 4096, ids)));
    }

    @Override
    public Mono<EngineCall<SlotsSample>> slots() {
        slotsCalls.incrementAndGet();
        SlotsSample answer = slotsAnswer;
        return Mono.just(
                answer == null
                        ? new EngineCall.Failure<>(
                                new EngineFailure(EngineFailure.Kind.NOT_SUPPORTED, 501, "501"), Duration.ofMillis(1))
                        : ok(answer));
    }

    @Override
    public Mono<EngineCall<EngineMetricsSample>> metrics() {
        return slow(Mono.defer(this::scriptedMetrics));
    }

    private Mono<EngineCall<EngineMetricsSample>> scriptedMetrics() {
        metricsCalls.incrementAndGet();
        generated += progressPerScrape;
        if (!metricsSupported) {
            return Mono.just(new EngineCall.Failure<>(
                    new EngineFailure(EngineFailure.Kind.NOT_SUPPORTED, 404, "404"), Duration.ofMillis(1)));
        }
        EngineCall<EngineMetricsSample> answer = metricsAnswer;
        if (answer != null) {
            return Mono.just(answer);
        }
        return Mono.fromSupplier(() -> ok(new EngineMetricsSample(
                processStartKnown ? processStart : null,
                running,
                waiting,
                generated,
                0.0,
                successes,
                Map.of("kv_cache_size_tokens", "65536"),
                java.util.Set.of("vllm:", "process_"),
                null,
                null,
                sleepLevel)));
    }

    @Override
    public Mono<EngineCall<StreamedCompletion>> streamCompletion(CompletionRequest request, Duration timeout) {
        completionCalls.incrementAndGet();
        lastTimeout = timeout;
        Scheduler hang = hangOn;
        if (hang != null) {
            return Mono.delay(timeout, hang)
                    .map(tick -> failure(EngineFailure.Kind.TIMED_OUT, "no event in " + timeout.toMillis() + " ms"));
        }
        return Mono.defer(() -> completions.apply(request));
    }

    @Override
    public Mono<Void> connectionClosed() {
        return Mono.defer(() -> {
            heldConnectionWaits.incrementAndGet();
            return held.asMono();
        });
    }

    /** The engine (or the kernel, for an engine that exited) closes the connection readygate holds. */
    void closeHeldConnection() {
        Sinks.Empty<Void> closing = held;
        held = Sinks.empty();
        closing.tryEmitEmpty();
    }
}
