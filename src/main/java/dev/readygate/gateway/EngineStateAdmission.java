package dev.readygate.gateway;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import java.time.Duration;

/**
 * Admits a request while the engine's state accepts traffic ({@link EngineState#acceptsTraffic()}: ready or degraded,
 * what {@code /readyz} says), and refuses it otherwise, naming the state. {@code Retry-After} is a fixed second for
 * now: one derived from the current start's path and its recorded latencies is issue 27's item 3.
 */
final class EngineStateAdmission implements TrafficAdmission {

    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private static final Admission ADMITTED = new Admission.Admitted();

    private final EngineStateMachine machine;

    EngineStateAdmission(EngineStateMachine machine) {
        this.machine = machine;
    }

    @Override
    public Admission admit() {
        return decide(machine.current());
    }

    /** The decision for one state, pure. */
    static Admission decide(EngineState state) {
        if (state.acceptsTraffic()) {
            return ADMITTED;
        }
        var cause = state.reason();
        String reason = cause == null ? state.kind().value() : cause.value();
        return new Admission.Refused(
                RETRY_AFTER,
                OpenAiError.ENGINE_NOT_READY,
                "The engine cannot serve now (" + state.kind().value() + ": " + reason + "); retry later");
    }
}
