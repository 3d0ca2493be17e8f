package dev.readygate.metrics;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ObservationIgnored;
import dev.readygate.readiness.ReadinessRules;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * The readiness meters: whether the engine is ready ({@link MeterNames#ENGINE_READY}), its state
 * ({@link MeterNames#ENGINE_STATE}), every change of state the rules allow ({@link MeterNames#ENGINE_TRANSITIONS}) and
 * the observations they could not use ({@link MeterNames#OBSERVATIONS_IGNORED}), each at 0 from the start.
 */
final class ReadinessMeters {

    private final MeterRegistry registry;
    private final Map<EngineState.Kind, Map<EngineState.Kind, Counter>> transitions =
            new EnumMap<>(EngineState.Kind.class);
    private final Map<String, Map<ReadinessRules.Ignored, Counter>> ignored = new HashMap<>();

    ReadinessMeters(MeterRegistry registry, EngineStateMachine machine) {
        this.registry = registry;
        Gauge.builder(MeterNames.ENGINE_READY, machine, m -> m.current().acceptsTraffic() ? 1 : 0)
                .description("Whether the engine is verified ready to serve (1) or not (0)")
                .register(registry);
        for (EngineState.Kind kind : EngineState.Kind.values()) {
            Gauge.builder(MeterNames.ENGINE_STATE, machine, m -> m.current().kind() == kind ? 1 : 0)
                    .description("The engine's readiness state: 1 for the current one")
                    .tag("state", kind.value())
                    .register(registry);
        }
        ReadinessRules.TRANSITIONS.forEach((from, kinds) -> kinds.forEach(to -> transition(from, to)));
        for (Class<?> type : Observation.class.getPermittedSubclasses()) {
            String observation = ObservationIgnored.kindOf(type.asSubclass(Observation.class));
            Map<ReadinessRules.Ignored, Counter> byWhy = new EnumMap<>(ReadinessRules.Ignored.class);
            for (ReadinessRules.Ignored why : ReadinessRules.Ignored.values()) {
                byWhy.put(
                        why,
                        Counter.builder(MeterNames.OBSERVATIONS_IGNORED)
                                .description("Observations the readiness rules could not use")
                                .tag("observation", observation)
                                .tag("why", why.value())
                                .register(registry));
            }
            ignored.put(observation, byWhy);
        }
    }

    void onEngineStateChanged(EngineStateChanged change) {
        if (change.previous().kind() != change.current().kind()) {
            transition(change.previous().kind(), change.current().kind()).increment();
        }
    }

    void onObservationIgnored(ObservationIgnored event) {
        ignored.get(event.observationKind()).get(event.why()).increment();
    }

    private Counter transition(EngineState.Kind from, EngineState.Kind to) {
        return transitions
                .computeIfAbsent(from, kind -> new EnumMap<>(EngineState.Kind.class))
                .computeIfAbsent(
                        to,
                        kind -> Counter.builder(MeterNames.ENGINE_TRANSITIONS)
                                .description("Engine readiness state changes")
                                .tag("from", from.value())
                                .tag("to", to.value())
                                .register(registry));
    }
}
