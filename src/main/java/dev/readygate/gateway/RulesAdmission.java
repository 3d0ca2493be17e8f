package dev.readygate.gateway;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The traffic port's admission, decided by {@link AdmissionRules}: a request is forwarded while the engine's state
 * accepts traffic (what {@code /readyz} says), to the start in progress; otherwise refused, with a {@code Retry-After}
 * that says when to come back: the current start's expected remainder from its provisional restart path and that
 * path's recorded readiness latencies ({@link RetryAfter}), the end of a restart-loop hold, or the rules' fixed figures.
 * Neither holding nor a bound on streams yet: every admitted request is forwarded at once.
 */
final class RulesAdmission implements TrafficAdmission {

    private final EngineStateMachine machine;
    private final Supplier<RestartPath> path;
    private final Supplier<List<RestartRecord>> history;
    private final Clock clock;

    /**
     * @param path the current start's provisional restart path (without I/O)
     * @param history the recorded starts, oldest first
     */
    RulesAdmission(
            EngineStateMachine machine,
            Supplier<RestartPath> path,
            Supplier<List<RestartRecord>> history,
            Clock clock) {
        this.machine = machine;
        this.path = path;
        this.history = history;
        this.clock = clock;
    }

    @Override
    public Admission admit() {
        EngineState state = machine.current();
        EngineStart start = machine.start();
        Instant now = clock.instant();
        // The path and the history are read only for a refusal: a ready engine's requests cost a state read.
        boolean serves = state.acceptsTraffic();
        RestartPath current = serves ? RestartPath.UNKNOWN : path.get();
        RetryAfter retryAfter = serves
                ? new RetryAfter(Duration.ZERO, RetryAfter.Basis.NO_HISTORY)
                : RetryAfter.of(latencies(history.get(), current), spent(start, now));
        AdmissionRules.Decision decision = AdmissionRules.decide(new AdmissionRules.Situation(
                state, false, 0, Integer.MAX_VALUE, 0, 0, false, Duration.ZERO, current, retryAfter, now));
        return switch (decision) {
            case AdmissionRules.Decision.Forward forward -> new Admission.Admitted(start == null ? null : start.id());
            case AdmissionRules.Decision.Reject reject ->
                new Admission.Refused(Duration.ofSeconds(reject.retryAfterSeconds()), reject.error(), reject.message());
            // Nothing is held yet (no queue): a hold cannot be decided.
            case AdmissionRules.Decision.Hold hold ->
                throw new IllegalStateException("a request was held without a queue: " + hold);
        };
    }

    /** The measured readiness latencies of the path's latest {@value RetryAfter#RECENT_STARTS} recorded starts. */
    static List<Duration> latencies(List<RestartRecord> history, RestartPath path) {
        List<Duration> measured = history.stream()
                .filter(record -> record.pathEvidence().path() == path)
                .filter(record -> record.verdict().readinessLatency() != null
                        && !record.verdict().readinessLatencyBound())
                .map(record -> record.verdict().readinessLatency())
                .toList();
        return measured.subList(Math.max(0, measured.size() - RetryAfter.RECENT_STARTS), measured.size());
    }

    private static Duration spent(@Nullable EngineStart start, Instant now) {
        if (start == null || now.isBefore(start.since())) {
            return Duration.ZERO;
        }
        return Duration.between(start.since(), now);
    }
}
