package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMessages;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The representative probe: a streamed completion with the model's normal prompt length (the engine's own token ids
 * from {@code /tokenize}, or text whose count a calibration proved: {@link PromptPlanner}) and output length
 * ({@code min_tokens} = {@code max_tokens}, {@code ignore_eos}). It passes only if the stream is well-formed,
 * error-free and ends in {@code [DONE]}, the engine counted the planned prompt (proven, never taken on trust) and
 * output tokens, the finish reason is {@code length}, and any latency objective is met. An engine's own error (an
 * error event, a 400) reaches the reason; one that says the request exceeds the context is
 * {@code probe_exceeds_context}. What a passed probe measured (time to first token, inter-token latency) is the start's
 * speed, which the light checks' budget follows ({@link GenerationBudget}).
 */
final class RepresentativeProbe {

    private final ReadygateProperties.Representative config;
    private final EngineClient client;
    private final EngineFactsHolder facts;
    private final PromptPlanner planner;
    private final Completions completions;
    private final Clock clock;
    private final Duration timeout;
    private final TimeoutVerdict timeouts;

    public RepresentativeProbe(
            ReadygateProperties.Representative config,
            EngineClient client,
            EngineFactsHolder facts,
            RandomGenerator random,
            Clock clock,
            Duration timeout) {
        this.config = config;
        this.client = client;
        this.facts = facts;
        this.planner = new PromptPlanner(client, facts, random, timeout);
        this.completions = new Completions(client, facts);
        this.clock = clock;
        this.timeout = timeout;
        this.timeouts = new TimeoutVerdict(client, facts, clock);
    }

    /** The tokens one run spends at most (prompt plus output), or the output alone when the prompt is unknown. */
    public int tokenCost(@Nullable Integer maxModelLen) {
        Integer prompt = config.promptTokens().resolve(maxModelLen);
        return (prompt == null ? 0 : prompt)
                + config.outputTokens()
                + (facts.current().capabilities().tokenize()
                                && completions.generation() == EngineCapabilities.Generation.COMPLETIONS
                        ? 0
                        : PromptPlanner.CALIBRATION_COST);
    }

    /**
     * Runs the probe. {@code before} is the engine's metrics from just before (null without {@code /metrics}): a
     * timeout while other requests make progress is {@code BUSY}, not a failure.
     */
    public Mono<ProbeReport> run(ModelCard card, @Nullable EngineMetricsSample before) {
        String startId = facts.current().startId();
        Integer planned = config.promptTokens().resolve(card.maxModelLen());
        if (planned == null) {
            return Mono.fromSupplier(() -> ProbeReport.failed(
                            ProbeKind.REPRESENTATIVE,
                            clock.instant(),
                            Reason.PROBE_EXCEEDS_CONTEXT,
                            "prompt-tokens is " + config.promptTokens()
                                    + " but the engine reports no max_model_len; set an absolute count or"
                                    + " readygate.engine.max-model-len")
                    .latch());
        }
        Integer limit = card.maxModelLen();
        if (limit != null && planned + config.outputTokens() > limit) {
            return Mono.fromSupplier(() -> ProbeReport.failed(
                            ProbeKind.REPRESENTATIVE,
                            clock.instant(),
                            Reason.PROBE_EXCEEDS_CONTEXT,
                            planned + " prompt + " + config.outputTokens()
                                    + " output tokens exceed the engine's max_model_len " + limit + contextSource())
                    .latch());
        }
        return planner.plan(card.id(), planned).flatMap(plan -> switch (plan) {
            case PromptPlanner.Plan.Failed failed ->
                Mono.fromSupplier(
                        () -> ProbeFailures.report(ProbeKind.REPRESENTATIVE, failed.failure(), clock.instant()));
            case PromptPlanner.Plan.Ready ready -> send(startId, card, planned, ready.prompt(), before);
            case PromptPlanner.Plan.Truncating truncating ->
                Mono.fromSupplier(() -> fail(Reason.PROMPT_TOKENS_MISMATCH, truncating.detail()));
        });
    }

    private Mono<ProbeReport> send(
            String startId,
            ModelCard card,
            int planned,
            PromptPlanner.Planned prompt,
            @Nullable EngineMetricsSample before) {
        CompletionRequest request = new CompletionRequest(
                card.id(),
                prompt.text(),
                prompt.tokenIds(),
                config.outputTokens(),
                config.outputTokens(),
                true,
                0.0,
                null,
                null,
                false);
        return completions.stream(request, timeout).flatMap(call -> switch (call) {
            case EngineCall.Success<StreamedCompletion> success ->
                Mono.fromSupplier(
                        () -> evaluate(startId, planned, prompt, success.value(), EngineLoad.working(before)));
            // Plain completions are missing: the prompt of token ids is planned again as text, for chat completions.
            case EngineCall.Failure<StreamedCompletion> failure
            when failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED
                    && prompt.tokenIds() != null
                    && completions.generation() == EngineCapabilities.Generation.CHAT -> run(card, before);
            case EngineCall.Failure<StreamedCompletion> failure ->
                failure.failure().kind() == EngineFailure.Kind.TIMED_OUT
                                || failure.failure().kind() == EngineFailure.Kind.STALLED
                        ? timeouts.judge(
                                ProbeKind.REPRESENTATIVE,
                                failure.failure(),
                                before,
                                new EngineLoad.OwnTokens(planned, config.outputTokens()),
                                TimeoutVerdict.Reasons.HEAVY)
                        : Mono.fromSupplier(() ->
                                ProbeFailures.report(ProbeKind.REPRESENTATIVE, failure.failure(), clock.instant()));
        });
    }

