package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The canary: a deterministic request (temperature 0, fixed seed, logprobs, token ids) compared with an expected
 * answer from, in order, the configuration, the snapshot manifest's oracle, or a baseline learned on a trusted start.
 * A different answer is {@code canary_mismatch}, latched until the engine restarts: this is how a preload daemon
 * serving another checkpoint's weights (vLLM issue #59647) is caught.
 */
final class CanaryProbe {

    private final ReadygateProperties.Canary config;
    private final String gpuName;
    private final EngineClient client;
    private final SnapshotOracle oracle;
    private final CanaryBaselineStore baselines;
    private final StartTrust trust;
    private final Clock clock;
    private final Duration timeout;
    private final Scheduler blocking;

    public CanaryProbe(
            ReadygateProperties.Canary config,
            String gpuName,
            EngineClient client,
            SnapshotOracle oracle,
            CanaryBaselineStore baselines,
            StartTrust trust,
            Clock clock,
            Duration timeout,
            Scheduler blocking) {
        this.config = config;
        this.gpuName = gpuName;
        this.client = client;
        this.oracle = oracle;
        this.baselines = baselines;
        this.trust = trust;
        this.clock = clock;
        this.timeout = timeout;
        this.blocking = blocking;
    }

    /** Tokens one run spends at most (an estimate of the prompt plus the output). */
    public int tokenCost() {
        return config.prompt().length() / 3 + 8 + config.maxTokens();
    }

    public Mono<ProbeReport> run(ModelCard card, String vllmVersion) {
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
        return client.streamCompletion(request, timeout).flatMap(call -> switch (call) {
            case EngineCall.Success<StreamedCompletion> success -> judge(card, vllmVersion, success.value());
            case EngineCall.Failure<StreamedCompletion> failure ->
                Mono.fromSupplier(() -> ProbeFailures.report(ProbeKind.CANARY, failure.failure(), clock.instant()));
        });
    }

    private Mono<ProbeReport> judge(ModelCard card, String vllmVersion, StreamedCompletion answer) {
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
        CanaryAnswer actual = new CanaryAnswer(
                answer.tokenIds(),
                answer.text(),
                answer.tokenLogprobs().isEmpty() ? null : answer.tokenLogprobs().getFirst());
        BaselineKey key = key(card, vllmVersion);
        // Reading the manifest and the baseline store is file I/O: off the event loop.
        return Mono.fromCallable(() -> compare(key, vllmVersion, actual).withMeasurement(measurement))
                .subscribeOn(blocking);
    }

    private ProbeReport compare(BaselineKey key, String vllmVersion, CanaryAnswer actual) {
        // A manifest taken on another GPU, driver or vLLM version is named, and its oracle does not vouch.
        String distrusted = config.configured() || !oracleApplies() ? null : oracle.distrust(vllmVersion);
        CanaryExpectation expectation = expectation(key, distrusted == null);
        if (expectation == null) {
            return withDistrust(learnOrPass(key, actual), distrusted);
        }
        boolean matches = expectation.matches(actual);
        CanaryComparison comparison = new CanaryComparison(expectation.source(), expectation.answer(), actual, matches);
        if (matches) {
            return withDistrust(
                    ProbeReport.passed(
                            ProbeKind.CANARY,
                            clock.instant(),
                            "answer matches the " + expectation.source().value().replace('_', ' '),
                            null,
                            comparison),
                    distrusted);
        }
        return new ProbeReport(
                ProbeKind.CANARY,
                clock.instant(),
                ProbeReport.Outcome.FAILED,
                Reason.CANARY_MISMATCH,
                "expected " + expectation.answer().describe() + " ("
                        + expectation.source().value() + "), got " + actual.describe(),
                true,
                null,
                comparison);
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
                    config.logprobTolerance());
        }
        if (manifestTrusted && oracleApplies()) {
            CanaryAnswer fromManifest = oracle.read();
            if (fromManifest != null) {
                return new CanaryExpectation(
                        CanaryExpectation.Source.SNAPSHOT_MANIFEST, fromManifest, config.logprobTolerance());
            }
        }
        CanaryBaselineStore.Baseline baseline = baselines.find(key);
        return baseline == null
                ? null
                : new CanaryExpectation(
                        CanaryExpectation.Source.LEARNED_BASELINE, baseline.answer(), config.logprobTolerance());
    }

    /** The manifest's oracle answers vLLM's own canary request: only a canary with the same shape can use it. */
    private boolean oracleApplies() {
        return config.prompt().equals(SnapshotOracle.ORACLE_PROMPT) && config.maxTokens() == 1 && config.seed() == 0;
    }

    private ProbeReport learnOrPass(BaselineKey key, CanaryAnswer actual) {
        StartTrust.Trust current = trust.current();
        boolean trusted = current == StartTrust.Trust.TRUSTED
                || (current == StartTrust.Trust.UNKNOWN && config.learnWhenStartPathUnknown());
        if (config.learnBaseline() && trusted) {
            boolean kept = baselines.save(key, actual, clock.instant());
            return ProbeReport.passed(
                    ProbeKind.CANARY,
                    clock.instant(),
                    "no expected answer yet: learned "
                            + actual.describe() + " as the baseline (start "
                            + current.name().toLowerCase(java.util.Locale.ROOT)
                            + (kept ? ")" : "; kept in memory only: the state directory cannot be written)"),
                    null,
                    new CanaryComparison(CanaryExpectation.Source.NONE, null, actual, true));
        }
        return ProbeReport.passed(
                ProbeKind.CANARY,
                clock.instant(),
                "no expected answer and this start is not "
                        + "trusted to learn one: the canary checks only that the engine answers",
                null,
                new CanaryComparison(CanaryExpectation.Source.NONE, null, actual, true));
    }

    private BaselineKey key(ModelCard card, String vllmVersion) {
        String request =
                "prompt#%08x/max%d/seed%d".formatted(config.prompt().hashCode(), config.maxTokens(), config.seed());
        return new BaselineKey(
                card.id(),
                Objects.requireNonNullElse(card.root(), "unknown"),
                Objects.requireNonNullElse(card.maxModelLen(), 0),
                vllmVersion,
                gpuName,
                request);
    }
}
