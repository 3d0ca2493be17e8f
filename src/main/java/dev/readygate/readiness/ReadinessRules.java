package dev.readygate.readiness;

import dev.readygate.readiness.EngineState.Degraded;
import dev.readygate.readiness.EngineState.Down;
import dev.readygate.readiness.EngineState.Healthy;
import dev.readygate.readiness.EngineState.Kind;
import dev.readygate.readiness.EngineState.Listening;
import dev.readygate.readiness.EngineState.ModelListed;
import dev.readygate.readiness.EngineState.NotReady;
import dev.readygate.readiness.EngineState.Ready;
import dev.readygate.readiness.EngineState.ShuttingDown;
import dev.readygate.readiness.EngineState.Starting;
import dev.readygate.readiness.EngineState.VerificationFailed;
import dev.readygate.readiness.EngineState.Verifying;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pure transition function: {@code next(state, observation)}. No I/O, no clock reads (time comes in on the
 * observation), no side effects, so it can be retried under contention and tested as a table.
 *
 * <p>Rules: an unreachable, dead or loading engine drops readiness at once (a loading one is {@link Listening}); other
 * failures of a ready engine count toward
 * {@code failureThreshold} ({@link Degraded} keeps serving until then); readiness, first or regained, needs
 * {@code successThreshold} consecutive verifications; latched verification failures (canary mismatch, probe exceeding
 * the context) hold until the engine restarts, as {@link NotReady} when the start had been ready and as
 * {@link VerificationFailed} when it never was; a new engine process in the log is down until it listens, and a start
 * that failed before serving stays down with vLLM's reason while its port stays closed; a shutdown is final.
 *
 * @param successThreshold consecutive verifications needed to become ready
 * @param failureThreshold consecutive failures that take a ready engine out of service
 */
public record ReadinessRules(int successThreshold, int failureThreshold) {

    /**
     * Every change of kind {@link #next} can make, from each kind to the kinds it can lead to (a change of reason within
     * a kind is not listed): the transitions the metrics count, each from the start.
     */
    public static final Map<Kind, Set<Kind>> TRANSITIONS = transitions();

    /** Reasons of cheap-check failures: a passing cheap check clears a degradation they caused. */
    private static final Set<Reason> CHEAP_CHECK_REASONS = Set.of(Reason.HEALTH_FAILED, Reason.MODEL_NOT_LISTED);

