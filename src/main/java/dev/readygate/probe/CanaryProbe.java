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
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The canary: a deterministic request (temperature 0, fixed seed, logprobs, token ids) compared with an expected
 * answer from, in order, the configuration, the snapshot manifest's oracle, or a baseline learned on a trusted start.
 * A different answer is {@code canary_mismatch}, latched until the engine restarts: this is how a preload daemon
 * serving another checkpoint's weights (vLLM issue #59647) is caught.
 *
 * <p>vLLM's kernels are not batch-invariant by default: with other requests in the batch, later tokens may change and
 * logprobs move. An answer that differs from the expectation is compared again, on what stays stable under batching
 * ({@link CanaryExpectation#matchesUnderLoad}), when the engine's metrics show other work beside the canary; only an
 * answer that fails that too is a mismatch. A baseline is learned only from an answer given alone in the batch.
 */
final class CanaryProbe {

    private static final Logger logger = LoggerFactory.getLogger(CanaryProbe.class);

    private final ReadygateProperties.Canary config;
    private final String gpuName;
    private final EngineClient client;
    private final EngineFactsHolder facts;
    private final SnapshotOracle oracle;
    private final CanaryBaselineStore baselines;
    private final StartTrust trust;
    private final Clock clock;
    private final Scheduler blocking;
    private final TimeoutVerdict timeouts;
    private final Completions completions;

    public CanaryProbe(
            ReadygateProperties.Canary config,
            String gpuName,
            EngineClient client,
            EngineFactsHolder facts,
            SnapshotOracle oracle,
            CanaryBaselineStore baselines,
            StartTrust trust,
            Clock clock,
            Scheduler blocking) {
        this.config = config;
        this.gpuName = gpuName;
        this.client = client;
        this.facts = facts;
        this.oracle = oracle;
        this.baselines = baselines;
        this.trust = trust;
        this.clock = clock;
        this.blocking = blocking;
        this.timeouts = new TimeoutVerdict(client, facts, clock);
        this.completions = new Completions(client, facts);
    }

    /** Whether the operator asked to accept the model served now ({@code readygate accept-model}). */
    public Mono<Boolean> acceptancePending() {
        return Mono.fromCallable(baselines::acceptancePending).subscribeOn(blocking);
    }

    /** Tokens one run spends at most (an estimate of the prompt plus the output). */
    public int tokenCost() {
        return ownTokens().total();
    }

    /** The tokens one run adds to the engine's counters (its prompt, estimated, and its output). */
    EngineLoad.OwnTokens ownTokens() {
        return new EngineLoad.OwnTokens(config.prompt().length() / 3 + 8, config.maxTokens());
    }

    /**
     * Runs the canary.
     *
     * @param before the engine's metrics from before (null without {@code /metrics}): other work then, or progress
     *     meanwhile, means the answer came from a batch with other requests in it
     * @param timeout how long it may wait for its answer (a timeout while the engine makes progress on other work is
     *     busy, not failed)
     */
    public Mono<ProbeReport> run(
            ModelCard card, String vllmVersion, @Nullable EngineMetricsSample before, Duration timeout) {
        CompletionRequest request = new CompletionRequest(
                card.id(),
                config.prompt(),
                null,
                config.maxTokens(),
                config.maxTokens(),
                false,
                0.0,
                config.seed(),
                0,
                true);
        return justBefore(before).flatMap(scraped -> {
            EngineMetricsSample last = scraped.orElse(null);
            return completions.stream(request, timeout).flatMap(call -> switch (call) {
                case EngineCall.Success<StreamedCompletion> success -> judge(card, vllmVersion, success.value(), last);
                case EngineCall.Failure<StreamedCompletion> failure ->
                    failure.failure().kind() == EngineFailure.Kind.TIMED_OUT
                                    || failure.failure().kind() == EngineFailure.Kind.STALLED
                            ? timeouts.judge(
                                    ProbeKind.CANARY,
                                    failure.failure(),
                                    last,
                                    ownTokens(),
                                    TimeoutVerdict.Reasons.HEAVY)
                            : Mono.fromSupplier(
                                    () -> ProbeFailures.report(ProbeKind.CANARY, failure.failure(), clock.instant()));
            });
        });
    }

    /**
     * The engine's metrics right before the canary: the sample it was given may be a second old, its counters short of
     * readygate's own probes since (the representative probe's tokens before a verification's canary), which would read
     * as other work beside the canary. A sample given that shows other requests running or waiting is kept (the
     * canary is taken as under load either way); so is it without {@code /metrics}, or when this scrape fails.
     */
    private Mono<Optional<EngineMetricsSample>> justBefore(@Nullable EngineMetricsSample given) {
        if (given == null
                || EngineLoad.working(given)
                || !facts.current().capabilities().metrics()) {
            return Mono.just(Optional.ofNullable(given));
        }
        return client.metrics()
                .map(call -> Optional.of(
                        call instanceof EngineCall.Success<EngineMetricsSample> fresh ? fresh.value() : given));
    }

    private Mono<ProbeReport> judge(
            ModelCard card, String vllmVersion, StreamedCompletion answer, @Nullable EngineMetricsSample before) {
        // What the canary cost (tokens, time), whatever its verdict: the probe metrics count it like the other probe.
        ProbeReport.Measurement measurement =
                ProbeReport.Measurement.of(answer.promptTokens() == null ? 0 : answer.promptTokens(), answer);
        String error = answer.errorEvent();
        if (error != null) {
            return Mono.fromSupplier(() -> ProbeReport.failed(
                            ProbeKind.CANARY,
                            clock.instant(),
                            Reason.ERROR_EVENT,
                            "the canary stream carried an error event: " + error)
                    .withMeasurement(measurement));
        }
        if (ProbeReport.ABORTED.equals(answer.finishReason())) {
            // Cut short by the engine, not answered: comparing what came would latch a correct engine out.
            return Mono.fromSupplier(() -> ProbeReport.failed(
                            ProbeKind.CANARY,
                            clock.instant(),
                            Reason.ENGINE_ABORTED,
                            ProbeReport.abortedDetail("canary"))
                    .withMeasurement(measurement));
        }
        CanaryAnswer actual = new CanaryAnswer(
                answer.tokenIds(),
                answer.text(),
                answer.tokenLogprobs().isEmpty() ? null : answer.tokenLogprobs().getFirst());
        BaselineKey key = key(card, vllmVersion);
        // Reading the manifest and the baseline store is file I/O: off the event loop.
        // A manifest taken on another GPU, driver or vLLM version is named, and its oracle does not vouch.
        return Mono.fromCallable(() -> {
                    String distrusted = config.configured() || !oracleApplies() ? null : oracle.distrust(vllmVersion);
                    return new Expected(
                            expectation(key, distrusted == null), distrusted, baselines.acceptancePending());
                })
                .subscribeOn(blocking)
                .flatMap(expected -> (expected.acceptance()
                                ? accepted(key, card, expected.expectation(), actual, before)
                                : Mono.<ProbeReport>empty())
                        .switchIfEmpty(Mono.defer(() -> decide(key, expected.expectation(), actual, before)))
                        .map(report -> withDistrust(report, expected.distrusted())))
                .map(report -> report.withMeasurement(measurement));
    }

    /**
     * The expectation, why the snapshot manifest's oracle was not used (null when it was, or did not apply), and
     * whether the operator asked to accept the model served now.
     */
    private record Expected(
            @Nullable CanaryExpectation expectation,
            @Nullable String distrusted,
            boolean acceptance) {}

    /**
     * The operator's acceptance ({@link ModelAcceptance}), taken with an answer given alone in the batch: the answer
     * becomes the learned baseline of this model, whatever the start's trust (the operator vouches for it), and the
     * audit says so. Empty (judged as usual) when the answer came under load (the request waits for the next one), when
     * the request was withdrawn meanwhile, or when the expectation is configured or the snapshot manifest's, which an
     * acceptance does not replace (refused, and audited).
     */
    private Mono<ProbeReport> accepted(
            BaselineKey key,
            ModelCard card,
            @Nullable CanaryExpectation expectation,
            CanaryAnswer actual,
            @Nullable EngineMetricsSample before) {
        return underLoad(before)
                .filter(loaded -> !loaded)
                .flatMap(alone -> Mono.fromCallable(() -> accept(key, card, expectation, actual))
                        .subscribeOn(blocking));
    }

    private @Nullable ProbeReport accept(
            BaselineKey key, ModelCard card, @Nullable CanaryExpectation expectation, CanaryAnswer actual) {
        ModelAcceptance.Request request = baselines.takeAcceptance();
        if (request == null) {
            return null;
        }
        Instant now = clock.instant();
        Map<String, @Nullable Object> outcome = new LinkedHashMap<>();
        outcome.put("appliedAt", now.toString());
        outcome.put("startId", facts.current().startId());
        outcome.put("model", card.id());
        outcome.put("root", card.root());
        outcome.put("identity", card.identity());
        if (expectation != null && expectation.source() != CanaryExpectation.Source.LEARNED_BASELINE) {
            String why = expectation.source() == CanaryExpectation.Source.CONFIGURATION
                    ? "the expected answer is configured (readygate.probe.canary.expected-*): change the configuration"
                            + " instead"
                    : "the expected answer is the snapshot manifest's oracle: take a new snapshot instead";
            outcome.put("outcome", "refused");
            outcome.put("detail", why);
            baselines.audit(request, outcome);
            logger.warn("Model acceptance {} by {} refused: {}", request.id(), request.by(), why);
            return null;
        }
        boolean kept = baselines.save(key, actual, now);
        String previous = expectation == null ? null : expectation.answer().describe();
        outcome.put("outcome", "accepted");
        outcome.put("previousBaseline", previous);
        outcome.put("baseline", actual.describe());
        baselines.audit(request, outcome);
        logger.warn(
                "Model {} accepted by {} (request {}): its canary baseline is now {} (was {})",
                card.id(),
                request.by(),
                request.id(),
                actual.describe(),
                previous == null ? "none" : previous);
        return ProbeReport.passed(
                ProbeKind.CANARY,
                now,
                "the operator accepted this model (" + request.by() + ", request " + request.id() + "): learned "
                        + actual.describe() + " as the baseline"
                        + (previous == null ? "" : " in place of " + previous)
                        + (kept ? "" : " (kept in memory only: the state directory cannot be written)"),
                null,
                new CanaryComparison(CanaryExpectation.Source.LEARNED_BASELINE, actual, actual, true));
    }

    private Mono<ProbeReport> decide(
            BaselineKey key,
            @Nullable CanaryExpectation expectation,
            CanaryAnswer actual,
            @Nullable EngineMetricsSample before) {
        if (expectation != null && expectation.matches(actual)) {
            return Mono.just(matched(expectation, actual, false));
        }
        // A different answer, or one to learn from: was the engine alone with the canary?
        return underLoad(before)
                .flatMap(loaded -> Mono.fromCallable(() -> expectation == null
                                ? learnOrPass(key, actual, loaded)
                                : loaded && expectation.matchesUnderLoad(actual, config.maxTokens() == 1)
                                        ? matched(expectation, actual, true)
                                        : mismatch(expectation, actual, loaded))
                        .subscribeOn(blocking));
    }

    /**
     * Whether other requests were in the batch with the canary: running or waiting before it, or running, waiting or
     * progressing (beyond the canary's own tokens) after it. Without {@code /metrics}: unknown, taken as alone. With
     * {@code /metrics} that did not answer around the canary (a scrape timed out on a loaded node), unknown too, but
     * taken as under load: only what batching keeps is compared, so a correct engine is never latched out on a guess,
     * and another first token is still a mismatch.
     */
    private Mono<Boolean> underLoad(@Nullable EngineMetricsSample before) {
        if (EngineLoad.working(before)) {
            return Mono.just(true);
        }
        if (!facts.current().capabilities().metrics()) {
            return Mono.just(false);
        }
        return client.metrics().map(call -> switch (call) {
            case EngineCall.Success<EngineMetricsSample> after ->
                EngineLoad.between(before, after.value(), ownTokens()) != EngineLoad.IDLE;
            case EngineCall.Failure<EngineMetricsSample> failed ->
                failed.failure().kind() != EngineFailure.Kind.NOT_SUPPORTED;
        });
    }

    private ProbeReport matched(CanaryExpectation expectation, CanaryAnswer actual, boolean underLoad) {
        return ProbeReport.passed(
                ProbeKind.CANARY,
                clock.instant(),
                "answer matches the " + expectation.source().value().replace('_', ' ')
                        + (underLoad
                                ? " as far as batching keeps it (under load: the first token, and its logprob within "
                                        + config.logprobToleranceUnderLoad() + ")"
                                : ""),
                null,
                new CanaryComparison(expectation.source(), expectation.answer(), actual, true));
    }

    private ProbeReport mismatch(CanaryExpectation expectation, CanaryAnswer actual, boolean underLoad) {
        return new ProbeReport(
                ProbeKind.CANARY,
                clock.instant(),
                ProbeReport.Outcome.FAILED,
                Reason.CANARY_MISMATCH,
                "expected " + expectation.answer().describe() + " ("
                        + expectation.source().value() + "), got " + actual.describe()
                        + (underLoad ? " (under load: the first token or its logprob differs)" : ""),
                true,
                null,
                new CanaryComparison(expectation.source(), expectation.answer(), actual, false));
    }

    /** A report whose detail also says why the snapshot manifest's oracle was not used. */
    private static ProbeReport withDistrust(ProbeReport report, @Nullable String distrusted) {
        if (distrusted == null) {
            return report;
        }
        return new ProbeReport(
                report.kind(),
                report.at(),
                report.outcome(),
                report.reason(),
                report.detail() + "; the snapshot manifest's oracle was not used (" + distrusted + ")",
                report.latched(),
                report.measurement(),
                report.canary());
    }

    private @Nullable CanaryExpectation expectation(BaselineKey key, boolean manifestTrusted) {
        if (config.configured()) {
            return new CanaryExpectation(
                    CanaryExpectation.Source.CONFIGURATION,
                    new CanaryAnswer(config.expectedTokenIds(), config.expectedText(), config.expectedLogprob()),
                    config.logprobTolerance(),
                    config.logprobToleranceUnderLoad());
        }
        if (manifestTrusted && oracleApplies()) {
            CanaryAnswer fromManifest = oracle.read();
            if (fromManifest != null) {
                return new CanaryExpectation(
                        CanaryExpectation.Source.SNAPSHOT_MANIFEST,
                        fromManifest,
                        config.logprobTolerance(),
                        config.logprobToleranceUnderLoad());
            }
        }
        CanaryBaselineStore.Baseline baseline = baselines.find(key);
        return baseline == null
                ? null
                : new CanaryExpectation(
                        CanaryExpectation.Source.LEARNED_BASELINE,
                        baseline.answer(),
                        config.logprobTolerance(),
                        config.logprobToleranceUnderLoad());
    }

    /** The manifest's oracle answers vLLM's own canary request: only a canary with the same shape can use it. */
    private boolean oracleApplies() {
        return config.prompt().equals(SnapshotOracle.ORACLE_PROMPT)
                && config.maxTokens() == 1
                && config.seed() == 0
                && completions.generation() == EngineCapabilities.Generation.COMPLETIONS;
    }

    private ProbeReport learnOrPass(BaselineKey key, CanaryAnswer actual, boolean underLoad) {
        StartTrust.Trust current = trust.current();
        boolean trusted = current == StartTrust.Trust.TRUSTED
                || (current == StartTrust.Trust.UNKNOWN && config.learnWhenStartPathUnknown());
        if (config.learnBaseline() && trusted && !underLoad) {
            boolean kept = baselines.save(key, actual, clock.instant());
            return ProbeReport.passed(
                    ProbeKind.CANARY,
                    clock.instant(),
                    "no expected answer yet: learned "
                            + actual.describe() + " as the baseline (start "
                            + current.name().toLowerCase(Locale.ROOT)
                            + (kept ? ")" : "; kept in memory only: the state directory cannot be written)"),
                    null,
                    new CanaryComparison(CanaryExpectation.Source.NONE, null, actual, true));
        }
        return ProbeReport.passed(
                ProbeKind.CANARY,
                clock.instant(),
                underLoad && config.learnBaseline() && trusted
                        ? "no expected answer yet, and other requests were in the batch: the baseline is learned from"
                                + " an answer given alone; the canary checks only that the engine answers"
                        : "no expected answer and this start is not "
                                + "trusted to learn one: the canary checks only that the engine answers",
                null,
                new CanaryComparison(CanaryExpectation.Source.NONE, null, actual, true));
    }

    private BaselineKey key(ModelCard card, String vllmVersion) {
        // Through chat completions the template wraps the prompt: another request, with its own baseline.
        String request =
                "prompt#%08x/max%d/seed%d".formatted(config.prompt().hashCode(), config.maxTokens(), config.seed())
                        + (completions.generation() == EngineCapabilities.Generation.CHAT ? "/chat" : "");
        return new BaselineKey(
                card.id(),
                Objects.requireNonNullElse(card.root(), "unknown"),
                Objects.requireNonNullElse(card.maxModelLen(), 0),
                vllmVersion,
                gpuName,
                request,
                card.identity());
    }
}
