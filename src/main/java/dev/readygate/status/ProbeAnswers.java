package dev.readygate.status;

import dev.readygate.readiness.EngineState;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.availability.ReadinessState;
import tools.jackson.databind.json.JsonMapper;

/**
 * What {@code /readyz} and {@code /livez} answer, rendered once per change of what they show, not once per probe: a
 * probe reads the engine's state and Boot's availability (two reads from memory, no lock), and while both are the
 * ones the last answer was rendered for (the same objects: states are immutable) it gets that answer's bytes again.
 * The bodies are Spring Boot's health groups' as Actuator writes them as configured ({@code readiness}: the {@code
 * engine} and {@code readinessState} components, details shown; {@code liveness}: its status alone), their statuses
 * Actuator's mapping (UP 200, OUT_OF_SERVICE and DOWN 503). Thread-safe: two probes racing past a change may both
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

    private static final Answer ALIVE = liveness("UP", 200);
    private static final Answer BROKEN = liveness("DOWN", 503);

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

    private Answer render(EngineState state, ReadinessState boot) {
        String engineStatus = state.acceptsTraffic() ? "UP" : "OUT_OF_SERVICE";
        String bootStatus = boot == ReadinessState.ACCEPTING_TRAFFIC ? "UP" : "OUT_OF_SERVICE";
        boolean up = engineStatus.equals("UP") && bootStatus.equals("UP");
        Map<String, Object> engineComponent = new LinkedHashMap<>();
        engineComponent.put("status", engineStatus);
        engineComponent.put("details", EngineHealthIndicator.details(state));
        Map<String, Object> components = new LinkedHashMap<>();
        components.put("engine", engineComponent);
        components.put("readinessState", Map.of("status", bootStatus));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", up ? "UP" : "OUT_OF_SERVICE");
        body.put("components", components);
        return new Answer(up ? 200 : 503, json.writeValueAsBytes(body));
    }

    private static Answer liveness(String status, int code) {
        String body = "{\"status\":\"" + status + "\"}";
        return new Answer(code, body.getBytes(StandardCharsets.UTF_8));
    }
}
