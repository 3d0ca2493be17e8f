package dev.readygate.gateway;

/** How a proxied exchange ended, as the gateway saw it; whose fault it was is {@link TrafficJudge}'s question. */
public enum ExchangeEnding {
    /** The engine's answer reached the client whole (whatever its status). */
    COMPLETED,
    /** The client went away (disconnected or cancelled) before the answer ended; the engine's request was cancelled. */
    CLIENT_CANCELLED,
    /**
     * The engine closed or reset the connection: before its answer began (502, nothing else sent) or after (the
     * client's stream was cut); the engine's status, when it sent one, says which.
     */
    ENGINE_CLOSED,
    /** The client's body grew past {@code readygate.gateway.max-request-size} while it was forwarded: 413. */
    REQUEST_TOO_LARGE,
    /** The connection to the engine was refused: nothing listens on its port (502). */
    CONNECT_REFUSED,
    /** The connection to the engine took longer than {@code readygate.gateway.connect-timeout}: 504. */
    CONNECT_TIMED_OUT,
    /** No byte of the answer's body within {@code readygate.gateway.first-byte-timeout}: 504. */
    FIRST_BYTE_TIMED_OUT,
    /** The answer began, then nothing for {@code readygate.gateway.between-events-timeout}: the stream was cut. */
    STALLED
}
