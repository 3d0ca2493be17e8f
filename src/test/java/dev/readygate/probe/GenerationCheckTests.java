package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;

/** The light generation check: what it sends, how long it waits, and what each answer or failure makes of it. */
class GenerationCheckTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");
    /** Two tokens, a 750 ms floor; heavy-timeout (the longest it waits) 30 s. */
    static final ReadygateProperties.Generation CONFIG =
            new ReadygateProperties.Generation(true, Duration.ofSeconds(2), Duration.ofMillis(750), 2, 0);

    static final Duration LONGEST = Duration.ofSeconds(30);
    static final ModelCard CARD = new ModelCard("m", "root", 4096);

    final Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
    final ScriptedEngine engine = new ScriptedEngine();
    final EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 3), T0, change -> {});
    final EngineFactsHolder facts = new EngineFactsHolder(machine);
    final GenerationCheck check = new GenerationCheck(CONFIG, engine, facts, new SplittableRandom(3), clock, LONGEST);
    final List<CompletionRequest> sent = new ArrayList<>();

    @BeforeEach
    void engineStarted() {
        machine.apply(new Observation.HealthOk(T0));
    }

    /** The engine answers correctly, then as {@code change} makes of it. */
    void answers(UnaryOperator<StreamedCompletion> change) {
        engine.completions = request -> {
            sent.add(request);
            return ScriptedEngine.correct(request)
                    .map(call ->
                            ScriptedEngine.ok(change.apply(((EngineCall.Success<StreamedCompletion>) call).value())));
        };
    }

    ProbeReport run(@Nullable EngineMetricsSample before) {
        return run(before, null);
    }

    ProbeReport run(@Nullable EngineMetricsSample before, @Nullable Duration wait) {
        ProbeReport report = check.run(CARD, before, wait).block(Duration.ofSeconds(5));
        assertThat(report).isNotNull();
        assertThat(report.kind()).isEqualTo(ProbeKind.GENERATION);
        return report;
    }

    static EngineMetricsSample sample(double running, double waiting) {
        return new EngineMetricsSample(1000.0, running, waiting, 100.0, 50.0, 10.0, Map.of());
    }

    static StreamedCompletion with(
            StreamedCompletion a, @Nullable Integer completionTokens, @Nullable String errorEvent) {
        return new StreamedCompletion(
                a.textChunks(),
                a.text(),
                a.tokenIds(),
                a.tokenLogprobs(),
                a.finishReason(),
                a.promptTokens(),
                completionTokens,
                errorEvent,
                a.timeToFirstToken(),
                a.maxInterTokenLatency(),
                a.meanInterTokenLatency(),
                a.total());
    }

    @Test
    void runSendsAFreshShortPromptForExactlyTheTokensAsked() {
        answers(a -> a);

        run(null);
        run(null);

        assertThat(sent).hasSize(2);
        assertThat(sent).allSatisfy(request -> {
            assertThat(request.model()).isEqualTo("m");
            assertThat(request.maxTokens()).isEqualTo(2);
            assertThat(request.minTokens()).isEqualTo(2);
            assertThat(request.ignoreEos()).isTrue();
            assertThat(request.temperature()).isZero();
            assertThat(request.promptText()).matches("\\d{4} \\S+ \\S+ \\S+");
        });
        assertThat(sent.get(0).promptText()).isNotEqualTo(sent.get(1).promptText());
    }

    // What each answer makes of it.

    static Stream<Arguments> answers() {
        String longError = "x".repeat(200);
        return Stream.of(
                Arguments.of(
                        "the tokens asked",
                        (UnaryOperator<StreamedCompletion>) a -> a,
                        ProbeReport.Outcome.PASSED,
                        null,
                        "2 tokens generated, TTFT 20 ms, total 40 ms"),
                Arguments.of(
                        "an error event",
                        (UnaryOperator<StreamedCompletion>) a -> with(a, 2, "boom"),
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_FAILED,
                        "the stream carried an error event: boom"),
                Arguments.of(
                        "a long error event, cut",
                        (UnaryOperator<StreamedCompletion>) a -> with(a, 2, longError),
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_FAILED,
                        "the stream carried an error event: " + "x".repeat(160) + "..."),
                Arguments.of(
                        "no usage chunk",
                        (UnaryOperator<StreamedCompletion>) a -> with(a, null, null),
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_FAILED,
                        "the stream had no usage chunk (stream_options.include_usage)"),
                Arguments.of(
                        "fewer tokens",
                        (UnaryOperator<StreamedCompletion>) a -> with(a, 1, null),
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_FAILED,
                        "asked for 2 tokens, the engine generated 1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answers")
    void anAnswerPassesOnlyWellFormedWithTheTokensAsked(
            String name,
            UnaryOperator<StreamedCompletion> answer,
            ProbeReport.Outcome outcome,
            @Nullable Reason reason,
            String detail) {
        answers(answer);

        ProbeReport report = run(sample(0, 0));

        assertThat(report.outcome()).isEqualTo(outcome);
        assertThat(report.reason()).isEqualTo(reason);
        assertThat(report.detail()).startsWith(detail);
    }

    // What each failure makes of it (no /metrics: a timeout is the check's own).

    static Stream<Arguments> failures() {
        return Stream.of(
                Arguments.of(EngineFailure.Kind.REFUSED, Reason.ENGINE_DOWN, "x"),
                Arguments.of(EngineFailure.Kind.OVERLONG_STREAM, Reason.OVERLONG_STREAM, "x"),
                Arguments.of(EngineFailure.Kind.TIMED_OUT, Reason.GENERATION_TIMED_OUT, "x"),
                Arguments.of(EngineFailure.Kind.STALLED, Reason.GENERATION_STALLED, "x"),
                Arguments.of(EngineFailure.Kind.RESET, Reason.GENERATION_FAILED, "connection reset: x"),
                Arguments.of(EngineFailure.Kind.MALFORMED_BODY, Reason.GENERATION_FAILED, "malformed answer: x"),
                Arguments.of(
                        EngineFailure.Kind.TRUNCATED_STREAM,
                        Reason.GENERATION_FAILED,
                        "the stream ended before [DONE]: x"),
                Arguments.of(
                        EngineFailure.Kind.BODY_TOO_LARGE, Reason.GENERATION_FAILED, "the answer was too large: x"),
                Arguments.of(EngineFailure.Kind.HTTP_STATUS, Reason.GENERATION_FAILED, "x"),
                Arguments.of(EngineFailure.Kind.IO_ERROR, Reason.GENERATION_FAILED, "x"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void aFailureIsTheGenerationChecksOwnReason(EngineFailure.Kind kind, Reason reason, String detail) {
        engine.completions = request -> Mono.just(ScriptedEngine.failure(kind, "x"));

        ProbeReport report = run(null);

        assertThat(report.outcome()).isEqualTo(ProbeReport.Outcome.FAILED);
        assertThat(report.reason()).isEqualTo(reason);
        assertThat(report.detail()).isEqualTo(detail);
    }

    @Test
    void aTimeoutWhileTheEngineProgressesOnOtherWorkIsBusy() {
        EngineMetricsSample before = new EngineMetricsSample(
                1000.0, 2.0, 0.0, 100.0, 50.0, 10.0, Map.of(), java.util.Set.of("vllm:"), null, null);
        engine.metricsAnswer = ScriptedEngine.ok(new EngineMetricsSample(
                1000.0, 2.0, 0.0, 150.0, 50.0, 10.0, Map.of(), java.util.Set.of("vllm:"), null, null));
        engine.completions = request -> Mono.just(ScriptedEngine.failure(EngineFailure.Kind.TIMED_OUT, "x"));

        assertThat(run(before).outcome()).isEqualTo(ProbeReport.Outcome.BUSY);
    }

    // How long it waits.

    static Stream<Arguments> waits() {
        return Stream.of(
                Arguments.of("no /metrics: heavy-timeout", null, null, 30_000, "heavy-timeout: no /metrics"),
                Arguments.of(
                        "an idle engine, no speed measured: generation.timeout",
                        sample(0, 0),
                        null,
                        750,
                        "generation.timeout"),
                Arguments.of("two requests waiting: three times", sample(4, 2), null, 2250, "generation.timeout"),
                Arguments.of(
                        "a queue past heavy-timeout: heavy-timeout",
                        sample(4, 100),
                        null,
                        30_000,
                        "generation.timeout"),
                Arguments.of(
                        "waited for (a blind engine)",
                        null,
                        Duration.ofSeconds(90),
                        90_000,
                        "waited for up to 90000 ms (neither /metrics nor /slots)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("waits")
    void itWaitsItsBudgetOrWhatItIsToldTo(
            String name, @Nullable EngineMetricsSample before, @Nullable Duration wait, long millis, String said) {
        answers(a -> a);

        ProbeReport report = run(before, wait);

        assertThat(engine.lastTimeout).isEqualTo(Duration.ofMillis(millis));
        assertThat(report.detail()).contains(said);
        if (wait == null) {
            assertThat(check.budget(before)).isEqualTo(Duration.ofMillis(millis));
        }
    }

    // What it learns.

    static Stream<Arguments> speeds() {
        return Stream.of(
                Arguments.of("a pass on an idle engine", sample(0, 0), true),
                Arguments.of("a pass on a busy engine", sample(1, 0), false),
                Arguments.of("a pass without /metrics", null, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("speeds")
    void aPassOnAnIdleEngineIsItsSpeedNow(String name, @Nullable EngineMetricsSample before, boolean learned) {
        answers(a -> a);

        run(before);

        EngineFacts.Speed speed = facts.current().speed();
        if (learned) {
            assertThat(speed).isNotNull();
            assertThat(speed.promptTokens()).isEqualTo(5);
            assertThat(speed.timeToFirstToken()).isEqualTo(Duration.ofMillis(20));
            assertThat(speed.interTokenLatency()).isEqualTo(Duration.ofMillis(4));
        } else {
            assertThat(speed).isNull();
        }
    }
}
