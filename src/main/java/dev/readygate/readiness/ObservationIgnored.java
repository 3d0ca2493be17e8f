package dev.readygate.readiness;

import java.util.Locale;

/**
 * Published for each observation the readiness rules could not use, so the metrics count it instead of its being
 * dropped silently.
 *
 * @param observation what was observed
 * @param state the state it did not apply to
 * @param why why it did not apply
 */
public record ObservationIgnored(Observation observation, EngineState state, ReadinessRules.Ignored why) {

    /** The observation's kind in snake case ({@code check_failed}, {@code verified}, ...), for metrics. */
    public String observationKind() {
        return kindOf(observation.getClass());
    }

    /** The snake-case kind of an observation type. */
    public static String kindOf(Class<? extends Observation> type) {
        return type.getSimpleName().replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
    }
}
