package dev.readygate.engine;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * How a call to the engine failed, as a closed set of kinds with a short, operator-safe detail (never a prompt, a
 * completion or a key).
 *
 * @param kind what went wrong
 * @param httpStatus the HTTP status when {@code kind} is {@link Kind#HTTP_STATUS}, {@link Kind#LOADING} or
 *     {@link Kind#NOT_SUPPORTED}
 * @param detail a short explanation for logs and {@code /status}
 */
public record EngineFailure(Kind kind, @Nullable Integer httpStatus, String detail) {

    /** The failure kinds; {@link #reason()} gives their stable, machine-readable names. */
    public enum Kind {
        /** Nothing listens on the port (ECONNREFUSED): the engine is down or still loading. */
        REFUSED,
        /** The connection was reset (RST) or closed before any answer. */
        RESET,
        /** No answer (no stream event at all) within the call's timeout. */
        TIMED_OUT,
        /** A stream that had started sent nothing more within the call's timeout. */
        STALLED,
        /** The engine answered with an unexpected HTTP status. */
        HTTP_STATUS,
        /** The engine answers but says it is still loading its model (llama.cpp's 503 {@code Loading model}). */
        LOADING,
        /** The endpoint does not exist on this server (404, 405 or 501 on an optional endpoint). */
        NOT_SUPPORTED,
        /** The body was not what the endpoint promises (not JSON, missing fields, bad SSE framing). */
        MALFORMED_BODY,
        /** A stream ended (connection closed) before {@code data: [DONE]}. */
        TRUNCATED_STREAM,
        /**
         * A stream ran past what was asked: more events than {@code max_tokens} and the few that carry no token (a
         * finish, the usage, {@code [DONE]}) can be. Cut at once, whatever the engine's load.
         */
        OVERLONG_STREAM,
        /** The body exceeded readygate's size bound and was abandoned. */
        BODY_TOO_LARGE,
        /** Any other I/O problem (DNS, TLS, ...). */
        IO_ERROR;

        /** The stable snake_case name used in reasons, metrics tags and {@code /status}. */
        public String reason() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public static EngineFailure of(Kind kind, String detail) {
        return new EngineFailure(kind, null, detail);
    }

    public static EngineFailure status(int status, String detail) {
        return new EngineFailure(Kind.HTTP_STATUS, status, detail);
    }
}
