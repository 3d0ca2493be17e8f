package dev.readygate.gateway;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Passive health from real traffic, as a pure fold over judged exchanges ({@link TrafficJudge.Verdict}), in the order
 * they ended: the engine failures of the current run (told to readiness one by one, whose rules decide when they take
 * the engine out, as for every check), and since when successful traffic proves the engine healthy (so the light checks
 * can be put off while traffic succeeds). A client's fault and a neutral outcome (busy, not judged) change nothing.
 *
 * <p>"In a row" with concurrent streams: exchanges are folded in the order they end, and a success ends a run of
 * failures only if it began after the run's latest failure ended. A stream that was admitted before a fault and still
 * finishes (a long answer already mostly generated) says nothing about the engine after the fault, so it cannot hide
 * the failures around it, nor prove the engine once it is verified again; a request sent after the latest failure and
 * served whole can. So a fault that fails every stream in flight takes the engine out at the third failure to be
 * judged, whatever the order the streams end in. A success proves the engine only while no failure is open, and a
 * generation success only ({@link TrafficJudge.Verdict#provesGeneration()}).
 */
public final class TrafficHealth {

    private TrafficHealth() {}

    /**
     * Where the fold stands.
     *
     * @param failures engine failures in the current run
     * @param lastFailure the latest failure of the run to end, or null
     * @param provenAt when the latest success that proves the engine generates ended, while no failure is open;
     *     null when none has or a failure came after it
     */
    public record State(
            int failures,
            TrafficJudge.@Nullable Verdict lastFailure,
            @Nullable Instant provenAt) {

        public State {
            if (failures < 0) {
                throw new IllegalArgumentException("failures must not be negative");
            }
        }
    }

    /** Nothing judged yet. */
    public static State initial() {
        return new State(0, null, null);
    }

    /** The state after {@code verdict}. */
    public static State next(State current, TrafficJudge.Verdict verdict) {
        return switch (verdict.outcome().group()) {
            case CLIENT_FAULT, NEUTRAL -> current;
            case SUCCESS -> succeeded(current, verdict);
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
        return new State(0, null, proven);
    }

    private static State failed(State current, TrafficJudge.Verdict verdict) {
        TrafficJudge.Verdict last = current.lastFailure();
        // The latest failure to end bounds which successes may end the run.
        TrafficJudge.Verdict latest = last != null && last.endedAt().isAfter(verdict.endedAt()) ? last : verdict;
        return new State(current.failures() + 1, latest, null);
    }
}
