package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ObservationIgnored;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadinessMetersTests {

    final Instant t0 = Instant.parse("2026-12-03T10:00:00Z");
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final List<EngineStateChanged> changes = new ArrayList<>();
    final EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 2), t0, changes::add);
    final ReadinessMeters meters = new ReadinessMeters(registry, machine);

    @Test
    void theEngineIsNotReadyAndInItsFirstStateFromTheStart() {
        assertThat(registry.get(MeterNames.ENGINE_READY).gauge().value()).isZero();
        for (EngineState.Kind kind : EngineState.Kind.values()) {
            assertThat(registry.get(MeterNames.ENGINE_STATE)
                            .tag("state", kind.value())
                            .gauge()
                            .value())
                    .as(kind.value())
                    .isEqualTo(kind == machine.current().kind() ? 1 : 0);
        }
    }

    @Test
    void everyTransitionTheRulesAllowIsAtZeroFromTheStart() {
        long allowed = ReadinessRules.TRANSITIONS.values().stream()
                .mapToLong(java.util.Set::size)
                .sum();
        assertThat(registry.get(MeterNames.ENGINE_TRANSITIONS).counters())
                .hasSize((int) allowed)
                .allSatisfy(counter -> assertThat(counter.count()).isZero());
    }

    @Test
    void theMachinesChangesMoveTheReadyGaugeTheStateAndOneTransitionEach() {
        machine.apply(new Observation.HealthOk(t0));
        machine.apply(new Observation.Unreachable(t0.plusSeconds(1), Reason.ENGINE_DOWN, "refused"));
        changes.forEach(meters::onEngineStateChanged);

        assertThat(changes).hasSize(2);
        for (EngineStateChanged change : changes) {
            assertThat(registry.get(MeterNames.ENGINE_TRANSITIONS)
                            .tag("from", change.previous().kind().value())
                            .tag("to", change.current().kind().value())
                            .counter()
                            .count())
                    .isEqualTo(1);
        }
        assertThat(registry.get(MeterNames.ENGINE_TRANSITIONS).counters().stream()
                        .mapToDouble(counter -> counter.count())
                        .sum())
                .isEqualTo(2);
        assertThat(registry.get(MeterNames.ENGINE_STATE)
                        .tag("state", machine.current().kind().value())
                        .gauge()
                        .value())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.ENGINE_READY).gauge().value()).isZero();
    }

    @Test
    void everyObservationAndWhyItWasIgnoredIsASeriesAtZero() {
        int observations = Observation.class.getPermittedSubclasses().length;
        assertThat(registry.get(MeterNames.OBSERVATIONS_IGNORED).counters())
                .hasSize(observations * ReadinessRules.Ignored.values().length)
                .allSatisfy(counter -> assertThat(counter.count()).isZero());
    }

    @Test
    void anIgnoredObservationIsCountedByKindAndWhy() {
        Observation observation = new Observation.HealthOk(t0);
        ReadinessRules.Ignored why = ReadinessRules.Ignored.values()[0];
        meters.onObservationIgnored(new ObservationIgnored(observation, machine.current(), why));
        assertThat(registry.get(MeterNames.OBSERVATIONS_IGNORED)
                        .tag("observation", ObservationIgnored.kindOf(Observation.HealthOk.class))
                        .tag("why", why.value())
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.OBSERVATIONS_IGNORED).counters().stream()
                        .mapToDouble(counter -> counter.count())
                        .sum())
                .isEqualTo(1);
    }
}