    private ProbeReport evaluate(
            String startId, int planned, PromptPlanner.Planned prompt, StreamedCompletion answer, boolean underLoad) {
        ProbeReport.Measurement measurement = ProbeReport.Measurement.of(prompt.expectedTokens(), answer);
        ProbeReport failure = check(planned, prompt, answer, underLoad);
        if (failure != null) {
            return failure.withMeasurement(measurement);
        }
        if (!startId.isEmpty()) {
            // A correct answer: how fast this start generates, for the light checks' budget.
            EngineFacts.Speed speed = new EngineFacts.Speed(
                    Objects.requireNonNull(answer.promptTokens()),
                    answer.timeToFirstToken(),
                    answer.meanInterTokenLatency());
            facts.learn(startId, f -> f.withSpeed(speed));
        }
        return ProbeReport.passed(
                ProbeKind.REPRESENTATIVE,
                clock.instant(),
                "%d prompt + %d output tokens (%s), TTFT %d ms,"
                                .formatted(
                                        answer.promptTokens(),
                                        answer.completionTokens(),
                                        prompt.exact() ? "prompt count exact" : "prompt count approximate",
                                        answer.timeToFirstToken().toMillis())
                        + " max inter-token %d ms, total %d ms"
                                .formatted(
                                        answer.maxInterTokenLatency().toMillis(),
                                        answer.total().toMillis()),
                measurement,
                null);
    }

    /** Where the context length came from, when readygate knows more than the card. */
    private String contextSource() {
        dev.readygate.engine.EngineSurface surface =
                facts.current().capabilities().surface();
        return surface == null || surface.maxModelLen() == null ? "" : " (" + surface.maxModelLenSource() + ")";
    }

    /**
     * Why the answer fails the probe, or null. The latency objectives are the idle engine's: under load (other requests
     * were running or waiting when the probe was sent) a slow answer is the load's, not a fault.
     */
    private @Nullable ProbeReport check(
            int planned, PromptPlanner.Planned prompt, StreamedCompletion answer, boolean underLoad) {
        String error = answer.errorEvent();
        if (error != null) {
            return EngineMessages.contextLength(error)
                    ? fail(
                                    Reason.PROBE_EXCEEDS_CONTEXT,
                                    "the engine's error event: " + error
                                            + " (" + prompt.expectedTokens() + " prompt + " + config.outputTokens()
                                            + " output tokens)")
                            .latch()
                    : fail(Reason.ERROR_EVENT, "the stream carried an error event: " + error);
        }
        if (ProbeReport.ABORTED.equals(answer.finishReason())) {
            return fail(Reason.ENGINE_ABORTED, ProbeReport.abortedDetail("representative probe"));
        }
        Integer promptTokens = answer.promptTokens();
        Integer completionTokens = answer.completionTokens();
        if (promptTokens == null || completionTokens == null) {
            return fail(Reason.MALFORMED_RESPONSE, "the stream had no usage chunk (stream_options.include_usage)");
        }
        if (!prompt.exact() && config.promptTokenTolerance() == 0) {
            return fail(
                    Reason.PROMPT_TOKENS_UNPROVEN,
                    "the engine counted " + promptTokens + " prompt tokens, which cannot be checked: "
                            + prompt.proof() + "; set readygate.probe.representative.prompt-token-tolerance to accept"
                            + " an approximate count");
        }
        if (Math.abs(promptTokens - prompt.expectedTokens()) > config.promptTokenTolerance()) {
            return fail(
                    Reason.PROMPT_TOKENS_MISMATCH,
                    "sent " + prompt.expectedTokens() + " prompt tokens (planned " + planned + "), the engine counted "
                            + promptTokens + (promptTokens < prompt.expectedTokens() ? ": it truncated the prompt" : "")
                            + "; " + prompt.proof());
        }
        if (completionTokens != config.outputTokens()) {
            return fail(
                    Reason.COMPLETION_TOKENS_MISMATCH,
                    "asked for " + config.outputTokens() + " output tokens, the engine generated " + completionTokens);
        }
        if (!"length".equals(answer.finishReason())) {
            return fail(
                    Reason.UNEXPECTED_FINISH_REASON, "finish_reason " + answer.finishReason() + ", expected length");
        }
        if (underLoad) {
            return null;
        }
        Duration maxTtft = config.maxTimeToFirstToken();
        if (maxTtft != null && answer.timeToFirstToken().compareTo(maxTtft) > 0) {
            return fail(
                    Reason.SLOW,
                    "time to first token " + answer.timeToFirstToken().toMillis() + " ms over the objective "
                            + maxTtft.toMillis() + " ms");
        }
        Duration maxItl = config.maxInterTokenLatency();
        if (maxItl != null && answer.maxInterTokenLatency().compareTo(maxItl) > 0) {
            return fail(
                    Reason.SLOW,
                    "inter-token latency " + answer.maxInterTokenLatency().toMillis() + " ms over the objective "
                            + maxItl.toMillis() + " ms");
        }
        return null;
    }

    private ProbeReport fail(Reason reason, String detail) {
        return ProbeReport.failed(ProbeKind.REPRESENTATIVE, clock.instant(), reason, detail);
    }
}
