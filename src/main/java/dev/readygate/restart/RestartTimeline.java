package dev.readygate.restart;

import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The timeline of the current engine start, as a pure fold: each engine state change and heavy probe report gives the
 * next timeline and the verdicts to record. A state change gives the start's phases (when the port listened,
 * {@code /health} passed, the model was listed, the engine was verified) and its outcome; a probe report gives the
 * representative and canary phases and a canary mismatch. No I/O and no clock (time comes in on the events), so it is
 * tested as a table, like {@code ReadinessRules}; recording a verdict (history, metrics, memory) happens elsewhere.
 *
 * <p>Verdicts: a start is judged ready when it is verified, not ready for now when a failure latches while its engine
 * runs (the verdict may change), and not ready for good when it ends without having been judged (the engine went away,
 * restarted, or readygate stops). A start that ends before its port ever answered (one the engine log began: vLLM
 * said it failed, or the next start's header came first) failed, unless readygate stopped meanwhile. A start is judged
 * for good once.
 * A start whose engine went away, or was replaced by a new process, is also {@link Verdict.Stopped stopped} (its work in
 * flight is lost); one that ends because readygate stops is not (the engine may well go on serving), nor one that
 * failed before it ever served.
 *
 * @param start the start in progress, or null
 * @param phases when each phase after {@code engine_start} was first reached
 * @param lastReason the reason of the start's latest state (null once ready)
 * @param canaryMismatch whether a canary of this start mismatched
 * @param judged whether the start was judged for good
 */
record RestartTimeline(
        @Nullable EngineStart start,
        Map<Phase, Instant> phases,
        @Nullable Reason lastReason,
        boolean canaryMismatch,
        boolean judged) {

    /** No start in progress. */
    public static final RestartTimeline NONE = new RestartTimeline(null, Map.of(), null, false, false);

    public RestartTimeline {
        phases = Map.copyOf(phases);
    }

    /** What a step of the fold asks to record. */
    public sealed interface Verdict {

        EngineStart start();

        /**
         * A start judged ready or not.
         *
         * @param phases when each phase was reached ({@code engine_start} is the record's to date)
         * @param outcome ready, or not
         * @param reason the last reason the start was not ready, null when ready
         * @param canaryMismatch whether its canary mismatched
         * @param completed false for a verdict that may still change: a latched failure while the engine runs
         */
        record Judged(
                EngineStart start,
                Map<Phase, Instant> phases,
                Outcome outcome,
                @Nullable Reason reason,
                boolean canaryMismatch,
                boolean completed)
                implements Verdict {

            public Judged {
                phases = Map.copyOf(phases);
            }

            /** Whether its engine was still up when judged: the log may hold lines the tail has not read yet. */
            public boolean engineUp() {
                return outcome == Outcome.READY || !completed;
            }
        }

        /** The start's canary mismatched, the first time. */
        record CanaryMismatched(EngineStart start) implements Verdict {}

        /**
         * The start's engine went away or was replaced by a new process.
         *
         * @param at when readygate saw it
         * @param how how it ended
         */
        record Stopped(EngineStart start, Instant at, Stop.How how) implements Verdict {}
    }

    /** A step of the fold: the next timeline, and what to record. */
    public record Step(RestartTimeline timeline, List<Verdict> verdicts) {

        public Step {
            verdicts = List.copyOf(verdicts);
        }
    }

    /** The timeline after an engine state change. */
    public Step next(EngineStateChanged change) {
        List<Verdict> verdicts = new ArrayList<>();
        RestartTimeline timeline = this;
        EngineStart ended = change.ended();
        if (ended != null && start != null && start.id().equals(ended.id())) {
            // The start is over: one not judged yet never became ready, or never even served.
            boolean neverServed = failedBeforeServing(change);
            if (neverServed) {
                Reason reason = change.cause() instanceof Observation.StartFailed ? Reason.START_FAILED : lastReason;
                timeline = timeline.judge(Outcome.FAILED, reason, true, verdicts);
            } else {
                timeline = timeline.judge(Outcome.NOT_READY, true, verdicts);
            }
            // A start that never served had no work in flight to lose.
            if (!neverServed && change.current() instanceof EngineState.Sleeping) {
                verdicts.add(new Verdict.Stopped(ended, change.current().since(), Stop.How.SLEPT));
            } else if (!neverServed && change.current() instanceof EngineState.Down) {
                verdicts.add(new Verdict.Stopped(ended, change.current().since(), Stop.How.WENT_AWAY));
            } else if (!neverServed && change.start() != null) {
                verdicts.add(new Verdict.Stopped(ended, change.current().since(), Stop.How.REPLACED));
            }
            timeline = NONE;
        }
        EngineStart current = change.start();
        if (current == null) {
            return new Step(NONE, verdicts);
        }
        EngineState state = change.current();
        Instant at = state.since();
        boolean answers = !(state instanceof EngineState.Down || state instanceof EngineState.Starting);
        if (change.startBegan()) {
            Map<Phase, Instant> phases = new EnumMap<>(Phase.class);
            if (answers) {
                phases.put(Phase.PORT_LISTENING, at);
            }
            if (answers && ended != null && !(state instanceof EngineState.Listening)) {
                // A new process nobody saw go away: it answers /health already (unless it is still loading).
                phases.put(Phase.HEALTH_OK, at);
                return new Step(new RestartTimeline(current, phases, null, false, false), verdicts);
            }
            // A start the log began is loading (its port opens later), or the first start answers.
            timeline = new RestartTimeline(current, phases, null, false, false);
        }
        if (timeline.start == null) {
            return new Step(timeline, verdicts);
        }
        timeline = timeline.withReason(state.reason());
        if (answers) {
            timeline = timeline.reached(Phase.PORT_LISTENING, at);
        }
        switch (state) {
            case EngineState.Healthy h -> timeline = timeline.reached(Phase.HEALTH_OK, at);
            case EngineState.ModelListed m ->
                timeline = timeline.reached(Phase.HEALTH_OK, at).reached(Phase.MODEL_LISTED, at);
            case EngineState.Ready r ->
                timeline = timeline.reached(Phase.READY, at).judge(Outcome.READY, true, verdicts);
            case EngineState.VerificationFailed f
            when f.latched() -> timeline = timeline.judge(Outcome.NOT_READY, false, verdicts);
            default -> {}
        }
        return new Step(timeline, verdicts);
    }

    /**
     * Whether the start this change ends died before serving: vLLM said so, or its port never answered (the log began
     * it) and it ended otherwise than by readygate stopping.
     */
    private boolean failedBeforeServing(EngineStateChanged change) {
        return change.cause() instanceof Observation.StartFailed
                || !phases.containsKey(Phase.PORT_LISTENING) && !(change.current() instanceof EngineState.ShuttingDown);
    }

    /** The timeline after a probe report of the current start. */
    public Step next(ProbeReport report) {
        if (start == null) {
            return new Step(this, List.of());
        }
        if (report.passed()) {
            return switch (report.kind()) {
                case REPRESENTATIVE -> new Step(reached(Phase.REPRESENTATIVE_OK, report.at()), List.of());
                case CANARY -> new Step(reached(Phase.CANARY_OK, report.at()), List.of());
                // A light check of a start that serves already: no phase of its start.
                case GENERATION -> new Step(this, List.of());
            };
        }
        if (report.reason() == Reason.CANARY_MISMATCH && !canaryMismatch) {
            return new Step(
                    new RestartTimeline(start, phases, lastReason, true, judged),
                    List.of(new Verdict.CanaryMismatched(start)));
        }
        return new Step(this, List.of());
    }

    private RestartTimeline reached(Phase phase, Instant at) {
        if (phases.containsKey(phase)) {
            return this;
        }
        Map<Phase, Instant> reached = new EnumMap<>(Phase.class);
        reached.putAll(phases);
        reached.put(phase, at);
        return new RestartTimeline(start, reached, lastReason, canaryMismatch, judged);
    }

    private RestartTimeline withReason(@Nullable Reason reason) {
        return new RestartTimeline(start, phases, reason, canaryMismatch, judged);
    }

    private RestartTimeline judge(Outcome outcome, boolean completed, List<Verdict> verdicts) {
        return judge(outcome, outcome == Outcome.READY ? null : lastReason, completed, verdicts);
    }

    private RestartTimeline judge(Outcome outcome, @Nullable Reason reason, boolean completed, List<Verdict> verdicts) {
        if (judged || start == null) {
            return this;
        }
        verdicts.add(new Verdict.Judged(start, phases, outcome, reason, canaryMismatch, completed));
        return new RestartTimeline(start, phases, lastReason, canaryMismatch, completed);
    }
}
