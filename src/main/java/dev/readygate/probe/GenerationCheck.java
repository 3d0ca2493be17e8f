package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The light generation check: a streamed completion of a fresh prompt of a few words (so no cache can answer it) and
 * {@code output-tokens} tokens ({@code min_tokens} = {@code max_tokens}, {@code ignore_eos}). It passes if the stream is
 * well-formed, carries no error, ends in {@code [DONE]} and has the tokens asked; a fault that makes generation fail
 * or hang, or stalls streams, fails it within its budget. Its budget follows the engine's measured speed and grows with
 * the engine's queue ({@link GenerationBudget}), and a check that got no answer in time while the engine made progress
 * on other work is busy, not failed. A stream past the tokens asked is {@code overlong_stream} at once.
 */
final class GenerationCheck {

    /** Words in the prompt: a few tokens, far below a prefix-cache block. */
    private static final int PROMPT_WORDS = 3;

    /** A generous count of the prompt's tokens, for the cost and for telling the check's own tokens from progress. */
    private static final int PROMPT_TOKENS = 8;

    private final ReadygateProperties.Generation config;
    private final EngineClient client;
    private final RandomGenerator random;
    private final Clock clock;
    private final EngineFactsHolder facts;
    private final GenerationBudget budget;
    private final TimeoutVerdict timeouts;
    private final Completions completions;

    /**
     * @param longest the longest the check waits, however long the engine's queue ({@code heavy-timeout}), and what it
     *     waits without {@code /metrics}
     */
    GenerationCheck(
            ReadygateProperties.Generation config,
            EngineClient client,
            EngineFactsHolder facts,
            RandomGenerator random,
            Clock clock,
            Duration longest) {
        this.config = config;
        this.client = client;
        this.random = random;
        this.clock = clock;
        this.facts = facts;
        this.budget = new GenerationBudget(config.timeout(), longest);
        this.timeouts = new TimeoutVerdict(client, facts, clock);
        this.completions = new Completions(client, facts);
    }

    /** The tokens one check spends at most. */
    int tokenCost() {
        return ownTokens().total();
    }

    private EngineLoad.OwnTokens ownTokens() {
        return new EngineLoad.OwnTokens(PROMPT_TOKENS, config.outputTokens());
    }

    /** How long a light check waits for its answer ({@link GenerationBudget}). */
    Duration budget(@Nullable EngineMetricsSample before) {
        return budget(before, ownTokens());
    }

    /**
     * How long a light check of {@code tokens} (the generation check's, or the canary's in its place) waits for its
     * answer: the engine's measured speed with a margin, between {@code timeout} and {@code longest}, once more for
     * each request waiting in the engine's queue; {@code longest} without {@code /metrics} ({@link GenerationBudget}).
     */
    Duration budget(@Nullable EngineMetricsSample before, EngineLoad.OwnTokens tokens) {
        return budget.of(before, facts.current().speed(), tokens);
    }

    /** How long a check sent now would wait for its answer on an engine of {@code speed} ({@link GenerationBudget}). */
    Duration budget(@Nullable EngineMetricsSample before, EngineFacts.@Nullable Speed speed) {
        return budget.of(before, speed, ownTokens());
    }

    /**
     * Runs the check.
     *
     * @param before the engine's metrics from before (null without {@code /metrics})
     */
    Mono<ProbeReport> run(ModelCard card, @Nullable EngineMetricsSample before) {
        return run(card, before, null);
    }

