package dev.readygate.gateway;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One exchange the gateway sent to the engine, reported once, when it ended. Holds no content: no prompt, no
 * completion, no header; of the answer, only what {@link StreamWatch} counts (and an error's message, made safe).
 *
 * @param path the request's path, without its query (e.g. {@code /v1/completions})
 * @param startId the engine start the request was admitted to; null when admitted without one
 * @param status the status the client got (the engine's, or the gateway's 502, 504, 413); 0 when the client went away
 *     before one was sent, or when the request was {@code sentAgain}
 * @param engineStatus the engine's status; null when its answer never began
 * @param retryAfter whether the engine's answer carried {@code Retry-After}
 * @param seen what the answer's body showed
 * @param ending how it ended
 * @param timeToFirstByte from the request's arrival to the first byte of the answer's body; null when none came
 * @param startedAt when the request arrived
 * @param endedAt when it ended
 * @param sentAgain whether its failure was kept from the client, the request waiting to be sent once more
 *     ({@code readygate.gateway.retry-before-first-byte}): the client's answer is the next attempt's
 */
public record ProxiedExchange(
        String path,
        @Nullable String startId,
        int status,
        @Nullable Integer engineStatus,
        boolean retryAfter,
        StreamWatch.Seen seen,
        ExchangeEnding ending,
        @Nullable Duration timeToFirstByte,
        Instant startedAt,
        Instant endedAt,
        boolean sentAgain) {

    /** Whether the answer was server-sent events ({@code text/event-stream}). */
    public boolean streamed() {
        return seen.body() == StreamWatch.Body.EVENT_STREAM;
    }

    /** The body bytes the engine sent and the gateway passed on. */
    public long bytes() {
        return seen.bytes();
    }

    /** The server-sent events among them (0 for an answer that is not a stream). */
    public long events() {
        return seen.events();
    }

    /** From the request's arrival to its end. */
    public Duration duration() {
        return Duration.between(startedAt, endedAt);
    }

    /** The exchange as {@link TrafficJudge} reads it. */
    TrafficJudge.Exchange judged() {
        return new TrafficJudge.Exchange(
                path.endsWith("/completions") ? TrafficJudge.Kind.GENERATION : TrafficJudge.Kind.OTHER,
                engineStatus,
                retryAfter,
                seen,
                ending,
                startedAt,
                endedAt);
    }
}
