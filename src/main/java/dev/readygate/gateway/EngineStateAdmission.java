package dev.readygate.gateway;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Admits a request while the engine's state accepts traffic ({@link EngineState#acceptsTraffic()}: ready or degraded,
 * what {@code /readyz} says), and refuses it otherwise, naming the state. {@code Retry-After} is a fixed second for
 * now: one derived from the current start's path and its recorded latencies is issue 27's item 3.
 */
final class EngineStateAdmission implements TrafficAdmission {

    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final EngineStateMachine machine;

    EngineStateAdmission(EngineStateMachine machine) {
        this.machine = machine;
    }

    @Override
    public Admission admit() {
        EngineStart start = machine.start();
        return decide(machine.current(), start == null ? null : start.id());
    }

    /** The decision for one state, pure: admitted to the start {@code startId}, or refused. */
    static Admission decide(EngineState state, @Nullable String startId) {
        if (state.acceptsTraffic()) {
            return new Admission.Admitted(startId);
        }
        var cause = state.reason();
        String reason = cause == null ? state.kind().value() : cause.value();
        return new Admission.Refused(
                RETRY_AFTER,
                OpenAiError.ENGINE_NOT_READY,
                "The engine cannot serve now (" + state.kind().value() + ": " + reason + "); retry later");
    }
}
