package dev.readygate.gateway;

import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import dev.readygate.readiness.StartLedger;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Passive health from client traffic (gateway mode). Each proxied exchange, judged ({@link TrafficJudge}), is folded
 * with the others of its engine start ({@link TrafficHealth}; the fold's state is the {@link #HEALTH} slot of the
 * start's sheet in the ledger), and what the fold counts is told to readiness as the {@link Check#TRAFFIC} check:
 * each engine failure it counts as a {@code CheckFailed} (a refused connection as {@code Unreachable}, as a refused
 * probe is), each success that ends a run of failures as {@code Served}. The rules count them as they count every
 * check ({@code failure-threshold} in a row take a ready engine out), so a GPU fault under traffic takes the engine out
 * after at most that many failed client requests. A success that proves the engine generates goes to the probes'
 * facts: the light checks are put off while traffic proves the engine.
 *
 * <p>A client's mistake and a busy engine change nothing. The fold does not decide when the engine is out: the rules
 * do, and ignore a failure told while the engine already serves no traffic (a stream cut by the fault that took it
 * out); once it is verified again, they count afresh what the fold tells next.
 */
public final class TrafficReadiness {

    /** The traffic fold of a start. */
    static final StartLedger.Slot<TrafficHealth.State> HEALTH =
            StartLedger.Slot.of("traffic health", id -> TrafficHealth.initial());

    private final EngineStateMachine machine;
    private final EngineFactsHolder facts;

    public TrafficReadiness(EngineStateMachine machine, EngineFactsHolder facts) {
        this.machine = machine;
        this.facts = facts;
    }

    /** A client request of the start {@code startId} ended, judged: folded, and what it tells readiness applied. */
    public void judged(String startId, TrafficJudge.Verdict verdict) {
        TrafficHealth.State[] before = new TrafficHealth.State[1];
        TrafficHealth.State after = machine.ledger().update(startId, HEALTH, state -> {
            before[0] = state;
            return TrafficHealth.next(state, verdict);
        });
        Observation told = told(Objects.requireNonNull(before[0]), after, verdict);
        if (told != null) {
            machine.apply(told, startId);
        }
        if (!Objects.equals(before[0].provenAt(), after.provenAt())) {
            facts.served(startId, after.provenAt());
        }
    }

    /** What one step of the fold tells readiness: a failure it counted, a success that ended a run, or nothing. */
    static @Nullable Observation told(
            TrafficHealth.State before, TrafficHealth.State after, TrafficJudge.Verdict verdict) {
        if (after.failures() > before.failures()) {
            if (verdict.outcome() == TrafficOutcome.REFUSED) {
                return new Observation.Unreachable(verdict.endedAt(), Reason.ENGINE_DOWN, verdict.detail());
            }
            Reason reason = verdict.outcome().reason();
            return new Observation.CheckFailed(
                    verdict.endedAt(),
                    Check.TRAFFIC,
                    reason == null ? Reason.HTTP_STATUS : reason,
                    "client request: " + verdict.detail());
        }
        if (before.failures() > 0 && after.failures() == 0) {
            return new Observation.Served(verdict.endedAt(), "client request served whole: " + verdict.detail());
        }
        return null;
    }
}
