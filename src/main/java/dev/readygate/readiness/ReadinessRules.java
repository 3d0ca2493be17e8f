package dev.readygate.readiness;

import dev.readygate.readiness.EngineState.Degraded;
import dev.readygate.readiness.EngineState.Down;
import dev.readygate.readiness.EngineState.Healthy;
import dev.readygate.readiness.EngineState.Held;
import dev.readygate.readiness.EngineState.Kind;
import dev.readygate.readiness.EngineState.Listening;
import dev.readygate.readiness.EngineState.ModelListed;
import dev.readygate.readiness.EngineState.NotReady;
import dev.readygate.readiness.EngineState.Ready;
import dev.readygate.readiness.EngineState.ShuttingDown;
import dev.readygate.readiness.EngineState.Sleeping;
import dev.readygate.readiness.EngineState.Starting;
import dev.readygate.readiness.EngineState.VerificationFailed;
import dev.readygate.readiness.EngineState.Verifying;
import java.time.Instant;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The pure transition function: {@code step(state, observation, heldUntil)}. No I/O, no clock reads (time comes in on
 * the observation), no side effects, so it can be retried under contention and tested as a table.
 *
 * <p>Rules: an unreachable, dead or loading engine drops readiness at once (a loading one is {@link Listening}); other
 * failures of a ready engine count toward {@code failureThreshold} ({@link Degraded} keeps serving until then), per
 * {@link Check}: a check's run of failures ends at its own next pass, and a verification clears them all; readiness,
 * first or regained, needs {@code successThreshold} consecutive verifications; latched verification failures (canary
 * mismatch, probe exceeding the context) hold until the engine restarts, as {@link NotReady} when the start had been
 * ready and as {@link VerificationFailed} when it never was; a new engine process in the log is down until it listens,
 * and a start that failed before serving stays down with vLLM's reason while its port stays closed; a start verified
 * during a restart loop is {@link Held} until it has stayed up; an engine that says it sleeps is {@link Sleeping}, no
 * probe's result counting, until it says it is awake, then verified as a start is; a shutdown is final.
 *
 * <p>The rules are loud: an observation they cannot use (one of another phase, one a latch or the shutdown holds off)
 * comes back as {@link Step#ignored()}, for the metrics to count, never dropped silently.
 *
 * @param successThreshold consecutive verifications needed to become ready
 * @param failureThreshold consecutive failures that take a ready engine out of service
 */
public record ReadinessRules(int successThreshold, int failureThreshold) {

    /**
     * Every change of kind {@link #step} can make, from each kind to the kinds it can lead to (a change of reason within
     * a kind is not listed): the transitions the metrics count, each from the start.
     */
    public static final Map<Kind, Set<Kind>> TRANSITIONS = transitions();

    /** Why the rules could not use an observation. */
    public enum Ignored {
        /** It belongs to another phase: a verification before the model is listed, a generation check of an engine
         * that no longer serves, a result that came after the engine moved on. */
        STALE,
        /** A latched failure holds the state until the engine restarts. */
        LATCHED,
        /** readygate is shutting down. */
        SHUT_DOWN,
        /** The engine sleeps: a probe's failure or success says nothing until it wakes. */
        ASLEEP;

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The state after an observation, and whether the rules ignored it.
     *
     * @param state the next state (the same one when ignored)
     * @param ignored why the observation was not used, or null
     */
    public record Step(EngineState state, @Nullable Ignored ignored) {}

    private static Map<Kind, Set<Kind>> transitions() {
        Map<Kind, Set<Kind>> to = new EnumMap<>(Kind.class);
        // Any state but the last can go away, restart unseen, or shut down.
        Set<Kind> always = EnumSet.of(Kind.DOWN, Kind.HEALTHY, Kind.SHUTTING_DOWN);
        to.put(Kind.STARTING, with(always, Kind.LISTENING));
        to.put(Kind.DOWN, with(always, Kind.LISTENING));
        to.put(Kind.LISTENING, with(always));
        to.put(Kind.HEALTHY, with(always, Kind.LISTENING, Kind.MODEL_LISTED));
        to.put(
                Kind.MODEL_LISTED,
                with(always, Kind.LISTENING, Kind.VERIFYING, Kind.READY, Kind.HELD, Kind.VERIFICATION_FAILED));
        to.put(Kind.VERIFYING, with(always, Kind.LISTENING, Kind.READY, Kind.HELD, Kind.VERIFICATION_FAILED));
        to.put(Kind.READY, with(always, Kind.DEGRADED, Kind.NOT_READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.DEGRADED, with(always, Kind.READY, Kind.NOT_READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.NOT_READY, with(always, Kind.READY, Kind.HELD, Kind.VERIFICATION_FAILED));
        to.put(Kind.VERIFICATION_FAILED, with(always, Kind.LISTENING, Kind.VERIFYING, Kind.READY, Kind.HELD));
        to.put(Kind.HELD, with(always, Kind.LISTENING, Kind.READY, Kind.VERIFICATION_FAILED));
        to.put(Kind.SLEEPING, with(always, Kind.LISTENING, Kind.MODEL_LISTED));
        // An engine that answers can be put to sleep.
        for (Kind awake : List.of(
                Kind.LISTENING,
                Kind.HEALTHY,
                Kind.MODEL_LISTED,
                Kind.VERIFYING,
                Kind.READY,
                Kind.DEGRADED,
                Kind.NOT_READY,
                Kind.VERIFICATION_FAILED,
                Kind.HELD)) {
            to.get(awake).add(Kind.SLEEPING);
        }
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

    /** The state after an observation, outside any restart loop. */
    public EngineState next(EngineState current, Observation observation) {
        return step(current, observation, null).state();
    }

    /**
     * The state after an observation, and whether it was ignored.
     *
     * @param heldUntil until when the current start is held out of service (it began in a restart loop), or null
     */
    public Step step(EngineState current, Observation observation, @Nullable Instant heldUntil) {
        if (current instanceof ShuttingDown) {
            return new Step(current, Ignored.SHUT_DOWN);
        }
        Step asleep = current instanceof Sleeping sleeping ? asleep(sleeping, observation) : null;
        if (asleep != null) {
            return asleep;
        }
        Step step = switch (observation) {
            case Observation.ShutdownRequested o -> used(new ShuttingDown(o.at()));
            case Observation.Unreachable o -> used(down(current, o.at(), o.reason(), o.detail()));
            case Observation.EngineDead o -> used(down(current, o.at(), Reason.ENGINE_DEAD, o.detail()));
            case Observation.Loading o -> used(loading(current, o));
            case Observation.Restarted o -> used(new Healthy(o.at(), Reason.ENGINE_RESTARTED, o.detail()));
            // A new engine process is loading: nothing serves until it listens.
            case Observation.ProcessStarted o -> used(new Down(o.at(), Reason.ENGINE_DOWN, o.detail()));
            case Observation.StartFailed o -> used(new Down(o.at(), Reason.START_FAILED, o.detail()));
            case Observation.HealthOk o -> healthOk(current, o);
            case Observation.ModelListed o -> modelListed(current, o);
            case Observation.Generated o -> generated(current, o.at(), Check.GENERATION);
            case Observation.Served o -> generated(current, o.at(), Check.TRAFFIC);
            case Observation.CheckFailed o -> checkFailed(current, o);
            case Observation.Verified o -> verified(current, o);
            case Observation.VerificationFailed o -> verificationFailed(current, o);
            case Observation.Busy o -> used(current);
            case Observation.ModelAccepted o -> used(accepted(current, o));
            case Observation.Asleep o -> used(new Sleeping(o.at(), modelOf(current), o.level(), o.detail()));
            // Awake without having slept: nothing to wake from.
            case Observation.Awake o -> ignored(current, Ignored.STALE);
        };
        return hold(current, step, observation.at(), heldUntil);
    }

    /**
     * A sleeping engine: it wakes into {@link ModelListed} (verified as a start is, the canary included); a probe's
     * result, failed or passed, says nothing of it; null for what ends the sleep otherwise (the engine went away,
     * restarted, is seen loading, readygate stops), which the rules take as for any state.
     */
    private static @Nullable Step asleep(Sleeping sleeping, Observation observation) {
        return switch (observation) {
            case Observation.Asleep o ->
                used(
                        o.level() == sleeping.level()
                                ? sleeping
                                : new Sleeping(sleeping.since(), sleeping.model(), o.level(), o.detail()));
            case Observation.Awake o ->
                used(
                        sleeping.model() != null
                                ? new ModelListed(o.at(), sleeping.model(), Reason.NOT_VERIFIED)
                                : new Healthy(o.at(), Reason.MODEL_NOT_LISTED, o.detail()));
            case Observation.HealthOk o -> used(sleeping);
            case Observation.ModelListed o -> used(sleeping);
            case Observation.Busy o -> used(sleeping);
            case Observation.ModelAccepted o -> used(sleeping);
            case Observation.Generated o -> ignored(sleeping, Ignored.ASLEEP);
            case Observation.Served o -> ignored(sleeping, Ignored.ASLEEP);
            case Observation.CheckFailed o -> ignored(sleeping, Ignored.ASLEEP);
            case Observation.Verified o -> ignored(sleeping, Ignored.ASLEEP);
            case Observation.VerificationFailed o -> ignored(sleeping, Ignored.ASLEEP);
            default -> null;
        };
    }

    /** A start of a restart loop that would become ready is held instead, until it has stayed up. */
    private static Step hold(EngineState current, Step step, Instant at, @Nullable Instant heldUntil) {
        if (heldUntil == null
                || !(step.state() instanceof Ready ready)
                || current.acceptsTraffic()
                || !at.isBefore(heldUntil)) {
            return step;
        }
        Instant since = current instanceof Held held ? held.since() : at;
        return used(new Held(
                since,
                ready.model(),
                heldUntil,
                "verified during a restart loop: held out of service until the engine has stayed up until "
                        + heldUntil));
    }

    private static Step used(EngineState state) {
        return new Step(state, null);
    }

    private static Step ignored(EngineState state, Ignored why) {
        return new Step(state, why);
    }

    private static EngineState down(EngineState current, Instant at, Reason reason, String detail) {
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

    private static Step healthOk(EngineState current, Observation.HealthOk o) {
        return switch (current) {
            case Starting s -> used(new Healthy(o.at(), Reason.MODEL_NOT_LISTED, ""));
            case Down d -> used(new Healthy(o.at(), Reason.MODEL_NOT_LISTED, ""));
            case Listening l -> used(new Healthy(o.at(), Reason.MODEL_NOT_LISTED, ""));
            case Degraded d -> used(passed(d, Check.HEALTH, o.at()));
            default -> used(current);
        };
    }

    private static Step modelListed(EngineState current, Observation.ModelListed o) {
        return switch (current) {
            case Healthy h -> used(new ModelListed(o.at(), o.model(), Reason.NOT_VERIFIED));
            case Degraded d -> used(passed(d, Check.MODEL, o.at()));
            // Before /health passed there is no model to list: a result of an earlier phase.
            case Starting s -> ignored(current, Ignored.STALE);
            case Down d -> ignored(current, Ignored.STALE);
            case Listening l -> ignored(current, Ignored.STALE);
            default -> used(current);
        };
    }

    /** A generation succeeded: the light check ({@code GENERATION}) or a client's request ({@code TRAFFIC}). */
    private static Step generated(EngineState current, Instant at, Check check) {
        return switch (current) {
            case Ready r -> used(current);
            case Degraded d -> used(passed(d, check, at));
            // Generation checks and client traffic reach an engine that serves only: this came after it stopped.
            default -> ignored(current, Ignored.STALE);
        };
    }

    /** A degraded engine whose {@code check} passed: that check's failures end; none left is ready again. */
    private static EngineState passed(Degraded degraded, Check check, Instant at) {
        if (!degraded.failing().containsKey(check)) {
            return degraded;
        }
        Map<Check, Degraded.Failing> left = new EnumMap<>(Check.class);
        left.putAll(degraded.failing());
        left.remove(check);
        return left.isEmpty()
                ? new Ready(at, degraded.model())
                : new Degraded(degraded.since(), degraded.model(), left);
    }

    private Step checkFailed(EngineState current, Observation.CheckFailed o) {
        if ((o.check() == Check.GENERATION || o.check() == Check.TRAFFIC) && !current.acceptsTraffic()) {
            return ignored(current, Ignored.STALE);
        }
        return switch (current) {
            case Starting s -> used(new Listening(o.at(), o.reason(), o.detail()));
            case Down d -> used(new Listening(o.at(), o.reason(), o.detail()));
            case Listening l -> used(new Listening(l.since(), o.reason(), o.detail()));
            case Healthy h
            when o.reason() == Reason.MODEL_NOT_LISTED -> used(new Healthy(h.since(), o.reason(), o.detail()));
            case Healthy h -> used(new Listening(o.at(), o.reason(), o.detail()));
            case ModelListed m -> used(new Listening(o.at(), o.reason(), o.detail()));
            case Verifying v -> used(new Listening(o.at(), o.reason(), o.detail()));
            case Held h -> used(new Listening(o.at(), o.reason(), o.detail()));
            case Ready r -> used(failed(r.model(), null, Map.of(), o.check(), o.at(), o.reason(), o.detail()));
            case Degraded d ->
                used(failed(d.model(), d.since(), d.failing(), o.check(), o.at(), o.reason(), o.detail()));
            case NotReady n when n.latched() -> ignored(n, Ignored.LATCHED);
            case NotReady n -> used(new NotReady(n.since(), n.model(), 0, o.reason(), o.detail()));
            case VerificationFailed f when f.latched() -> ignored(f, Ignored.LATCHED);
            case VerificationFailed f -> used(new Listening(o.at(), o.reason(), o.detail()));
            case ShuttingDown s -> ignored(s, Ignored.SHUT_DOWN);
            case Sleeping s -> ignored(s, Ignored.ASLEEP);
        };
    }

    private Step verified(EngineState current, Observation.Verified o) {
        return switch (current) {
            case ModelListed m -> used(firstSuccess(m.model(), o));
            case VerificationFailed f when !f.latched() -> used(firstSuccess(f.model(), o));
            case VerificationFailed f -> ignored(f, Ignored.LATCHED);
            case Verifying v ->
                used(
                        v.successes() + 1 >= successThreshold
                                ? new Ready(o.at(), v.model())
                                : new Verifying(v.since(), v.model(), v.successes() + 1, Reason.NOT_VERIFIED));
            case Degraded d -> used(new Ready(o.at(), d.model()));
            case NotReady n when n.latched() -> ignored(n, Ignored.LATCHED);
            case NotReady n ->
                used(
                        n.successes() + 1 >= successThreshold
                                ? new Ready(o.at(), n.model())
                                : new NotReady(
                                        n.since(), n.model(), n.successes() + 1, Reason.NOT_VERIFIED, "recovering"));
            // Verified once already: the hold decides whether it serves now.
            case Held h -> used(new Ready(o.at(), h.model()));
            case Ready r -> used(r);
            // A stale verification (the engine went down or restarted meanwhile) changes nothing.
            default -> ignored(current, Ignored.STALE);
        };
    }

    /**
     * The operator accepted the model: a latched canary mismatch is no longer latched (verified again, it serves); any
     * other state is left as it is.
     */
    private static EngineState accepted(EngineState current, Observation.ModelAccepted o) {
        return switch (current) {
            case NotReady n
            when n.latched() && n.cause() == Reason.CANARY_MISMATCH ->
                new NotReady(n.since(), n.model(), 0, n.cause(), o.detail(), false);
            case VerificationFailed f
            when f.latched() && f.cause() == Reason.CANARY_MISMATCH ->
                new VerificationFailed(f.since(), f.model(), f.cause(), o.detail(), false, f.failures());
            default -> current;
        };
    }

    private EngineState firstSuccess(String model, Observation.Verified o) {
        return successThreshold <= 1 ? new Ready(o.at(), model) : new Verifying(o.at(), model, 1, Reason.NOT_VERIFIED);
    }

    private Step verificationFailed(EngineState current, Observation.VerificationFailed o) {
        String model = modelOf(current);
        if (model == null) {
            // Verification only runs once the model is listed: a stale result changes nothing.
            return ignored(current, Ignored.STALE);
        }
        if (o.latched()) {
            return latched(current, model, o);
        }
        return switch (current) {
            case NotReady n when n.latched() -> ignored(n, Ignored.LATCHED);
            case Ready r -> used(failed(model, null, Map.of(), Check.VERIFICATION, o.at(), o.reason(), o.detail()));
            case Degraded d ->
                used(failed(model, d.since(), d.failing(), Check.VERIFICATION, o.at(), o.reason(), o.detail()));
            case NotReady n -> used(new NotReady(n.since(), model, 0, sameFault(n.cause(), o.reason()), o.detail()));
            case VerificationFailed f when f.latched() -> ignored(f, Ignored.LATCHED);
            case VerificationFailed f ->
                used(new VerificationFailed(
                        f.cause() == o.reason() ? f.since() : o.at(),
                        model,
                        o.reason(),
                        o.detail(),
                        false,
                        f.failures() + 1));
            default -> used(new VerificationFailed(o.at(), model, o.reason(), o.detail(), false, 1));
        };
    }

    /**
     * One fault, one word: an engine its light checks took out keeps their reason while its heavy probes fail the same
     * way (a generation that fails is {@code generation_failed} whether the light check or the representative probe
     * met its error event; a hang stays {@code generation_timed_out}); another failure says its own.
     *
     * @param out the reason the engine is out for
     * @param failed the reason a heavy probe failed for
     */
    static Reason sameFault(Reason out, Reason failed) {
        return lightCheckWord(failed) == out ? out : failed;
    }

    /** What the light generation check calls a failure a heavy probe calls {@code heavy}, or null: none of its own. */
    static @Nullable Reason lightCheckWord(Reason heavy) {
        return switch (heavy) {
            case TIMED_OUT -> Reason.GENERATION_TIMED_OUT;
            case STALLED -> Reason.GENERATION_STALLED;
            case ERROR_EVENT,
                    HTTP_STATUS,
                    CONNECTION_RESET,
                    MALFORMED_RESPONSE,
                    TRUNCATED_STREAM,
                    RESPONSE_TOO_LARGE,
                    COMPLETION_TOKENS_MISMATCH,
                    UNEXPECTED_FINISH_REASON,
                    IO_ERROR -> Reason.GENERATION_FAILED;
            default -> null;
        };
    }

    /**
     * A latched failure: {@link NotReady} when this engine start had been ready (it was serving, then failed its
     * canary), {@link VerificationFailed} when it never was; either holds until the engine restarts.
     */
    private static Step latched(EngineState current, String model, Observation.VerificationFailed o) {
        return used(
                switch (current) {
                    case NotReady n when n.latched() && n.cause() == o.reason() -> n;
                    case Ready r -> new NotReady(o.at(), model, 0, o.reason(), o.detail(), true);
                    case Degraded d -> new NotReady(o.at(), model, 0, o.reason(), o.detail(), true);
                    case NotReady n -> new NotReady(o.at(), model, 0, o.reason(), o.detail(), true);
                    case VerificationFailed f
                    when f.latched() && f.cause() == o.reason() ->
                        new VerificationFailed(f.since(), model, o.reason(), o.detail(), true, f.failures() + 1);
                    default -> new VerificationFailed(o.at(), model, o.reason(), o.detail(), true, 1);
                });
    }

    /**
     * One more failure of {@code check} on an engine that serves: at {@code failureThreshold} failures in a row, over
     * all failing checks, it is out.
     */
    private EngineState failed(
            String model,
            @Nullable Instant degradedSince,
            Map<Check, Degraded.Failing> failing,
            Check check,
            Instant at,
            Reason reason,
            String detail) {
        Map<Check, Degraded.Failing> now = new EnumMap<>(Check.class);
        now.putAll(failing);
        Degraded.Failing before = now.get(check);
        now.put(check, new Degraded.Failing(before == null ? 1 : before.count() + 1, reason, detail, at));
        int failures = now.values().stream().mapToInt(Degraded.Failing::count).sum();
        if (failures >= failureThreshold) {
            return new NotReady(at, model, 0, reason, detail);
        }
        return new Degraded(degradedSince == null ? at : degradedSince, model, now);
    }

    private static @Nullable String modelOf(EngineState state) {
        return switch (state) {
            case ModelListed m -> m.model();
            case Verifying v -> v.model();
            case Ready r -> r.model();
            case Degraded d -> d.model();
            case NotReady n -> n.model();
            case VerificationFailed f -> f.model();
            case Held h -> h.model();
            default -> null;
        };
    }
}