    /**
     * Runs the check, waiting for its answer up to {@code wait} rather than its budget where one is given (an engine
     * where readygate cannot see a taken slot: the check is waited for, never given up at its budget).
     */
    Mono<ProbeReport> run(ModelCard card, @Nullable EngineMetricsSample before, @Nullable Duration wait) {
        // A number and a few words: a prompt no request sent before, a few tokens long.
        String prompt = random.nextInt(1000, 10_000) + " " + PromptText.of(PROMPT_WORDS, random);
        CompletionRequest request = new CompletionRequest(
                card.id(), prompt, null, config.outputTokens(), config.outputTokens(), true, 0.0, null, null, false);
        EngineFacts current = facts.current();
        EngineFacts.Speed speed = current.speed();
        Duration timeout = wait != null ? wait : budget.of(before, speed, ownTokens());
        String within = wait != null
                ? "waited for up to " + wait.toMillis() + " ms (neither /metrics nor /slots)"
                : "within a budget of " + timeout.toMillis() + " ms ("
                        + (before == null ? "heavy-timeout: no /metrics" : GenerationBudget.source(speed)) + ")";
        return completions.stream(request, timeout).flatMap(call -> switch (call) {
            case EngineCall.Success<StreamedCompletion> success ->
                Mono.fromSupplier(() -> evaluate(current.startId(), success.value(), before, within));
            case EngineCall.Failure<StreamedCompletion> failure -> failed(failure.failure(), before);
        });
    }

    private ProbeReport evaluate(
            String startId, StreamedCompletion answer, @Nullable EngineMetricsSample before, String within) {
        ProbeReport.Measurement measurement =
                ProbeReport.Measurement.of(answer.promptTokens() == null ? 0 : answer.promptTokens(), answer);
        String problem = problem(answer);
        if (problem != null) {
            return ProbeReport.failed(ProbeKind.GENERATION, clock.instant(), Reason.GENERATION_FAILED, problem)
                    .withMeasurement(measurement);
        }
        Integer promptTokens = answer.promptTokens();
        if (!startId.isEmpty() && before != null && !EngineLoad.working(before) && promptTokens != null) {
            // A correct answer of an idle engine: its speed now, which the next checks' budget follows (a machine's
            // load drifts between two representative probes).
            EngineFacts.Speed now =
                    new EngineFacts.Speed(promptTokens, answer.timeToFirstToken(), answer.meanInterTokenLatency());
            facts.learn(startId, f -> f.withSpeed(now));
        }
        return ProbeReport.passed(
                ProbeKind.GENERATION,
                clock.instant(),
                "%d tokens generated, TTFT %d ms, total %d ms, %s"
                        .formatted(
                                answer.completionTokens(),
                                answer.timeToFirstToken().toMillis(),
                                answer.total().toMillis(),
                                within),
                measurement,
                null);
    }

    private @Nullable String problem(StreamedCompletion answer) {
        if (answer.errorEvent() != null) {
            String error = answer.errorEvent();
            return "the stream carried an error event: "
                    + (error.length() > 160 ? error.substring(0, 160) + "..." : error);
        }
        if (answer.completionTokens() == null) {
            return "the stream had no usage chunk (stream_options.include_usage)";
        }
        if (answer.completionTokens() != config.outputTokens()) {
            return "asked for " + config.outputTokens() + " tokens, the engine generated " + answer.completionTokens();
        }
        return null;
    }

    private Mono<ProbeReport> failed(EngineFailure failure, @Nullable EngineMetricsSample before) {
        return switch (failure.kind()) {
            case TIMED_OUT, STALLED ->
                timeouts.judge(ProbeKind.GENERATION, failure, before, ownTokens(), TimeoutVerdict.Reasons.GENERATION);
            // The engine went away: the observation that takes it out at once. A stream past max_tokens is its own
            // failure, whatever the engine's load.
            case REFUSED, OVERLONG_STREAM ->
                Mono.fromSupplier(() -> ProbeFailures.report(ProbeKind.GENERATION, failure, clock.instant()));
            default ->
                Mono.fromSupplier(() -> ProbeReport.failed(
                        ProbeKind.GENERATION, clock.instant(), Reason.GENERATION_FAILED, describe(failure)));
        };
    }

    private static String describe(EngineFailure failure) {
        return switch (failure.kind()) {
            case RESET -> "connection reset: " + failure.detail();
            case MALFORMED_BODY -> "malformed answer: " + failure.detail();
            case TRUNCATED_STREAM -> "the stream ended before [DONE]: " + failure.detail();
            case BODY_TOO_LARGE -> "the answer was too large: " + failure.detail();
            default -> failure.detail();
        };
    }
}
