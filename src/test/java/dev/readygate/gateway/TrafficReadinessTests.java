package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Passive health from client traffic, against the real state machine and rules: a GPU fault under traffic takes a
 * ready engine out after three failed client requests, a refused connection at once; a client's mistake never; a
 * request served whole after the failures ends them; traffic that proves generation reaches the probes' facts.
 */
class TrafficReadinessTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    final AtomicInteger starts = new AtomicInteger();
    final EngineStateMachine machine =
            new EngineStateMachine(new ReadinessRules(1, 3), T0, change -> {}, () -> "s" + starts.incrementAndGet());
    final EngineFactsHolder facts = new EngineFactsHolder(machine);
    final TrafficReadiness traffic = new TrafficReadiness(machine, facts);
    String start;

    static Instant t(int second) {
        return T0.plusSeconds(second);
    }

    @BeforeEach
    void aReadyEngine() {
        machine.apply(new Observation.HealthOk(t(1)));
        machine.apply(new Observation.ModelListed(t(1), "m"));
        machine.apply(new Observation.Verified(t(2), "ok"));
        start = machine.start().id();
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
    }

    static TrafficJudge.Verdict verdict(TrafficOutcome outcome, int started, int ended) {
        return new TrafficJudge.Verdict(
                outcome, outcome.name(), t(started), t(ended), outcome == TrafficOutcome.SUCCESS);
    }

    @Test
    void aGpuFaultUnderTrafficTakesTheEngineOutAtTheThirdFailedClientRequest() {
        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 10, 11));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DEGRADED);
        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 10, 12));
        assertThat(machine.current().acceptsTraffic()).isTrue();

        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 10, 13));

        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.NOT_READY);
        assertThat(machine.current().reason()).isEqualTo(Reason.ERROR_EVENT);
    }

    @Test
    void aRefusedConnectionTakesTheEngineOutAtOnceAsARefusedProbeDoes() {
        traffic.judged(start, verdict(TrafficOutcome.REFUSED, 10, 10));

        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(machine.current().reason()).isEqualTo(Reason.ENGINE_DOWN);
    }

    @Test
    void aClientsMistakeOrABusyEngineChangesNothing() {
        for (TrafficOutcome outcome : new TrafficOutcome[] {
            TrafficOutcome.CLIENT_ERROR,
            TrafficOutcome.CLIENT_ERROR_EVENT,
            TrafficOutcome.CLIENT_CANCELLED,
            TrafficOutcome.BUSY,
            TrafficOutcome.NOT_JUDGED
        }) {
            for (int i = 0; i < 5; i++) {
                traffic.judged(start, verdict(outcome, 10 + i, 11 + i));
            }
        }

        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
    }

    @Test
    void aRequestServedWholeThatBeganAfterTheFailuresEndsThem() {
        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 10, 11));
        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 10, 12));
        // Admitted before the failures: it may have been served before the fault.
        traffic.judged(start, verdict(TrafficOutcome.SUCCESS, 9, 13));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DEGRADED);

        traffic.judged(start, verdict(TrafficOutcome.SUCCESS, 13, 14));

        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
        // The run ended: two more failures do not take the engine out.
        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 15, 16));
        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 15, 17));
        assertThat(machine.current().acceptsTraffic()).isTrue();
    }

    @Test
    void trafficThatProvesGenerationReachesTheFactsAndAFailureWithdrawsIt() {
        traffic.judged(start, verdict(TrafficOutcome.SUCCESS, 10, 11));
        assertThat(facts.of(start).servedAt()).isEqualTo(t(11));

        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 12, 13));

        assertThat(facts.of(start).servedAt()).isNull();
    }

    @Test
    void afterTheEngineIsVerifiedAgainTheFailuresAreCountedAfresh() {
        for (int i = 0; i < 3; i++) {
            traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 10, 11 + i));
        }
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.NOT_READY);
        machine.apply(new Observation.Verified(t(20), "ok"));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);

        traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 21, 22));

        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DEGRADED);
        assertThat(((EngineState.Degraded) machine.current()).failing()).containsKey(Check.TRAFFIC);
    }

    @Test
    void afterTheEngineIsVerifiedAgainAStreamAdmittedBeforeTheFaultProvesNothingOneSentAfterItDoes() {
        for (int i = 0; i < 3; i++) {
            traffic.judged(start, verdict(TrafficOutcome.ERROR_EVENT, 10, 11 + i));
        }
        machine.apply(new Observation.Verified(t(20), "ok"));

        // Admitted at 9, before the fault, and still served whole: it says nothing of the engine after the fault.
        traffic.judged(start, verdict(TrafficOutcome.SUCCESS, 9, 21));
        assertThat(facts.of(start).servedAt()).isNull();

        traffic.judged(start, verdict(TrafficOutcome.SUCCESS, 21, 22));
        assertThat(facts.of(start).servedAt()).isEqualTo(t(22));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
    }

    @Test
    void aVerdictOfAStartThatEndedChangesNothingOfTheNextOne() {
        String ended = start;
        machine.apply(new Observation.Unreachable(t(30), Reason.ENGINE_DOWN, "refused"));
        aReadyEngine();

        for (int i = 0; i < 3; i++) {
            traffic.judged(ended, verdict(TrafficOutcome.ERROR_EVENT, 20, 31 + i));
        }

        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
    }
}
