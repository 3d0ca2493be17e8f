package dev.readygate.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

@ExtendWith(OutputCaptureExtension.class)
class EngineStateMachineTests {

    final Instant t0 = Instant.parse("2026-11-30T12:00:00Z");
    final List<EngineStateChanged> events = new ArrayList<>();
    final EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 2), t0, events::add);

    /**
     * The probe loop and the engine log apply observations from two threads: every listener must see the changes in
     * the order they were applied, or a listener folding them (the restart timeline) loses a start. Here the probe
     * loop's "port closed" is being published when the log's "new process" header is applied on another thread.
     */
    @Test
    void changesAppliedFromTwoThreadsReachEveryListenerInTheOrderTheyWereApplied() throws Exception {
        List<EngineStateChanged> first = new CopyOnWriteArrayList<>();
        List<EngineStateChanged> second = new CopyOnWriteArrayList<>();
        AtomicReference<EngineStateMachine> holder = new AtomicReference<>();
        AtomicReference<Thread> logThread = new AtomicReference<>();
        EngineStateMachine racing = new EngineStateMachine(new ReadinessRules(1, 2), t0, change -> {
            first.add(change);
            if (change.cause() instanceof Observation.Unreachable) {
                Thread log = new Thread(() -> holder.get()
                        .apply(new Observation.ProcessStarted(t0.plusSeconds(2), t0.plusSeconds(2), "s1", false, "")));
                logThread.set(log);
                log.start();
                // Until the other thread's change went out, or it waits for this one to be published.
                while (log.getState() != Thread.State.TERMINATED && log.getState() != Thread.State.BLOCKED) {
                    Thread.onSpinWait();
                }
            }
            second.add(change);
        });
        holder.set(racing);
        racing.apply(new Observation.HealthOk(t0));
        racing.apply(new Observation.Unreachable(t0.plusSeconds(1), Reason.ENGINE_DOWN, "refused"));
        logThread.get().join();

        for (List<EngineStateChanged> seen : List.of(first, second)) {
            assertThat(seen)
                    .extracting(change -> change.cause().getClass().getSimpleName())
                    .containsExactly("HealthOk", "Unreachable", "ProcessStarted");
        }
        assertThat(second.get(1).ended()).isNotNull();
        assertThat(second.get(2).startBegan()).isTrue();
    }

    @Test
    void currentBeforeAnyObservationIsStarting() {
        assertThat(machine.current()).isEqualTo(new EngineState.Starting(t0));
    }

    @Test
    void applyPublishesChangesOfKindOnly(CapturedOutput output) {
        machine.apply(new Observation.HealthOk(t0.plusSeconds(1)));
        machine.apply(new Observation.HealthOk(t0.plusSeconds(2)));
        machine.apply(new Observation.ModelListed(t0.plusSeconds(3), "m"));
        machine.apply(new Observation.Verified(t0.plusSeconds(4), "ok"));
        assertThat(events)
                .extracting(event -> event.current().kind())
                .containsExactly(EngineState.Kind.HEALTHY, EngineState.Kind.MODEL_LISTED, EngineState.Kind.READY);
        assertThat(events.getLast().previous().kind()).isEqualTo(EngineState.Kind.MODEL_LISTED);
        assertThat(output).contains("Engine state changed from MODEL_LISTED to READY");
    }

    @Test
    void applyPublishesAChangeOfReasonWithinTheSameKind() {
        machine.apply(new Observation.Unreachable(t0, Reason.ENGINE_DOWN, "refused"));
        machine.apply(new Observation.EngineDead(t0.plusSeconds(1), "503"));
        assertThat(events)
                .extracting(event -> event.current().reason())
                .containsExactly(Reason.ENGINE_DOWN, Reason.ENGINE_DEAD);
    }

    @Test
    void degradationIsLoggedWithTheLastFailure(CapturedOutput output) {
        machine.apply(new Observation.HealthOk(t0));
        machine.apply(new Observation.ModelListed(t0, "m"));
        machine.apply(new Observation.Verified(t0, "ok"));
        machine.apply(new Observation.VerificationFailed(t0, Reason.TIMED_OUT, "no answer in 30s", false));
        assertThat(output)
                .contains("Engine state changed from READY to DEGRADED after 1 consecutive failure(s) "
                        + "(last: timed_out: no answer in 30s)");
    }

    @Test
    void aChangeSaysWhetherAStartBeganOrEnded() {
        AtomicInteger starts = new AtomicInteger();
        EngineStateMachine stamped = new EngineStateMachine(
                new ReadinessRules(1, 2), t0, events::add, () -> "start-" + starts.incrementAndGet());
        stamped.apply(new Observation.Unreachable(t0, Reason.ENGINE_DOWN, "refused"));
        stamped.apply(new Observation.HealthOk(t0.plusSeconds(1)));
        stamped.apply(
                new Observation.Restarted(t0.plusSeconds(5), "process_start_time_seconds changed", t0.plusSeconds(4)));
        stamped.apply(new Observation.Unreachable(t0.plusSeconds(9), Reason.ENGINE_DOWN, "refused"));

        assertThat(events).extracting(EngineStateChanged::startBegan).containsExactly(false, true, true, false);
        assertThat(events)
                .extracting(
                        change -> change.ended() == null ? null : change.ended().id())
                .containsExactly(null, null, "start-1", "start-2");
        assertThat(events.get(1).start()).isEqualTo(new EngineStart("start-1", t0, StartSource.OBSERVED_DOWN, false));
        assertThat(stamped.start()).isNull();
    }

    @Test
    void aStartThatBeginsInARestartLoopIsHeldAndTheLoopBacksOff() {
        List<ObservationIgnored> ignored = new ArrayList<>();
        AtomicInteger starts = new AtomicInteger();
        EngineStateMachine looping = new EngineStateMachine(
                new ReadinessRules(1, 2),
                new RestartLoop(
                        java.time.Duration.ofMinutes(10),
                        3,
                        java.time.Duration.ofSeconds(60),
                        java.time.Duration.ofMinutes(10)),
                t0,
                events::add,
                ignored::add,
                () -> "start-" + starts.incrementAndGet());
        List<EngineState.Kind> verdicts = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            Instant up = t0.plusSeconds(10L * round);
            looping.apply(new Observation.Unreachable(up, Reason.ENGINE_DOWN, "refused"));
            looping.apply(new Observation.HealthOk(up.plusSeconds(1)));
            looping.apply(new Observation.ModelListed(up.plusSeconds(1), "m"));
            verdicts.add(looping.apply(new Observation.Verified(up.plusSeconds(2), "ok"))
                    .kind());
        }
        // The second start (the first lived 10 s, less than the hold) is held; the third makes the loop.
        assertThat(verdicts)
                .containsExactly(
                        EngineState.Kind.READY, EngineState.Kind.HELD, EngineState.Kind.HELD, EngineState.Kind.HELD);
        assertThat(looping.restartLoop().looping(t0.plusSeconds(40))).isTrue();
        // The fourth start (began at 31 s) is held twice as long as the third.
        assertThat(looping.heldUntil()).isEqualTo(t0.plusSeconds(31 + 120));
        assertThat(looping.apply(new Observation.Verified(t0.plusSeconds(150), "ok"))
                        .kind())
                .isEqualTo(EngineState.Kind.HELD);
        assertThat(looping.apply(new Observation.Verified(t0.plusSeconds(151), "ok"))
                        .kind())
                .isEqualTo(EngineState.Kind.READY);
        assertThat(ignored).isEmpty();
    }

    @Test
    void anObservationMadeForAnEndedStartOrIgnoredByTheRulesIsPublishedAsIgnored() {
        List<ObservationIgnored> ignored = new ArrayList<>();
        EngineStateMachine counted = new EngineStateMachine(
                new ReadinessRules(1, 2), EngineStateMachine.NO_LOOP, t0, events::add, ignored::add, () -> "s1");
        counted.apply(new Observation.HealthOk(t0));
        Observation late = new Observation.Verified(t0.plusSeconds(1), "ok");
        assertThat(counted.apply(late, "an-older-start").kind()).isEqualTo(EngineState.Kind.HEALTHY);
        counted.apply(late, "s1");
        assertThat(ignored)
                .extracting(ObservationIgnored::observationKind, ObservationIgnored::why)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("verified", ReadinessRules.Ignored.STALE),
                        org.assertj.core.groups.Tuple.tuple("verified", ReadinessRules.Ignored.STALE));
    }
}
