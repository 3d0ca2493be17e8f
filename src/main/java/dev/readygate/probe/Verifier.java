package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.ratelimiter.operator.RateLimiterOperator;
import java.time.Clock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * One verification: the representative probe, then the canary, turned into one readiness observation. Guarded, from
 * the outside in, by a circuit breaker (heavy probes stop after repeated failures; half-open lets one through) and a
 * rate limiter (probe tokens per minute): a call the open breaker refuses never reaches the rate limiter, so it takes
 * no token budget; a call the rate limiter refuses is not a failure to the breaker (it ignores that refusal). The
 * breaker goes half-open after {@code suspension}, or at once on evidence that the fault cleared ({@link #resume}: a
 * light check passed while the heavy probes were suspended).
 */
final class Verifier {

    private final @Nullable RepresentativeProbe representative;
    private final @Nullable CanaryProbe canary;
    private final CircuitBreaker circuitBreaker;
    private final RateLimiter rateLimiter;
    private final ProbeHistory history;
    private final Consumer<ProbeReport> listener;
    private final Clock clock;
    private final java.time.Duration timeout;
    // The start the breaker counts failures of: a new engine is verified at once, whatever the last one did.
    private @Nullable String breakerStart;

    public Verifier(
            @Nullable RepresentativeProbe representative,
            @Nullable CanaryProbe canary,
            CircuitBreaker circuitBreaker,
            RateLimiter rateLimiter,
            ProbeHistory history,
            Consumer<ProbeReport> listener,
            Clock clock,
            java.time.Duration timeout) {
        this.representative = representative;
        this.canary = canary;
        this.circuitBreaker = circuitBreaker;
        this.rateLimiter = rateLimiter;
        this.history = history;
        this.listener = listener;
        this.clock = clock;
        this.timeout = timeout;
    }

    /**
     * Verifies the engine start {@code startId}; empty when the probes were not allowed to run (suspended or over the
     * token budget).
     */
    public Mono<Observation> verify(
            String startId, ModelCard card, String vllmVersion, @Nullable EngineMetricsSample before) {
        breakerCounts(startId);
        int permits = Math.max(1, Math.min(rateLimiter.getRateLimiterConfig().getLimitForPeriod(), tokenCost(card)));
        return Mono.defer(() -> {
                    // Let through by the breaker and the budget: an earlier skip is no longer true.
                    history.ran();
                    return probes(card, vllmVersion, before);
                })
                .transformDeferred(RateLimiterOperator.of(rateLimiter, permits))
                .transformDeferred(CircuitBreakerOperator.of(circuitBreaker))
                .onErrorResume(
                        CallNotPermittedException.class,
                        ex -> skip("heavy probes suspended after repeated "
                                + "failures (circuit breaker "
                                + circuitBreaker.getState().name().toLowerCase(java.util.Locale.ROOT) + ")"))
                .onErrorResume(
                        RequestNotPermitted.class,
                        ex -> skip("probe token budget for this minute spent (" + permits + " tokens needed)"));
    }

    /** Whether the operator asked to accept the model served now; false without a canary. */
    public Mono<Boolean> acceptancePending() {
        return canary == null ? Mono.just(false) : canary.acceptancePending();
    }

    /** Whether heavy probes of the engine start {@code startId} are suspended: the breaker is open for this start. */
    synchronized boolean suspended(String startId) {
        return startId.equals(breakerStart) && circuitBreaker.getState() == CircuitBreaker.State.OPEN;
    }

    /**
     * A light check passed while the heavy probes of {@code startId} were suspended: the engine answers again, and the
     * next verification is the breaker's half-open trial now, not after the rest of {@code suspension}.
     */
    synchronized void resume(String startId) {
        if (suspended(startId)) {
            circuitBreaker.transitionToHalfOpenState();
        }
    }

    /** Another engine start: the failures of the last one no longer suspend heavy probes. */
    private synchronized void breakerCounts(String startId) {
        if (!startId.equals(breakerStart)) {
            breakerStart = startId;
            if (circuitBreaker.getState() != CircuitBreaker.State.CLOSED) {
                circuitBreaker.reset();
            }
        }
    }

    private Mono<Observation> skip(String why) {
        history.skipped(why);
        return Mono.empty();
    }

    private int tokenCost(ModelCard card) {
        return (representative == null ? 0 : representative.tokenCost(card.maxModelLen()))
                + (canary == null ? 0 : canary.tokenCost());
    }

    private Mono<Observation> probes(ModelCard card, String vllmVersion, @Nullable EngineMetricsSample before) {
        Mono<ProbeReport> first = representative == null
                ? Mono.empty()
                : representative.run(card, before).doOnNext(this::record);
        return first.flatMap(report -> report.passed() ? canary(card, vllmVersion, before) : Mono.just(report))
                .switchIfEmpty(Mono.defer(() -> canary(card, vllmVersion, before)))
                .map(this::observation)
                .defaultIfEmpty(new Observation.Verified(clock.instant(), "no heavy probe enabled"));
    }

    private Mono<ProbeReport> canary(ModelCard card, String vllmVersion, @Nullable EngineMetricsSample before) {
        if (canary == null) {
            return Mono.empty();
        }
        return canary.run(card, vllmVersion, before, timeout).doOnNext(this::record);
    }

    private void record(ProbeReport report) {
        history.record(report);
        listener.accept(report);
    }

    /** The last report decides: a failure is the failure, a canary pass means both passed. */
    private Observation observation(ProbeReport report) {
        return switch (report.outcome()) {
            case PASSED -> new Observation.Verified(report.at(), verifiedDetail());
            case BUSY -> new Observation.Busy(report.at(), report.detail());
            case FAILED -> failure(report);
        };
    }

    private String verifiedDetail() {
        ProbeReport rep = history.last(ProbeKind.REPRESENTATIVE);
        ProbeReport can = history.last(ProbeKind.CANARY);
        return (rep == null ? "" : "representative: " + rep.detail())
                + (rep != null && can != null ? "; " : "")
                + (can == null ? "" : "canary: " + can.detail());
    }

    private static Observation failure(ProbeReport report) {
        Reason reason = report.reason() == null ? Reason.IO_ERROR : report.reason();
        String detail = report.kind().value() + " probe: " + report.detail();
        if (reason == Reason.ENGINE_DOWN) {
            return new Observation.Unreachable(report.at(), reason, detail);
        }
        return new Observation.VerificationFailed(report.at(), reason, detail, report.latched());
    }
}
