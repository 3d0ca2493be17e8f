package dev.readygate.status;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Reason;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The {@code engine} health indicator in the readiness group: UP while the engine is verified ready (or degraded
 * below the failure threshold), OUT_OF_SERVICE otherwise, with the state and a machine-readable reason. It reads the
 * state from memory; a kubelet hitting {@code /readyz} never triggers a probe.
 */
@Component("engine")
class EngineHealthIndicator implements ReactiveHealthIndicator {

    private final EngineStateMachine machine;

    public EngineHealthIndicator(EngineStateMachine machine) {
        this.machine = machine;
    }

    @Override
    public Mono<Health> health() {
        return Mono.fromSupplier(() -> health(machine.current()));
    }

    static Health health(EngineState state) {
        Health.Builder builder = new Health.Builder(state.acceptsTraffic() ? Status.UP : Status.OUT_OF_SERVICE);
        return builder.withDetails(details(state)).build();
    }

    static Map<String, Object> details(EngineState state) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("state", state.kind().value());
        Reason reason = state.reason();
        if (reason != null) {
            details.put("reason", reason.value());
        }
        details.put("since", state.since().toString());
        switch (state) {
            case EngineState.Down d -> details.put("detail", d.detail());
            case EngineState.Listening l -> details.put("detail", l.detail());
            case EngineState.Healthy h when !h.detail().isEmpty() -> details.put("detail", h.detail());
            case EngineState.Degraded d -> {
                details.put("consecutiveFailures", d.failures());
                details.put("detail", d.detail());
                Map<String, Integer> failing = new LinkedHashMap<>();
                d.failing().entrySet().stream()
                        .sorted(Map.Entry.comparingByKey())
                        .forEach(entry -> failing.put(
                                entry.getKey().value(), entry.getValue().count()));
                details.put("failingChecks", failing);
            }
            case EngineState.Held h -> {
                details.put("detail", h.detail());
                details.put("heldUntil", h.until().toString());
            }
            case EngineState.NotReady n -> {
                details.put("detail", n.detail());
                details.put("latched", n.latched());
                details.put("consecutiveSuccesses", n.successes());
            }
            case EngineState.VerificationFailed f -> {
                details.put("detail", f.detail());
                details.put("latched", f.latched());
                details.put("consecutiveFailures", f.failures());
            }
            case EngineState.Verifying v -> details.put("consecutiveSuccesses", v.successes());
            default -> {}
        }
        return details;
    }
}
