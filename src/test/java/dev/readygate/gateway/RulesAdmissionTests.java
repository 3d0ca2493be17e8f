package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.TestRecords;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The traffic port's admission against the real state machine: forwarded to the start in progress while the engine
 * serves; refused during a start with a {@code Retry-After} from the start's path and that path's recorded latencies.
 */
class RulesAdmissionTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    final AtomicReference<Instant> now = new AtomicReference<>(T0);
    final Clock clock = new Clock() {
        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    };
    final EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 3), T0, change -> {}, () -> "s1");
    final List<RestartRecord> history = new ArrayList<>();
    final AtomicReference<RestartPath> path = new AtomicReference<>(RestartPath.COLD);
    final RulesAdmission admission = new RulesAdmission(
            machine,
            path::get,
            () -> history,
            RulesAdmission.Limits.NONE,
            Schedulers.immediate(),
            clock,
            TrafficEvents.NONE);

    void recorded(RestartPath on, long seconds) {
        history.add(TestRecords.record("r" + history.size())
                .path(on)
                .outcome(Outcome.READY)
                .readinessLatency(Duration.ofSeconds(seconds))
                .readinessLatencyBound(false)
                .build());
    }

    @Test
    void aServingEngineTakesTheRequestForItsCurrentStart() {
        machine.apply(new Observation.HealthOk(T0));
        machine.apply(new Observation.ModelListed(T0, "m"));
        machine.apply(new Observation.Verified(T0, "ok"));

        assertThat(admission.admit().block())
                .isInstanceOfSatisfying(
                        Admission.Admitted.class, a -> assertThat(a.startId()).isEqualTo("s1"));
    }

    @Test
    void duringAStartTheClientIsToldTheStartsExpectedRemainder() {
        recorded(RestartPath.COLD, 30);
        recorded(RestartPath.COLD, 40);
        recorded(RestartPath.COLD, 50);
        recorded(RestartPath.PRELOAD_HIT, 5);
        // A start began at T0 (the engine answers, its model not listed yet) and has run 12 s.
        machine.apply(new Observation.HealthOk(T0));
        now.set(T0.plusSeconds(12));

        Admission refused = admission.admit().block();

        assertThat(refused).isInstanceOfSatisfying(Admission.Refused.class, r -> {
            assertThat(r.error()).isEqualTo(OpenAiError.ENGINE_NOT_READY);
            // The cold path's median (40 s) less the 12 s spent.
            assertThat(r.retryAfterSeconds()).isEqualTo(28);
            assertThat(r.message()).contains("cold");
        });
    }

    @Test
    void aShortPathsStartIsToldItsOwnLatencyNotTheColdOnes() {
        recorded(RestartPath.COLD, 40);
        recorded(RestartPath.PRELOAD_HIT, 4);
        path.set(RestartPath.PRELOAD_HIT);
        machine.apply(new Observation.HealthOk(T0));
        now.set(T0.plusSeconds(1));

        assertThat(admission.admit().block())
                .isInstanceOfSatisfying(
                        Admission.Refused.class,
                        r -> assertThat(r.retryAfterSeconds()).isEqualTo(3));
    }

    @Test
    void withoutARecordedLatencyOfThePathItIsOneProbePeriodAndNeverAboveWhatClientsFollow() {
        machine.apply(new Observation.HealthOk(T0));
        assertThat(admission.admit().block())
                .isInstanceOfSatisfying(
                        Admission.Refused.class,
                        r -> assertThat(r.retryAfterSeconds()).isEqualTo(10));

        recorded(RestartPath.COLD, 900);
        // The path's latencies are read again once the last reading is HISTORY_KEPT old.
        now.set(T0.plus(StartExpectations.HISTORY_KEPT));
        assertThat(admission.admit().block())
                .isInstanceOfSatisfying(
                        Admission.Refused.class,
                        r -> assertThat(r.retryAfterSeconds()).isEqualTo(RetryAfter.MAX_SECONDS));
    }

    @Test
    void aLatencyThatIsOnlyABoundIsNotAMeasurement() {
        history.add(TestRecords.record("bound")
                .path(RestartPath.COLD)
                .outcome(Outcome.READY)
                .readinessLatency(Duration.ofSeconds(40))
                .readinessLatencyBound(true)
                .build());

        assertThat(StartExpectations.latencies(history, RestartPath.COLD)).isEmpty();
    }

    @Test
    void aStartThatFailedIsToldToComeBackLate() {
        machine.apply(new Observation.HealthOk(T0));
        machine.apply(new Observation.StartFailed(T0.plusSeconds(1), "s1", "torch.OutOfMemoryError"));

        assertThat(admission.admit().block()).isInstanceOfSatisfying(Admission.Refused.class, r -> {
            assertThat(r.error()).isEqualTo(OpenAiError.ENGINE_NOT_READY);
            assertThat(r.message()).contains(Reason.START_FAILED.value());
        });
    }

    // The queue: a bound on requests in flight, holding through a short start, a retry once, on virtual time.

    final VirtualTimeScheduler timer = VirtualTimeScheduler.create();
    final AtomicInteger ids = new AtomicInteger();
    final List<RulesAdmission> following = new ArrayList<>();
    final EngineStateMachine engine = new EngineStateMachine(
            new ReadinessRules(1, 3),
            T0,
            change -> following.forEach(admission -> admission.onEngineStateChanged(change)),
            () -> "start-" + ids.incrementAndGet());
    final AtomicInteger historyReads = new AtomicInteger();

    RulesAdmission queued(int maxInFlight, int maxQueued, boolean hold, boolean retry) {
        RulesAdmission queue = new RulesAdmission(
                engine,
                path::get,
                () -> {
                    historyReads.incrementAndGet();
                    return history;
                },
                new RulesAdmission.Limits(maxInFlight, maxQueued, Duration.ofSeconds(30), hold, retry),
                timer,
                clock,
                TrafficEvents.NONE);
        following.add(queue);
        return queue;
    }

    void verified() {
        engine.apply(new Observation.HealthOk(now.get()));
        engine.apply(new Observation.ModelListed(now.get(), "m"));
        engine.apply(new Observation.Verified(now.get(), "ok"));
    }

    /** Time passes on the clock and on the timer alike. */
    void passes(Duration time) {
        now.set(now.get().plus(time));
        timer.advanceTimeBy(time);
    }

    static Admission.Admitted admitted(@org.jspecify.annotations.Nullable Admission admission) {
        assertThat(admission).isInstanceOf(Admission.Admitted.class);
        return (Admission.Admitted) admission;
    }

    @Test
    void beyondMaxInFlightARequestWaitsForAFreeStreamAndBeyondTheQueueIsToldTheEngineIsBusy() {
        verified();
        RulesAdmission admission = queued(1, 1, false, false);
        Admission.Admitted first = admitted(admission.admit().block());
        AtomicReference<Admission> second = new AtomicReference<>();
        admission.admit().subscribe(second::set);

        assertThat(second.get()).as("waits: every stream taken").isNull();
        assertThat(admission.queued()).isEqualTo(1);
        assertThat(admission.admit().block()).isInstanceOfSatisfying(Admission.Refused.class, r -> {
            assertThat(r.error()).isEqualTo(OpenAiError.ENGINE_SATURATED);
            assertThat(r.retryAfterSeconds()).isEqualTo(1);
        });

        first.ticket().close();
        first.ticket().close();

        assertThat(second.get()).as("the stream freed goes to the one waiting").isInstanceOf(Admission.Admitted.class);
        assertThat(admission.inFlight()).as("a ticket is given back once").isEqualTo(1);
        assertThat(admission.queued()).isZero();
    }

    @Test
    void aRequestWaitingForAStreamIsAnsweredAtItsDeadline() {
        verified();
        RulesAdmission admission = queued(1, 4, false, false);
        admitted(admission.admit().block());
        AtomicReference<Admission> waiting = new AtomicReference<>();
        admission.admit().subscribe(waiting::set);

        passes(Duration.ofSeconds(29));
        assertThat(waiting.get()).isNull();
        passes(Duration.ofSeconds(1));

        assertThat(waiting.get())
                .isInstanceOfSatisfying(
                        Admission.Refused.class, r -> assertThat(r.error()).isEqualTo(OpenAiError.ENGINE_SATURATED));
        assertThat(admission.queued()).isZero();
    }

    @Test
    void withHoldARequestArrivingDuringAPreloadHitIsForwardedToTheStartOnceItIsVerified() {
        recorded(RestartPath.PRELOAD_HIT, 4);
        path.set(RestartPath.PRELOAD_HIT);
        RulesAdmission admission = queued(8, 8, true, false);
        engine.apply(new Observation.HealthOk(now.get()));
        String start = engine.start().id();
        AtomicReference<Admission> held = new AtomicReference<>();
        admission.admit().subscribe(held::set);
        passes(Duration.ofSeconds(2));
        assertThat(held.get()).isNull();

        engine.apply(new Observation.ModelListed(now.get(), "m"));
        engine.apply(new Observation.Verified(now.get(), "ok"));

        assertThat(admitted(held.get()).startId()).isEqualTo(start);
        assertThat(admission.inFlight()).isEqualTo(1);
    }

    @Test
    void withoutHoldOrOnAColdStartTheRequestIsRefusedAtOnce() {
        recorded(RestartPath.PRELOAD_HIT, 4);
        path.set(RestartPath.PRELOAD_HIT);
        RulesAdmission holdOff = queued(8, 8, false, false);
        engine.apply(new Observation.HealthOk(now.get()));
        assertThat(holdOff.admit().block()).isInstanceOf(Admission.Refused.class);

        path.set(RestartPath.COLD);
        RulesAdmission cold = queued(8, 8, true, false);
        assertThat(cold.admit().block()).isInstanceOf(Admission.Refused.class);
    }

    @Test
    void aClientThatGoesAwayWhileItsRequestWaitsLeavesTheQueue() {
        verified();
        RulesAdmission admission = queued(1, 1, false, false);
        Admission.Admitted first = admitted(admission.admit().block());
        AtomicReference<Admission> later = new AtomicReference<>();
        admission.admit().subscribe(later::set).dispose();

        assertThat(admission.queued()).isZero();
        first.ticket().close();

        assertThat(later.get()).isNull();
        assertThat(admission.inFlight())
                .as("no place given to a client that left")
                .isZero();
    }

    @Test
    void aRetryWaitsForTheEnginesNextVerifiedStartAndIsSentThere() {
        verified();
        String failedOn = engine.start().id();
        RulesAdmission admission = queued(8, 8, false, true);
        passes(Duration.ofSeconds(1));
        AtomicReference<Admission> retried = new AtomicReference<>();
        admission.retry(failedOn).subscribe(retried::set);
        assertThat(retried.get()).as("not before the engine is verified again").isNull();

        engine.apply(new Observation.Unreachable(now.get(), Reason.ENGINE_DOWN, "refused"));
        passes(Duration.ofSeconds(3));
        assertThat(retried.get()).isNull();
        verified();

        assertThat(admitted(retried.get()).startId())
                .isNotEqualTo(failedOn)
                .isEqualTo(engine.start().id());
    }

    @Test
    void whileTheEngineIsDownBetweenStartsTheNextIsExpectedToTakeTheLatestRecordedPath() {
        recorded(RestartPath.PRELOAD_HIT, 4);
        path.set(RestartPath.UNKNOWN);
        RulesAdmission admission = queued(8, 8, true, false);
        verified();
        engine.apply(new Observation.Unreachable(now.get(), Reason.ENGINE_DOWN, "refused"));
        AtomicReference<Admission> held = new AtomicReference<>();

        admission.admit().subscribe(held::set);

        assertThat(admission.queued())
                .as("held: the latest start was a preload hit")
                .isOne();
        verified();
        assertThat(held.get()).isInstanceOf(Admission.Admitted.class);
    }

    @Test
    void withRetriesOffNothingIsSentAgain() {
        verified();
        RulesAdmission admission = queued(8, 8, false, false);

        assertThat(admission.retry(engine.start().id()).blockOptional()).isEmpty();
    }

    @Test
    void aFloodOfRefusalsReadsThePathsHistoryOncePerSecond() {
        RulesAdmission admission = queued(8, 8, false, false);
        engine.apply(new Observation.HealthOk(now.get()));
        for (int i = 0; i < 1000; i++) {
            assertThat(admission.admit().block()).isInstanceOf(Admission.Refused.class);
        }
        assertThat(historyReads).hasValue(1);
        passes(StartExpectations.HISTORY_KEPT);
        admission.admit().block();
        assertThat(historyReads).hasValue(2);
    }

    /**
     * The drain that an announcement answers waits for what the admission let through, not only for what reached the
     * engine: a request admitted an instant before the announcement, not yet sent, is in flight too (found on
     * llama-server: the drain answered with nothing in flight, and the restart cut that request).
     */
    @Test
    void idleWaitsForEveryAdmittedRequestIncludingOneNotYetSent() {
        verified();
        RulesAdmission admission = queued(8, 8, true, false);
        assertThat(admission.idle().toFuture()).as("nothing admitted").isDone();
        Admission.Admitted admitted = admitted(admission.admit().block());
        admission.announceStop();

        java.util.concurrent.CompletableFuture<Void> idle = admission.idle().toFuture();
        assertThat(idle).as("admitted, not yet ended").isNotDone();

        admitted.ticket().close();
        assertThat(idle).isDone();
    }

    @Test
    void anAnnouncedStopHoldsNewRequestsWhileTheEngineIsDownAndLapsesOnceTheNextStartServes() {
        verified();
        path.set(RestartPath.COLD);
        RulesAdmission admission = queued(8, 8, true, false);
        admission.announceStop();
        AtomicReference<Admission> held = new AtomicReference<>();
        admission.admit().subscribe(held::set);
        engine.apply(new Observation.Unreachable(now.get(), Reason.ENGINE_DOWN, "refused"));
        AtomicReference<Admission> whileDown = new AtomicReference<>();
        admission.admit().subscribe(whileDown::set);

        assertThat(admission.queued())
                .as("both wait: the stopped start's path says nothing of the next")
                .isEqualTo(2);
        path.set(RestartPath.PRELOAD_HIT);
        verified();

        assertThat(admitted(held.get()).startId()).isEqualTo(engine.start().id());
        assertThat(whileDown.get()).isInstanceOf(Admission.Admitted.class);
        assertThat(admission.announcement())
                .as("lapsed once the next start serves")
                .isNull();
    }
}
