package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.config.TokenBudget;
import dev.readygate.engine.CompletionRequest;
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
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class RepresentativeProbeTests {

    final Clock clock = Clock.fixed(Instant.parse("2026-11-30T12:00:00Z"), ZoneOffset.UTC);
    final ScriptedEngine engine = new ScriptedEngine();
    final ModelCard card = new ModelCard("m", "root", 4096);
    final List<CompletionRequest> sent = new ArrayList<>();

    /** The facts of an engine start in progress: what the probe learns about the engine goes there. */
    static EngineFactsHolder engineStarted(Clock clock) {
        EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 3), clock.instant(), change -> {});
        machine.apply(new Observation.HealthOk(clock.instant()));
        return new EngineFactsHolder(machine);
    }

    RepresentativeProbe probe(TokenBudget prompt, @Nullable Duration maxTtft) {
        return new RepresentativeProbe(
                new ReadygateProperties.Representative(true, prompt, 16, 0, maxTtft, null),
                engine,
                engineStarted(clock),
                new SplittableRandom(7),
                clock,
                Duration.ofSeconds(5));
    }

    ProbeReport run(RepresentativeProbe probe, UnaryOperator<StreamedCompletion> answer) {
        engine.completions = request -> {
            sent.add(request);
            return ScriptedEngine.correct(request)
                    .map(call -> ScriptedEngine.ok(answer.apply(
                            ((dev.readygate.engine.EngineCall.Success<StreamedCompletion>) call).value())));
        };
        return probe.run(card, null).block(Duration.ofSeconds(5));
    }

    static StreamedCompletion with(
            StreamedCompletion a,
            @Nullable Integer prompt,
            @Nullable Integer completion,
            @Nullable String finish,
            @Nullable String error,
            Duration ttft) {
        return new StreamedCompletion(
                a.textChunks(),
                a.text(),
                a.tokenIds(),
                a.tokenLogprobs(),
                finish,
                prompt,
                completion,
                error,
                ttft,
                a.maxInterTokenLatency(),
                a.meanInterTokenLatency(),
                a.total());
    }

    @Test
    void runWhenTheEngineAnswersCorrectlyPassesWithMeasurements() {
        ProbeReport report = run(probe(new TokenBudget(300, null), null), UnaryOperator.identity());
        assertThat(report.passed()).isTrue();
        assertThat(report.measurement().plannedPromptTokens()).isEqualTo(300);
        assertThat(report.measurement().promptTokens()).isEqualTo(300);
        assertThat(report.measurement().completionTokens()).isEqualTo(16);
        CompletionRequest request = sent.getFirst();
        assertThat(request.promptTokenIds()).hasSize(300);
        assertThat(request.minTokens()).isEqualTo(16);
        assertThat(request.maxTokens()).isEqualTo(16);
        assertThat(request.ignoreEos()).isTrue();
        assertThat(request.toString()).doesNotContain("1000");
    }

    @Test
    void promptsDifferBetweenProbes() {
        RepresentativeProbe probe = probe(new TokenBudget(300, null), null);
        run(probe, UnaryOperator.identity());
        run(probe, UnaryOperator.identity());
        assertThat(sent).hasSize(2);
    }

    @Test
    void runWhenTheEngineCountsFewerPromptTokensFailsAsTruncated() {
        ProbeReport report = run(
                probe(new TokenBudget(300, null), null),
                a -> with(a, 256, a.completionTokens(), "length", null, a.timeToFirstToken()));
        assertThat(report.reason()).isEqualTo(Reason.PROMPT_TOKENS_MISMATCH);
        assertThat(report.detail())
                .startsWith(
                        "sent 300 prompt tokens (planned 300), the engine counted 256: it truncated the prompt; exact:");
        assertThat(report.measurement().promptTokens()).isEqualTo(256);
    }

    @Test
    void runWhenOutputIsShortOrEndsOtherwiseFails() {
        assertThat(run(
                                probe(new TokenBudget(300, null), null),
                                a -> with(a, 300, 9, "length", null, a.timeToFirstToken()))
                        .reason())
                .isEqualTo(Reason.COMPLETION_TOKENS_MISMATCH);
        assertThat(run(
                                probe(new TokenBudget(300, null), null),
                                a -> with(a, 300, 16, "stop", null, a.timeToFirstToken()))
                        .reason())
                .isEqualTo(Reason.UNEXPECTED_FINISH_REASON);
        // Ended by the engine (vLLM's sleep and pause abort what is in flight): its own reason, before the counts.
        ProbeReport aborted =
                run(probe(new TokenBudget(300, null), null), a -> with(a, 300, 5, "abort", null, a.timeToFirstToken()));
        assertThat(aborted.reason()).isEqualTo(Reason.ENGINE_ABORTED);
        assertThat(aborted.latched()).isFalse();
    }

    @Test
    void runWhenTheStreamCarriesAnErrorEventFails() {
        ProbeReport report = run(
                probe(new TokenBudget(300, null), null),
                a -> with(a, 300, 16, "length", "EngineCore encountered an issue", a.timeToFirstToken()));
        assertThat(report.reason()).isEqualTo(Reason.ERROR_EVENT);
    }

    @Test
    void runWhenThereIsNoUsageChunkFailsAsMalformed() {
        ProbeReport report = run(
                probe(new TokenBudget(300, null), null),
                a -> with(a, null, null, "length", null, a.timeToFirstToken()));
        assertThat(report.reason()).isEqualTo(Reason.MALFORMED_RESPONSE);
    }

    @Test
    void runWhenCorrectButSlowerThanTheObjectiveFailsAsSlow() {
        ProbeReport report = run(
                probe(new TokenBudget(300, null), Duration.ofMillis(100)),
                a -> with(a, 300, 16, "length", null, Duration.ofMillis(450)));
        assertThat(report.reason()).isEqualTo(Reason.SLOW);
        assertThat(report.detail()).isEqualTo("time to first token 450 ms over the objective 100 ms");
    }

    @Test
    void runWhenTheProbeCannotFitTheContextIsALatchedReasonNotACrash() {
        ProbeReport report =
                probe(new TokenBudget(4090, null), null).run(card, null).block();
        assertThat(report.reason()).isEqualTo(Reason.PROBE_EXCEEDS_CONTEXT);
        assertThat(report.latched()).isTrue();
        assertThat(report.detail()).isEqualTo("4090 prompt + 16 output tokens exceed the engine's max_model_len 4096");
        assertThat(engine.completionCalls.get()).isZero();
    }

    @Test
    void fractionOfTheContextIsResolvedFromTheModelCard() {
        ProbeReport report = run(probe(new TokenBudget(null, 0.25), null), UnaryOperator.identity());
        assertThat(report.measurement().plannedPromptTokens()).isEqualTo(1024);
        ProbeReport unknown = probe(new TokenBudget(null, 0.25), null)
                .run(new ModelCard("m", null, null), null)
                .block();
        assertThat(unknown.reason()).isEqualTo(Reason.PROBE_EXCEEDS_CONTEXT);
    }

    /** A probe against a server without /tokenize whose prompt token count is {@code count(words)}. */
    record Plain(RepresentativeProbe probe, EngineFactsHolder facts, List<String> prompts) {

        EngineCapabilities capabilities() {
            return facts.current().capabilities();
        }
    }

    Plain withoutTokenize(int tolerance, java.util.function.IntUnaryOperator count) {
        ScriptedEngine plain = new ScriptedEngine();
        plain.tokenizeSupported = false;
        EngineFactsHolder facts = engineStarted(clock);
        RepresentativeProbe probe = new RepresentativeProbe(
                new ReadygateProperties.Representative(true, new TokenBudget(300, null), 16, tolerance, null, null),
                plain,
                facts,
                new SplittableRandom(7),
                clock,
                Duration.ofSeconds(5));
        List<String> prompts = new ArrayList<>();
        plain.completions = request -> {
            prompts.add(request.promptText());
            int tokens = count.applyAsInt(request.promptText().split(" ").length);
            return ScriptedEngine.correct(request)
                    .map(call -> ScriptedEngine.ok(with(
                            ((dev.readygate.engine.EngineCall.Success<StreamedCompletion>) call).value(),
                            tokens,
                            request.maxTokens(),
                            "length",
                            null,
                            Duration.ofMillis(5))));
        };
        return new Plain(probe, facts, prompts);
    }

    @Test
    void withoutTokenizeTheCountIsProvenByCalibratingAFreshSentenceEveryProbe() {
        // A SentencePiece-like engine: one token a word, and BOS.
        Plain plain = withoutTokenize(0, words -> words + 1);

        ProbeReport first = plain.probe().run(card, null).block();
        assertThat(first.passed()).as(first.detail()).isTrue();
        assertThat(plain.capabilities().tokenize()).isFalse();
        // 1, 2 and 4 copies of a 12-word sentence, then the prompt: 25 copies are 1 + 25 * 12 = 301 tokens.
        assertThat(plain.prompts()).hasSize(4);
        assertThat(first.measurement().plannedPromptTokens()).isEqualTo(301);
        assertThat(first.measurement().promptTokens()).isEqualTo(301);
        assertThat(plain.capabilities().promptTokens()).startsWith("proven by calibration: 1, 2 and 4 copies");
        assertThat(first.detail()).contains("prompt count exact");

        ProbeReport second = plain.probe().run(card, null).block();
        assertThat(second.passed()).isTrue();
        assertThat(plain.prompts().get(7)).isNotEqualTo(plain.prompts().get(3));
    }

    @Test
    void withoutTokenizeATruncatedPromptIsNeverAPass() {
        // llama-server with -c 256 and context shift: it keeps what fits and reports that (issue 15: 512 -> 186).
        Plain plain = withoutTokenize(0, words -> Math.min(words + 1, 186));

        ProbeReport report = plain.probe().run(card, null).block();

        assertThat(report.passed()).isFalse();
        assertThat(report.reason()).isEqualTo(Reason.PROMPT_TOKENS_MISMATCH);
        assertThat(report.detail())
                .startsWith("sent 301 prompt tokens (planned 300), the engine counted 186: it"
                        + " truncated the prompt; proven by calibration");
    }

    @Test
    void withoutTokenizeAnEngineThatTruncatesEvenTheCalibrationFailsBeforeTheProbe() {
        // A context of 40 tokens: 4 copies of a 12-word sentence (49 tokens) already lose some.
        Plain plain = withoutTokenize(0, words -> Math.min(words + 1, 40));

        ProbeReport report = plain.probe().run(card, null).block();

        assertThat(report.reason()).isEqualTo(Reason.PROMPT_TOKENS_MISMATCH);
        assertThat(report.detail()).contains("counted 13, 25 and 40").contains("truncates prompts");
        assertThat(plain.prompts()).hasSize(3);
    }

    @Test
    void withoutTokenizeAFirstCopyWithoutItsLeadingSpaceStillAddsUp() {
        // Byte-level BPE without BOS: the first word has no leading space and costs one token less.
        Plain plain = withoutTokenize(0, words -> 2 * words - 1);

        ProbeReport report = plain.probe().run(card, null).block();

        assertThat(report.passed()).as(report.detail()).isTrue();
        assertThat(report.measurement().promptTokens())
                .isEqualTo(report.measurement().plannedPromptTokens());
    }

    @Test
    void withoutTokenizeCountsThatDoNotAddUpAreUnprovenUnlessAToleranceAcceptsThem() {
        // 1.3 tokens a word, rounded: 1, 2 and 4 copies of 12 words count 16, 31 and 62, which do not add up.
        java.util.function.IntUnaryOperator bpe = words -> (int) Math.round(words * 1.3);

        ProbeReport strict = withoutTokenize(0, bpe).probe().run(card, null).block();
        assertThat(strict.reason()).isEqualTo(Reason.PROMPT_TOKENS_UNPROVEN);
        assertThat(strict.detail()).contains("16, 31 and 62").contains("prompt-token-tolerance");

        ProbeReport tolerant = withoutTokenize(20, bpe).probe().run(card, null).block();
        assertThat(tolerant.passed()).as(tolerant.detail()).isTrue();
        assertThat(tolerant.detail()).contains("prompt count approximate");
    }

    @Test
    void timeoutWithoutMetricsIsATimeout() {
        engine.completions = request -> Mono.just(ScriptedEngine.failure(EngineFailure.Kind.TIMED_OUT, "30s"));
        ProbeReport report = probe(new TokenBudget(300, null), null)
                .run(card, new EngineMetricsSample(1.0, 0.0, 0.0, 10.0, 0.0, 0.0, Map.of()))
                .block();
        assertThat(report.reason()).isEqualTo(Reason.TIMED_OUT);
    }

    @Test
    void llamaCppContextErrorEventIsProbeExceedsContextWithTheEnginesWords() {
        // llama-server --no-context-shift: `error: {...}` and [DONE], no usage (issue 15: "no usage chunk" before).
        ProbeReport report = run(
                probe(new TokenBudget(300, null), null),
                a -> with(
                        a,
                        null,
                        null,
                        null,
                        "the request exceeds the available context size. try increasing the context size or enable"
                                + " context shift",
                        a.timeToFirstToken()));

        assertThat(report.reason()).isEqualTo(Reason.PROBE_EXCEEDS_CONTEXT);
        assertThat(report.latched()).isTrue();
        assertThat(report.detail()).startsWith("the engine's error event: the request exceeds the available context");
    }

    @Test
    void anOtherErrorEventKeepsTheEnginesMessage() {
        ProbeReport report = run(
                probe(new TokenBudget(300, null), null),
                a -> with(
                        a,
                        300,
                        16,
                        "length",
                        "CUDA error: an illegal memory access was encountered",
                        a.timeToFirstToken()));

        assertThat(report.reason()).isEqualTo(Reason.ERROR_EVENT);
        assertThat(report.detail())
                .isEqualTo("the stream carried an error event: CUDA error: an illegal memory access was encountered");
    }

    @Test
    void vllmContextLengthErrorIsProbeExceedsContext() {
        engine.completions = request -> Mono.just(new dev.readygate.engine.EngineCall.Failure<>(
                EngineFailure.status(400, "This model's maximum context length is 4096 tokens. However, ..."),
                Duration.ZERO));
        ProbeReport report =
                probe(new TokenBudget(300, null), null).run(card, null).block();
        assertThat(report.reason()).isEqualTo(Reason.PROBE_EXCEEDS_CONTEXT);
        assertThat(report.latched()).isTrue();
    }

    @Test
    void aPassedProbeTeachesTheStartItsSpeedAndAFailedOneTeachesNothing() {
        EngineFactsHolder facts = engineStarted(clock);
        RepresentativeProbe probe = new RepresentativeProbe(
                new ReadygateProperties.Representative(true, new TokenBudget(64, null), 16, 0, null, null),
                engine,
                facts,
                new SplittableRandom(7),
                clock,
                Duration.ofSeconds(5));

        ProbeReport wrong = run(probe, a -> with(a, 64, 15, "length", null, Duration.ofMillis(900)));
        assertThat(wrong.reason()).isEqualTo(Reason.COMPLETION_TOKENS_MISMATCH);
        assertThat(facts.current().speed()).isNull();

        ProbeReport passed = run(probe, a -> with(a, 64, 16, "length", null, Duration.ofMillis(900)));
        assertThat(passed.passed()).as(passed.detail()).isTrue();
        // ScriptedEngine's mean inter-token latency: 4 ms.
        assertThat(facts.current().speed())
                .isEqualTo(new EngineFacts.Speed(64, Duration.ofMillis(900), Duration.ofMillis(4)));
    }
}
