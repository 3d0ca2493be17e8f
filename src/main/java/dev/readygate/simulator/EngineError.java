package dev.readygate.simulator;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** An error the engine answers in vLLM's JSON shape ({@code ErrorResponse{error: ErrorInfo}}). */
final class EngineError extends RuntimeException {

    private final HttpResponseStatus status;
    private final String type;
    private final @Nullable String param;

    EngineError(HttpResponseStatus status, String type, String message, @Nullable String param) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
    }

    static EngineError badRequest(String message, @Nullable String param) {
        return new EngineError(HttpResponseStatus.BAD_REQUEST, "BadRequestError", message, param);
    }

    HttpResponseStatus status() {
        return status;
    }

    /** The body, nested ({@code {"error":{...}}}) or flat ({@code {"object":"error",...}}) as configured. */
    Map<String, Object> body(SimulatorProperties.ErrorShape shape) {
        Map<String, Object> info = new LinkedHashMap<>();
        if (shape == SimulatorProperties.ErrorShape.FLAT) {
            info.put("object", "error");
        }
        info.put("message", getMessage());
        info.put("type", type);
        info.put("param", param);
        info.put("code", status.code());
        return shape == SimulatorProperties.ErrorShape.FLAT ? info : Map.of("error", info);
    }
}
