package dev.readygate.gateway;

import dev.readygate.readiness.Reason;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * How one proxied exchange ended, as {@link TrafficJudge} decides: a closed set, each in one of four groups (a
 * success, the client's fault, nobody's, the engine's failure) and, for the engine's failures, the readiness
 * {@link Reason} a probe failing the same way gives.
 */
public enum TrafficOutcome {
    /** The answer passed whole: a 2xx with {@code [DONE]}, or a whole body. */
    SUCCESS(Group.SUCCESS, null),
    /**
     * The client's mistake: a 4xx but 408 and 429, or a 501, from the engine; or a request larger than the gateway
     * takes.
     */
    CLIENT_ERROR(Group.CLIENT_FAULT, null),
    /** An error event (or error body) the engine gave a 4xx code: a request it found wrong once under way. */
    CLIENT_ERROR_EVENT(Group.CLIENT_FAULT, null),
    /** The client went away before the answer was whole. */
    CLIENT_CANCELLED(Group.CLIENT_FAULT, null),
    /** The engine shed load: 429, a 503 with {@code Retry-After}, or a 408. */
    BUSY(Group.NEUTRAL, null),
    /** An event too large to read: whether the stream ended well is not known. */
    NOT_JUDGED(Group.NEUTRAL, null),
    /** A 5xx (but 501, and a 503 with {@code Retry-After}). */
    ENGINE_STATUS(Group.ENGINE_FAILURE, Reason.HTTP_STATUS),
    /** An error event in a 2xx stream, or an error object in a 2xx body, that was not a 4xx. */
    ERROR_EVENT(Group.ENGINE_FAILURE, Reason.ERROR_EVENT),
    /** The answer ended (or the engine closed the connection) before {@code [DONE]} or the body's end. */
    TRUNCATED_STREAM(Group.ENGINE_FAILURE, Reason.TRUNCATED_STREAM),
    /** An event or body that is not JSON. */
    MALFORMED(Group.ENGINE_FAILURE, Reason.MALFORMED_RESPONSE),
    /** The stream sent nothing within the gateway's between-events limit. */
    STALLED(Group.ENGINE_FAILURE, Reason.STALLED),
    /** Nothing of the answer came within the gateway's first-byte limit. */
    FIRST_BYTE_TIMEOUT(Group.ENGINE_FAILURE, Reason.TIMED_OUT),
    /** No connection to the engine within the gateway's connect limit. */
    CONNECT_TIMEOUT(Group.ENGINE_FAILURE, Reason.TIMED_OUT),
    /** The engine closed (or reset) the connection before any answer. */
    CONNECTION_CLOSED(Group.ENGINE_FAILURE, Reason.CONNECTION_RESET),
    /** Nothing listens on the engine's port. */
    REFUSED(Group.ENGINE_FAILURE, Reason.ENGINE_DOWN);

    /** Whose the outcome is. */
    public enum Group {
        /** The engine served the request. */
        SUCCESS,
        /** The client's doing: never counted against the engine. */
        CLIENT_FAULT,
        /** Neither pass nor failure (as a probe that waited behind traffic is busy). */
        NEUTRAL,
        /** The engine failed the request. */
        ENGINE_FAILURE
    }

    private final Group group;
    private final @Nullable Reason reason;

    TrafficOutcome(Group group, @Nullable Reason reason) {
        this.group = group;
        this.reason = reason;
    }

    public Group group() {
        return group;
    }

    /** The readiness reason of an engine failure; null for the other groups. */
    public @Nullable Reason reason() {
        return reason;
    }

    /** The snake_case name for metrics tags and logs. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
