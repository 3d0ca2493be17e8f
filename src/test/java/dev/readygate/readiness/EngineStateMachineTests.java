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

    /**
     * Resilience4j's way: the state is swapped, then published outside any lock. A listener that takes its time (here,
     * until another thread applied an observation) holds nobody up: the other thread's apply swaps at once and returns,
     * and its change goes out after the one in progress.
     */
    @Test
    void anotherThreadAppliesWithoutWaitingForTheListenersOfAChangeInProgress() throws Exception {
        List<EngineStateChanged> seen = new CopyOnWriteArrayList<>();
        AtomicReference<EngineStateMachine> holder = new AtomicReference<>();
        AtomicReference<Thread.State> otherThread = new AtomicReference<>();
        AtomicReference<EngineState> appliedMeanwhile = new AtomicReference<>();
        AtomicReference<EngineState> currentMeanwhile = new AtomicReference<>();
        AtomicReference<Thread> other = new AtomicReference<>();
        EngineStateMachine slow = new EngineStateMachine(new ReadinessRules(1, 2), t0, change -> {
            if (change.cause() instanceof Observation.HealthOk) {
                Thread log = new Thread(() -> appliedMeanwhile.set(holder.get()
                        .apply(new Observation.Unreachable(t0.plusSeconds(1), Reason.ENGINE_DOWN, "refused"))));
                other.set(log);
                log.start();
                // Until the other thread's apply returned; one that waited for this listener would never return (a
                // thread seen BLOCKED for a moment may only be loading a class: one full CI run saw that).
                try {
                    log.join(10_000);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                otherThread.set(log.getState());
                currentMeanwhile.set(holder.get().current());
            }
            seen.add(change);
        });
        holder.set(slow);
        slow.apply(new Observation.HealthOk(t0));
        other.get().join();

        assertThat(otherThread).hasValue(Thread.State.TERMINATED);
        assertThat(appliedMeanwhile.get().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(currentMeanwhile.get().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(seen)
                .extracting(change -> change.current().kind())
                .containsExactly(EngineState.Kind.HEALTHY, EngineState.Kind.DOWN);
    }

    /**
     * Two threads racing, each swapping and then publishing: the listener still gets one unbroken story, each change
     * beginning where the one before it ended (the same kind and reason, the same start).
     */
    @Test
    void changesOfTwoRacingThreadsArePublishedAsOneUnbrokenStory() throws Exception {
        List<EngineStateChanged> seen = new ArrayList<>();
        AtomicInteger starts = new AtomicInteger();
        EngineStateMachine raced = new EngineStateMachine(
                new ReadinessRules(1, 1), t0, seen::add, () -> "start-" + starts.incrementAndGet());
        Thread probes = new Thread(() -> {
            for (int i = 0; i < 2000; i++) {
                raced.apply(new Observation.HealthOk(t0.plusSeconds(i)));
            }
        });
        Thread log = new Thread(() -> {
            for (int i = 0; i < 2000; i++) {
                raced.apply(new Observation.Unreachable(t0.plusSeconds(i), Reason.ENGINE_DOWN, "refused"));
            }
        });
        probes.start();
        log.start();
        probes.join();
        log.join();

        assertThat(seen).isNotEmpty();
        for (int i = 1; i < seen.size(); i++) {
            EngineStateChanged before = seen.get(i - 1);
            EngineStateChanged change = seen.get(i);
            assertThat(change.previous().kind())
                    .as("change %d", i)
                    .isEqualTo(before.current().kind());
            assertThat(change.previous().reason())
                    .as("change %d", i)
                    .isEqualTo(before.current().reason());
            assertThat(change.previousStart()).as("change %d", i).isEqualTo(before.start());
        }
        assertThat(seen.getLast().current().kind()).isEqualTo(raced.current().kind());
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
        EngineStateMachine looping = holdingSecondStarts(ignored::add);
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
    void wakesAreStartsOfTheirOwnNeverCountedTowardARestartLoopNorHeld() {
        EngineStateMachine machine = holdingSecondStarts();
        machine.apply(new Observation.HealthOk(t0.plusSeconds(1)));
        machine.apply(new Observation.ModelListed(t0.plusSeconds(1), "m"));
        assertThat(machine.apply(new Observation.Verified(t0.plusSeconds(2), "ok"))
                        .kind())
                .isEqualTo(EngineState.Kind.READY);
        EngineStart process = machine.start();
        List<EngineStart> wakes = new ArrayList<>();
        // Four sleeps and wakes within a minute: a model switcher's rhythm, no restart loop.
        for (int round = 0; round < 4; round++) {
            Instant asleep = t0.plusSeconds(10 + 10L * round);
            machine.apply(new Observation.Asleep(asleep, 1, "weights_offloaded"));
            assertThat(machine.start()).isNull();
            machine.apply(new Observation.Awake(asleep.plusSeconds(5), "awake"));
            assertThat(machine.apply(new Observation.Verified(asleep.plusSeconds(6), "ok"))
                            .kind())
                    .isEqualTo(EngineState.Kind.READY);
            wakes.add(machine.start());
        }
        assertThat(wakes)
                .allSatisfy(wake -> {
                    assertThat(wake.wake()).isTrue();
                    assertThat(wake.source()).isEqualTo(StartSource.WAKE);
                    assertThat(wake.slept().level()).isEqualTo(1);
                    assertThat(wake.slept().asleep()).isEqualTo(java.time.Duration.ofSeconds(5));
                })
                .doesNotHaveDuplicates()
                .doesNotContain(process);
        assertThat(machine.restartLoop().recent()).hasSize(1);
        assertThat(machine.heldUntil()).isNull();
        // The sleep ended each start and its wake began the next, each published.
        assertThat(events.stream().filter(EngineStateChanged::startBegan)).hasSize(5);
    }

    /**
     * Three starts in ten minutes make a loop, held 60 s and backed off up to ten minutes; a second start is held for
     * 60 s when the first lived less.
     */
    EngineStateMachine holdingSecondStarts() {
        return holdingSecondStarts(ignored -> {});
    }

    EngineStateMachine holdingSecondStarts(java.util.function.Consumer<ObservationIgnored> ignored) {
        AtomicInteger starts = new AtomicInteger();
        return new EngineStateMachine(
                new ReadinessRules(1, 2),
                new RestartLoop(
                        java.time.Duration.ofMinutes(10),
                        3,
                        java.time.Duration.ofSeconds(60),
                        java.time.Duration.ofMinutes(10)),
                t0,
                events::add,
                ignored,
                () -> "start-" + starts.incrementAndGet());
    }

    /** The engine serves at {@code at}, crashes a second later and answers again; the second start's verdict. */
    static EngineState.Kind crashAndStartAgain(EngineStateMachine machine, Instant at) {
        machine.apply(new Observation.ModelListed(at, "m"));
        assertThat(machine.apply(new Observation.Verified(at, "ok")).kind()).isEqualTo(EngineState.Kind.READY);
        machine.apply(new Observation.Unreachable(at.plusSeconds(1), Reason.ENGINE_DOWN, "refused"));
        machine.apply(new Observation.HealthOk(at.plusSeconds(2)));
        machine.apply(new Observation.ModelListed(at.plusSeconds(2), "m"));
        return machine.apply(new Observation.Verified(at.plusSeconds(3), "ok")).kind();
    }

    /**
     * Issue 24, item 5: readygate first saw the engine running (here its log's header, written 2 s before), it crashed a
     * second later and started again: the loop's second start, since the first lived 3 s by the engine's own word. It
     * was served (about 0.75 s in the benchmark) while a first seen start counted as of unknown age.
     */
    @Test
    void aRestartSoonAfterAFirstSeenStartTheLogDatesIsHeld() {
        EngineStateMachine machine = holdingSecondStarts();
        machine.apply(new Observation.ProcessStarted(t0, t0.minusSeconds(2), null, true, "header"));
        machine.apply(new Observation.HealthOk(t0));
        assertThat(machine.start().firstSeen()).isTrue();
        assertThat(crashAndStartAgain(machine, t0)).isEqualTo(EngineState.Kind.HELD);
        assertThat(machine.heldUntil()).isEqualTo(t0.plusSeconds(62));
    }

    /** Without evidence of its age, the first seen start counts from readygate's first look: the restart is held. */
    @Test
    void aRestartSoonAfterAFirstSeenStartOfUnknownAgeIsHeld() {
        EngineStateMachine machine = holdingSecondStarts();
        machine.apply(new Observation.HealthOk(t0));
        assertThat(machine.start().firstSeen()).isTrue();
        assertThat(crashAndStartAgain(machine, t0)).isEqualTo(EngineState.Kind.HELD);
    }

    /**
     * A single restart of an engine that had served for an hour before readygate first saw it, by its
     * {@code process_start_time_seconds} or its log: not held.
     */
    @Test
    void aRestartOfAFirstSeenStartThatTheEngineDatesAnHourBackIsNotHeld() {
        EngineStateMachine byMetrics = holdingSecondStarts();
        byMetrics.apply(new Observation.HealthOk(t0));
        byMetrics.firstSeenStartBegan(byMetrics.start().id(), t0.minusSeconds(3600));
        assertThat(crashAndStartAgain(byMetrics, t0)).isEqualTo(EngineState.Kind.READY);

        EngineStateMachine byLog = holdingSecondStarts();
        byLog.apply(new Observation.ProcessStarted(t0, t0.minusSeconds(3600), null, true, "header"));
        byLog.apply(new Observation.HealthOk(t0));
        assertThat(crashAndStartAgain(byLog, t0)).isEqualTo(EngineState.Kind.READY);

        // A start readygate saw begin is never dated again: its restart a few seconds later is held.
        EngineStateMachine seenBegin = holdingSecondStarts();
        seenBegin.apply(new Observation.Unreachable(t0, Reason.ENGINE_DOWN, "refused"));
        seenBegin.apply(new Observation.HealthOk(t0));
        seenBegin.firstSeenStartBegan(seenBegin.start().id(), t0.minusSeconds(3600));
        assertThat(crashAndStartAgain(seenBegin, t0)).isEqualTo(EngineState.Kind.HELD);
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
