package dev.readygate.gateway;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Passive health from real traffic, as a pure fold over judged exchanges ({@link TrafficJudge.Verdict}), in the order
 * they ended: whether the engine must be taken out, and since when successful traffic proves it healthy (so the light
 * checks can be put off while traffic succeeds).
 *
 * <p>Rules: {@code failureThreshold} engine failures in a row take the engine out (the goal: a GPU fault under traffic
 * takes it out after at most 3 failed client requests); a refused connection takes it out at once, as a refused probe
 * does. A client's fault and a neutral outcome (busy, not judged) change nothing. Once out, it stays out until the
 * caller starts over from {@link #initial()} (the engine verified again).
 *
 * <p>"In a row" with concurrent streams: exchanges are folded in the order they end, and a success ends a run of
 * failures only if it began after the run's latest failure ended. A stream that was admitted before a fault and still
 * finishes (a long answer already mostly generated) says nothing about the engine after the fault, so it cannot hide
 * the failures around it; a request sent after the latest failure and served whole can. So a fault that fails every
 * stream in flight takes the engine out at the third failure to be judged, whatever the order the streams end in.
 * A success proves the engine only while no failure is open, and a generation success only
 * ({@link TrafficJudge.Verdict#provesGeneration()}).
 *
 * @param failureThreshold engine failures in a row that take the engine out
 */
public record TrafficHealth(int failureThreshold) {

    public TrafficHealth {
        if (failureThreshold < 1) {
            throw new IllegalArgumentException("failureThreshold must be at least 1");
        }
    }

    /**
     * Where the fold stands.
     *
     * @param failures engine failures in the current run
     * @param lastFailure the latest failure of the run (or the one that took the engine out), or null
     * @param provenAt when the latest success that proves the engine generates ended, while no failure is open;
     *     null when none has or a failure came after it
     * @param out whether traffic took the engine out
     */
    public record State(
            int failures,
            TrafficJudge.@Nullable Verdict lastFailure,
            @Nullable Instant provenAt,
            boolean out) {

        public State {
            if (failures < 0) {
                throw new IllegalArgumentException("failures must not be negative");
            }
        }
    }

    /**
     * The state after a verdict, and whether this verdict is the one that takes the engine out.
     *
     * @param state the next state
     * @param takeOut true exactly once: on the verdict that takes the engine out ({@link State#lastFailure()} says why)
     */
    public record Step(State state, boolean takeOut) {}

    /** Nothing judged yet (or the engine verified again). */
    public static State initial() {
        return new State(0, null, null, false);
    }

    /** The state after {@code verdict}. */
    public Step next(State current, TrafficJudge.Verdict verdict) {
        if (current.out()) {
            return new Step(current, false);
        }
        return switch (verdict.outcome().group()) {
            case CLIENT_FAULT, NEUTRAL -> new Step(current, false);
            case SUCCESS -> new Step(succeeded(current, verdict), false);
            case ENGINE_FAILURE -> failed(current, verdict);
        };
    }

    private static State succeeded(State current, TrafficJudge.Verdict verdict) {
        TrafficJudge.Verdict last = current.lastFailure();
        if (current.failures() > 0 && last != null && verdict.startedAt().isBefore(last.endedAt())) {
            // Admitted before the latest failure: it may have been served before the fault.
            return current;
        }
        Instant proven = current.provenAt();
        if (verdict.provesGeneration() && (proven == null || verdict.endedAt().isAfter(proven))) {
            proven = verdict.endedAt();
        }
        return new State(0, null, proven, false);
    }

    private Step failed(State current, TrafficJudge.Verdict verdict) {
        TrafficJudge.Verdict last = current.lastFailure();
        // The latest failure to end bounds which successes may end the run.
        TrafficJudge.Verdict latest = last != null && last.endedAt().isAfter(verdict.endedAt()) ? last : verdict;
        int failures = current.failures() + 1;
        boolean out = verdict.outcome() == TrafficOutcome.REFUSED || failures >= failureThreshold;
        return new Step(new State(failures, out ? verdict : latest, null, out), out);
    }
}
