package dev.readygate.gateway;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One exchange the gateway sent to the engine, reported once, when it ended. Holds no content: no prompt, no
 * completion, no header.
 *
 * @param path the request's path, without its query (e.g. {@code /v1/completions})
 * @param status the status the client got (the engine's, or the gateway's 502, 504, 413); 0 when the client went away
 *     before one was sent
 * @param streamed whether the answer was server-sent events ({@code text/event-stream})
 * @param bytes the body bytes the engine sent and the gateway passed on
 * @param events the server-sent events among them (0 for an answer that is not a stream)
 * @param ending how it ended
 * @param timeToFirstByte from the request's arrival to the first byte of the answer's body; null when none came
 * @param duration from the request's arrival to its end
 */
public record ProxiedExchange(
        String path,
        int status,
        boolean streamed,
        long bytes,
        long events,
        ExchangeEnding ending,
        @Nullable Duration timeToFirstByte,
        Duration duration) {}