    private static Map<Kind, Set<Kind>> transitions() {
        Map<Kind, Set<Kind>> to = new EnumMap<>(Kind.class);
        // Any state but the last can go away, restart unseen, or shut down.
        Set<Kind> always = EnumSet.of(Kind.DOWN, Kind.HEALTHY, Kind.SHUTTING_DOWN);
        to.put(Kind.STARTING, with(always, Kind.LISTENING));
        to.put(Kind.DOWN, with(always, Kind.LISTENING));
        to.put(Kind.LISTENING, with(always));
        to.put(Kind.HEALTHY, with(always, Kind.LISTENING, Kind.MODEL_LISTED));
        to.put(Kind.MODEL_LISTED, with(always, Kind.LISTENING, Kind.VERIFYING, Kind.READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.VERIFYING, with(always, Kind.LISTENING, Kind.READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.READY, with(always, Kind.DEGRADED, Kind.NOT_READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.DEGRADED, with(always, Kind.READY, Kind.NOT_READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.NOT_READY, with(always, Kind.READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.VERIFICATION_FAILED, with(always, Kind.VERIFYING, Kind.READY));
        to.put(Kind.SHUTTING_DOWN, EnumSet.noneOf(Kind.class));
        to.forEach((from, kinds) -> kinds.remove(from));
        Map<Kind, Set<Kind>> frozen = new EnumMap<>(Kind.class);
        to.forEach((from, kinds) -> frozen.put(from, Set.copyOf(kinds)));
        return Map.copyOf(frozen);
    }

    private static Set<Kind> with(Set<Kind> always, Kind... more) {
        Set<Kind> kinds = EnumSet.copyOf(always);
        kinds.addAll(List.of(more));
        return kinds;
    }

    public ReadinessRules {
        if (successThreshold < 1 || failureThreshold < 1) {
            throw new IllegalArgumentException("thresholds must be at least 1");
        }
    }

    public EngineState next(EngineState current, Observation observation) {
        if (current instanceof ShuttingDown) {
            return current;
        }
        return switch (observation) {
            case Observation.ShutdownRequested o -> new ShuttingDown(o.at());
            case Observation.Unreachable o -> down(current, o.at(), o.reason(), o.detail());
            case Observation.EngineDead o -> down(current, o.at(), Reason.ENGINE_DEAD, o.detail());
            case Observation.Loading o -> loading(current, o);
            case Observation.Restarted o -> new Healthy(o.at(), Reason.ENGINE_RESTARTED, o.detail());
            // A new engine process is loading: nothing serves until it listens.
            case Observation.ProcessStarted o -> new Down(o.at(), Reason.ENGINE_DOWN, o.detail());
            case Observation.StartFailed o -> new Down(o.at(), Reason.START_FAILED, o.detail());
            case Observation.HealthOk o -> healthOk(current, o);
            case Observation.ModelListed o -> modelListed(current, o);
            case Observation.CheckFailed o -> checkFailed(current, o);
            case Observation.Verified o -> verified(current, o);
            case Observation.VerificationFailed o -> verificationFailed(current, o);
            case Observation.Busy o -> current;
        };
    }

    private static EngineState down(EngineState current, java.time.Instant at, Reason reason, String detail) {
        if (current instanceof Down down && down.cause() == Reason.START_FAILED && reason == Reason.ENGINE_DOWN) {
            // A port still closed after a failed start says nothing new: vLLM's reason stays until the next start.
            return current;
        }
        if (current instanceof Down down && down.cause() == reason) {
            return new Down(down.since(), reason, detail);
        }
        return new Down(at, reason, detail);
    }

    /** A loading engine listens and serves nothing: the state says so, from the first such answer. */
    private static EngineState loading(EngineState current, Observation.Loading o) {
        if (current instanceof Listening l && l.cause() == Reason.ENGINE_LOADING) {
            return new Listening(l.since(), Reason.ENGINE_LOADING, o.detail());
        }
        return new Listening(o.at(), Reason.ENGINE_LOADING, o.detail());
    }

    private static EngineState healthOk(EngineState current, Observation.HealthOk o) {
        return switch (current) {
            case Starting s -> new Healthy(o.at(), Reason.MODEL_NOT_LISTED, "");
            case Down d -> new Healthy(o.at(), Reason.MODEL_NOT_LISTED, "");
            case Listening l -> new Healthy(o.at(), Reason.MODEL_NOT_LISTED, "");
            case Degraded d when CHEAP_CHECK_REASONS.contains(d.cause()) -> new Ready(o.at(), d.model());
            default -> current;
        };
    }

    private static EngineState modelListed(EngineState current, Observation.ModelListed o) {
        if (current instanceof Healthy) {
            return new ModelListed(o.at(), o.model(), Reason.NOT_VERIFIED);
        }
        if (current instanceof Degraded d && d.cause() == Reason.MODEL_NOT_LISTED) {
            return new Ready(o.at(), d.model());
        }
        return current;
    }

    private EngineState checkFailed(EngineState current, Observation.CheckFailed o) {
        return switch (current) {
            case Starting s -> new Listening(o.at(), o.reason(), o.detail());
            case Down d -> new Listening(o.at(), o.reason(), o.detail());
            case Listening l -> new Listening(l.since(), o.reason(), o.detail());
            case Healthy h when o.reason() == Reason.MODEL_NOT_LISTED -> new Healthy(h.since(), o.reason(), o.detail());
            case Healthy h -> new Listening(o.at(), o.reason(), o.detail());
            case ModelListed m -> new Listening(o.at(), o.reason(), o.detail());
            case Verifying v -> new Listening(o.at(), o.reason(), o.detail());
            case Ready r -> failed(r.model(), 0, o.at(), o.reason(), o.detail());
            case Degraded d -> failed(d.model(), d.failures(), o.at(), o.reason(), o.detail());
            case NotReady n when n.latched() -> n;
            case NotReady n -> new NotReady(n.since(), n.model(), 0, o.reason(), o.detail());
            case VerificationFailed f -> f;
            case ShuttingDown s -> s;
        };
    }

    private EngineState verified(EngineState current, Observation.Verified o) {
        return switch (current) {
            case ModelListed m -> firstSuccess(m.model(), o);
            case VerificationFailed f when !f.latched() -> firstSuccess(f.model(), o);
            case Verifying v ->
                v.successes() + 1 >= successThreshold
                        ? new Ready(o.at(), v.model())
                        : new Verifying(v.since(), v.model(), v.successes() + 1, Reason.NOT_VERIFIED);
            case Degraded d -> new Ready(o.at(), d.model());
            case NotReady n when n.latched() -> n;
            case NotReady n ->
                n.successes() + 1 >= successThreshold
                        ? new Ready(o.at(), n.model())
                        : new NotReady(n.since(), n.model(), n.successes() + 1, Reason.NOT_VERIFIED, "recovering");
            // A stale verification (the engine went down, restarted or latched meanwhile) changes nothing.
            default -> current;
        };
    }

    private EngineState firstSuccess(String model, Observation.Verified o) {
        return successThreshold <= 1 ? new Ready(o.at(), model) : new Verifying(o.at(), model, 1, Reason.NOT_VERIFIED);
    }

    private EngineState verificationFailed(EngineState current, Observation.VerificationFailed o) {
        String model = modelOf(current);
        if (model == null) {
            // Verification only runs once the model is listed: a stale result changes nothing.
            return current;
        }
        if (o.latched()) {
            return latched(current, model, o);
        }
        return switch (current) {
            case NotReady n when n.latched() -> n;
            case Ready r -> failed(model, 0, o.at(), o.reason(), o.detail());
            case Degraded d -> failed(model, d.failures(), o.at(), o.reason(), o.detail());
            case NotReady n -> new NotReady(n.since(), model, 0, o.reason(), o.detail());
            case VerificationFailed f when f.latched() -> f;
            case VerificationFailed f ->
                new VerificationFailed(
                        f.cause() == o.reason() ? f.since() : o.at(),
                        model,
                        o.reason(),
                        o.detail(),
                        false,
                        f.failures() + 1);
            default -> new VerificationFailed(o.at(), model, o.reason(), o.detail(), false, 1);
        };
    }

    /**
     * A latched failure: {@link NotReady} when this engine start had been ready (it was serving, then failed its
     * canary), {@link VerificationFailed} when it never was; either holds until the engine restarts.
     */
    private static EngineState latched(EngineState current, String model, Observation.VerificationFailed o) {
        return switch (current) {
            case NotReady n when n.latched() && n.cause() == o.reason() -> n;
            case Ready r -> new NotReady(o.at(), model, 0, o.reason(), o.detail(), true);
            case Degraded d -> new NotReady(o.at(), model, 0, o.reason(), o.detail(), true);
            case NotReady n -> new NotReady(o.at(), model, 0, o.reason(), o.detail(), true);
            case VerificationFailed f
            when f.latched() && f.cause() == o.reason() ->
                new VerificationFailed(f.since(), model, o.reason(), o.detail(), true, f.failures() + 1);
            default -> new VerificationFailed(o.at(), model, o.reason(), o.detail(), true, 1);
        };
    }

    private EngineState failed(String model, int failuresSoFar, java.time.Instant at, Reason reason, String detail) {
        int failures = failuresSoFar + 1;
        return failures >= failureThreshold
                ? new NotReady(at, model, 0, reason, detail)
                : new Degraded(at, model, failures, reason, detail);
    }

    private static @org.jspecify.annotations.Nullable String modelOf(EngineState state) {
        return switch (state) {
            case ModelListed m -> m.model();
            case Verifying v -> v.model();
            case Ready r -> r.model();
            case Degraded d -> d.model();
            case NotReady n -> n.model();
            case VerificationFailed f -> f.model();
            default -> null;
        };
    }
}
