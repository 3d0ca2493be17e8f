package dev.readygate.gateway;

import java.util.Locale;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The answers the gateway gives itself, without the engine, each with its HTTP status and the OpenAI-style body
 * clients already parse: {@code {"error":{"message","type","param":null,"code"}}}. The body is written by Jackson,
 * so a message carrying anything (a model name, a path) stays one JSON string. {@code type} follows OpenAI's words
 * ({@code invalid_request_error} for the client's mistakes, {@code server_error} for ours); {@code code} names
 * readygate's reason, for a client or a dashboard to tell a draining pod from a starting engine.
 */
public enum OpenAiError {
    /** 400: the request is not one the gateway can pass on (not JSON, no model). */
    INVALID_REQUEST(400, "invalid_request_error"),
    /** 404: a route the gateway does not forward (OpenAI answers an unknown URL the same way). */
    ROUTE_NOT_PROXIED(404, "invalid_request_error"),
    /** 413: the request is larger than the gateway's limit. */
    REQUEST_TOO_LARGE(413, "invalid_request_error"),
    /** 429: every stream the engine is allowed is taken and the queue is full; the engine itself is ready. */
    ENGINE_SATURATED(429, "rate_limit_error"),
    /** 503: the engine is not verified ready (starting, failed, held). */
    ENGINE_NOT_READY(503, "server_error"),
    /** 503: this pod is draining (shutting down); the next request belongs to another pod. */
    ENGINE_DRAINING(503, "server_error"),
    /** 502: the engine could not be reached (refused, reset before an answer). */
    ENGINE_UNREACHABLE(502, "server_error"),
    /** 504: no connection to the engine within the gateway's connect limit. */
    ENGINE_CONNECT_TIMEOUT(504, "server_error"),
    /** 504: the engine sent no answer within the gateway's first-byte limit. */
    ENGINE_TIMEOUT(504, "server_error");

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final int status;
    private final String type;

    OpenAiError(int status, String type) {
        this.status = status;
        this.type = type;
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /** OpenAI's {@code type}. */
    public String type() {
        return type;
    }

    /** The {@code code}: the constant's snake_case name, {@code engine_not_ready}, ... */
    public String code() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The UTF-8 JSON body carrying {@code message}. */
    public byte[] body(String message) {
        ObjectNode error = JSON.createObjectNode();
        error.put("message", message);
        error.put("type", type);
        error.putNull("param");
        error.put("code", code());
        ObjectNode root = JSON.createObjectNode();
        root.set("error", error);
        return JSON.writeValueAsBytes(root);
    }
}
