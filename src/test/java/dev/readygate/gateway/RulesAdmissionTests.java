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
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

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
    final RulesAdmission admission = new RulesAdmission(machine, path::get, () -> history, clock);

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

        assertThat(admission.admit()).isEqualTo(new Admission.Admitted("s1"));
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

        Admission refused = admission.admit();

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

        assertThat(admission.admit())
                .isInstanceOfSatisfying(
                        Admission.Refused.class,
                        r -> assertThat(r.retryAfterSeconds()).isEqualTo(3));
    }

    @Test
    void withoutARecordedLatencyOfThePathItIsOneProbePeriodAndNeverAboveWhatClientsFollow() {
        machine.apply(new Observation.HealthOk(T0));
        assertThat(admission.admit())
                .isInstanceOfSatisfying(
                        Admission.Refused.class,
                        r -> assertThat(r.retryAfterSeconds()).isEqualTo(10));

        recorded(RestartPath.COLD, 900);
        assertThat(admission.admit())
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

        assertThat(RulesAdmission.latencies(history, RestartPath.COLD)).isEmpty();
    }

    @Test
    void aStartThatFailedIsToldToComeBackLate() {
        machine.apply(new Observation.HealthOk(T0));
        machine.apply(new Observation.StartFailed(T0.plusSeconds(1), "s1", "torch.OutOfMemoryError"));

        assertThat(admission.admit()).isInstanceOfSatisfying(Admission.Refused.class, r -> {
            assertThat(r.error()).isEqualTo(OpenAiError.ENGINE_NOT_READY);
            assertThat(r.message()).contains(Reason.START_FAILED.value());
        });
    }
}
