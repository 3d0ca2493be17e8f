package dev.readygate.status;

import dev.readygate.readiness.EngineState;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.health.actuate.endpoint.HttpCodeStatusMapper;
import org.springframework.boot.health.actuate.endpoint.StatusAggregator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import tools.jackson.databind.json.JsonMapper;

/**
 * What {@code /readyz} and {@code /livez} answer, rendered once per change of what they show, not once per probe: a
 * probe reads the engine's state and Boot's availability (two reads from memory, no lock), and while both are the
 * ones the last answer was rendered for (the same objects: states are immutable) it gets that answer's bytes again.
 * The bodies are Spring Boot's health groups' as Actuator writes them as configured ({@code readiness}: the {@code
 * engine} and {@code readinessState} components, details shown; {@code liveness}: its status alone), made from the
 * same indicators' mappings ({@link EngineHealthIndicator#health}, {@link AvailabilityIndicators}) with Boot's own
 * aggregation and status codes ({@link StatusAggregator#getDefault}, {@link HttpCodeStatusMapper#DEFAULT}). Thread-safe: two probes racing past a change may both
 * render it, each getting a right answer.
 */
final class ProbeAnswers {

    /**
     * One answer.
     *
     * @param status the HTTP status
     * @param json the body
     */
    record Answer(int status, byte[] json) {}

    /** The answer last rendered for {@code /readyz}, with the states it shows. */
    private record Rendered(EngineState engine, ReadinessState boot, Answer answer) {}

    private static final Answer ALIVE = liveness(LivenessState.CORRECT);
    private static final Answer BROKEN = liveness(LivenessState.BROKEN);
    private static final Answer GATEWAY_TAKES_TRAFFIC = gateway(200, "UP", null);
    private static final Answer GATEWAY_CLOSED = gateway(503, "OUT_OF_SERVICE", "traffic_port_closed");
    private static final Answer GATEWAY_NEVER_VERIFIED = gateway(503, "OUT_OF_SERVICE", "engine_never_verified");
    private static final Answer GATEWAY_OFF = gateway(503, "OUT_OF_SERVICE", "gateway_off");

    private final Supplier<EngineState> engine;
    private final Supplier<ReadinessState> readiness;
    private final Supplier<LivenessState> liveness;
    private final JsonMapper json;
    private volatile @Nullable Rendered last;

    /**
     * @param engine the engine's readiness state now
     * @param readiness Boot's readiness state now (refusing as the context closes)
     * @param liveness Boot's liveness state now
     */
    ProbeAnswers(
            Supplier<EngineState> engine,
            Supplier<ReadinessState> readiness,
            Supplier<LivenessState> liveness,
            JsonMapper json) {
        this.engine = engine;
        this.readiness = readiness;
        this.liveness = liveness;
        this.json = json;
    }

    /** {@code /readyz} now. */
    Answer readiness() {
        EngineState state = engine.get();
        ReadinessState boot = readiness.get();
        Rendered rendered = last;
        if (rendered != null && rendered.engine() == state && rendered.boot() == boot) {
            return rendered.answer();
        }
        Answer answer = render(state, boot);
        last = new Rendered(state, boot, answer);
        return answer;
    }

    /** {@code /livez} now: never the engine's. */
    Answer liveness() {
        return liveness.get() == LivenessState.CORRECT ? ALIVE : BROKEN;
    }

    /**
     * {@code /readyz/gateway} now: 200 while gateway mode's traffic port is open and not draining, once the engine has
     * been verified ready (since readygate started), whatever the engine's state after that (readygate answers each
     * request itself: forwarded, held, or refused with {@code Retry-After}); 503 with {@code traffic_port_closed}
     * before the port opens, while it drains and after, with {@code engine_never_verified} until the engine's first
     * verified start (a new pod of a rollout is not Ready while its engine loads), or with {@code gateway_off}.
     */
    static Answer gateway(boolean enabled, boolean takesTraffic, boolean engineVerifiedOnce) {
        if (!enabled) {
            return GATEWAY_OFF;
        }
        if (!takesTraffic) {
            return GATEWAY_CLOSED;
        }
        return engineVerifiedOnce ? GATEWAY_TAKES_TRAFFIC : GATEWAY_NEVER_VERIFIED;
    }

    private static Answer gateway(int status, String code, @Nullable String reason) {
        String body = "{\"status\":\"" + code + "\""
                + (reason == null ? "" : ",\"details\":{\"reason\":\"" + reason + "\"}") + "}";
        return new Answer(status, body.getBytes(StandardCharsets.UTF_8));
    }

    /** The readiness group as Actuator renders it: each component's status, Boot's aggregate and status code. */
    private Answer render(EngineState state, ReadinessState boot) {
        Health engineHealth = EngineHealthIndicator.health(state);
        Status bootStatus = AvailabilityIndicators.readiness(boot);
        Status status = StatusAggregator.getDefault().getAggregateStatus(engineHealth.getStatus(), bootStatus);
        Map<String, Object> engineComponent = new LinkedHashMap<>();
        engineComponent.put("status", engineHealth.getStatus().getCode());
        engineComponent.put("details", engineHealth.getDetails());
        Map<String, Object> components = new LinkedHashMap<>();
        components.put("engine", engineComponent);
        components.put("readinessState", Map.of("status", bootStatus.getCode()));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status.getCode());
        body.put("components", components);
        return new Answer(HttpCodeStatusMapper.DEFAULT.getStatusCode(status), json.writeValueAsBytes(body));
    }

    /** The liveness group as configured: its status alone. */
    private static Answer liveness(LivenessState state) {
        Status status = AvailabilityIndicators.liveness(state);
        String body = "{\"status\":\"" + status.getCode() + "\"}";
        return new Answer(HttpCodeStatusMapper.DEFAULT.getStatusCode(status), body.getBytes(StandardCharsets.UTF_8));
    }
}
