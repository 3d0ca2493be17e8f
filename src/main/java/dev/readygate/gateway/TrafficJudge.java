package dev.readygate.gateway;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Judges one proxied exchange as readygate judges its own probes (status, an error event inside a 200 stream, a
 * stream that ends without {@code [DONE]}, a stall, no first byte in time), with one difference: the request is a
 * client's, so a client's mistake is never the engine's fault. A pure function of the exchange's summary.
 *
 * <p>The rules, first match wins:
 *
 * <ol>
 *   <li>A request that grew past the gateway's size limit is the client's ({@code client_error}). A refused
 *       connection is the engine's ({@code refused}: nothing listens), and so is one that was not made within the
 *       connect limit ({@code connect_timeout}).
 *   <li>With no answer yet: the client that went away cancelled ({@code client_cancelled}: it chose not to wait; the
 *       engine's bound on waiting is the first-byte limit, which is its own row); the first-byte limit passing is
 *       {@code first_byte_timeout}; the engine closing the connection is {@code connection_closed}.
 *   <li>A status that is not 2xx decides, whatever the body or the ending. 408 and 429 are {@code busy}: 429 is the
 *       engine shedding load, and 408 says only that the request came too slowly for the engine, a slow client or a
 *       loaded engine, so neither is blamed. A 503 with {@code Retry-After} is {@code busy} (the engine says when to
 *       come back); without it, it is llama.cpp's {@code Loading model} or a dead engine: {@code engine_status}. 501
 *       is the client's ({@code client_error}: it asked for what this engine does not implement, as vLLM answers a
 *       {@code NotImplementedError}); every other 5xx is {@code engine_status}; every other 4xx is
 *       {@code client_error}; a 1xx or 3xx is the engine answering as HTTP says ({@code success}, proving nothing).
 *   <li>In a 2xx answer, an error (event or body) comes first, even when the client went away after it or
 *       {@code [DONE]} followed (vLLM writes {@code [DONE]} after its error event): with a 4xx code other than 408 and
 *       429 it is {@code client_error_event} (vLLM found the request wrong once under way: a {@code ValueError}, a
 *       template error), otherwise {@code error_event} (vLLM gives a dead engine core and a failed generation 500).
 *   <li>An event or a JSON body that does not parse is {@code malformed}: a client cannot make the engine write one.
 *   <li>A stream that passed {@code [DONE]} is a {@code success}, however the connection ended after it.
 *   <li>Otherwise the ending decides: the client going away is {@code client_cancelled}; a stall, {@code stalled};
 *       the first-byte limit, {@code first_byte_timeout}; the engine closing the connection mid-answer,
 *       {@code truncated_stream}; an answer that completed is a {@code success} when it is not a stream, and a stream
 *       that completed without {@code [DONE]} is {@code truncated_stream}, unless the watch stopped reading at an
 *       event too large for it ({@code not_judged}: the {@code [DONE]} may have passed unread).
 * </ol>
 */
public final class TrafficJudge {

    private TrafficJudge() {}

    /** What the request asked. */
    public enum Kind {
        /** {@code /v1/completions}, {@code /v1/chat/completions}: a success proves the engine generates. */
        GENERATION,
        /** Any other route ({@code /v1/models}, {@code /tokenize}, ...): a success proves the engine answers. */
        OTHER
    }

    /**
     * One exchange's summary.
     *
     * @param kind what the request asked
     * @param status the engine's HTTP status, or null when no answer began
     * @param retryAfter whether the engine's answer carried {@code Retry-After}
     * @param seen what the {@link StreamWatch} saw of the body
     * @param ending how it ended
     * @param startedAt when the request was sent to the engine
     * @param endedAt when it ended
     */
    public record Exchange(
            Kind kind,
            @Nullable Integer status,
            boolean retryAfter,
            StreamWatch.Seen seen,
            ExchangeEnding ending,
            Instant startedAt,
            Instant endedAt) {

        public Exchange {
            if (status != null
                    && (ending == ExchangeEnding.CONNECT_REFUSED || ending == ExchangeEnding.CONNECT_TIMED_OUT)) {
                throw new IllegalArgumentException("an exchange without a connection has no status");
            }
            if (status == null && (ending == ExchangeEnding.COMPLETED || ending == ExchangeEnding.STALLED)) {
                throw new IllegalArgumentException("an answer that " + ending + " has a status");
            }
            if (endedAt.isBefore(startedAt)) {
                throw new IllegalArgumentException("an exchange ends after it starts");
            }
        }
    }

    /**
     * The judgement.
     *
     * @param outcome the outcome
     * @param detail what happened, safe to log and show (only the engine's error message, made safe, is quoted)
     * @param startedAt when the request was sent
     * @param endedAt when it ended
     * @param provesGeneration a success that proves the engine generates: a generation answered whole, and for a
     *     stream at least one token passed
     */
    public record Verdict(
            TrafficOutcome outcome, String detail, Instant startedAt, Instant endedAt, boolean provesGeneration) {}

    /** The verdict on {@code exchange}. */
    public static Verdict judge(Exchange exchange) {
        TrafficOutcome outcome = outcome(exchange);
        StreamWatch.Seen seen = exchange.seen();
        boolean proves = outcome == TrafficOutcome.SUCCESS
                && exchange.kind() == Kind.GENERATION
                && isSuccessful(exchange.status())
                && (seen.body() != StreamWatch.Body.EVENT_STREAM || seen.tokenEvents() > 0);
        return new Verdict(outcome, detail(outcome, exchange), exchange.startedAt(), exchange.endedAt(), proves);
    }

    private static TrafficOutcome outcome(Exchange exchange) {
        Integer status = exchange.status();
        switch (exchange.ending()) {
            case REQUEST_TOO_LARGE -> {
                return TrafficOutcome.CLIENT_ERROR;
            }
            case CONNECT_REFUSED -> {
                return TrafficOutcome.REFUSED;
            }
            case CONNECT_TIMED_OUT -> {
                return TrafficOutcome.CONNECT_TIMEOUT;
            }
            default -> {}
        }
        if (status == null) {
            return switch (exchange.ending()) {
                case CLIENT_CANCELLED -> TrafficOutcome.CLIENT_CANCELLED;
                case FIRST_BYTE_TIMED_OUT -> TrafficOutcome.FIRST_BYTE_TIMEOUT;
                default -> TrafficOutcome.CONNECTION_CLOSED;
            };
        }
        if (!isSuccessful(status)) {
            return byStatus(status, exchange.retryAfter());
        }
        StreamWatch.Seen seen = exchange.seen();
        if (seen.error() != null) {
            Integer code = seen.errorCode();
            return code != null && isClientError(code) ? TrafficOutcome.CLIENT_ERROR_EVENT : TrafficOutcome.ERROR_EVENT;
        }
        if (seen.unreadable() == StreamWatch.Unreadable.MALFORMED) {
            return TrafficOutcome.MALFORMED;
        }
        if (seen.done()) {
            return TrafficOutcome.SUCCESS;
        }
        return switch (exchange.ending()) {
            case CLIENT_CANCELLED -> TrafficOutcome.CLIENT_CANCELLED;
            case STALLED -> TrafficOutcome.STALLED;
            case FIRST_BYTE_TIMED_OUT -> TrafficOutcome.FIRST_BYTE_TIMEOUT;
            case ENGINE_CLOSED, CONNECT_REFUSED, CONNECT_TIMED_OUT, REQUEST_TOO_LARGE ->
                TrafficOutcome.TRUNCATED_STREAM;
            case COMPLETED -> {
                if (seen.body() != StreamWatch.Body.EVENT_STREAM) {
                    yield TrafficOutcome.SUCCESS;
                }
                yield seen.unreadable() == StreamWatch.Unreadable.TOO_LARGE
                        ? TrafficOutcome.NOT_JUDGED
                        : TrafficOutcome.TRUNCATED_STREAM;
            }
        };
    }

    private static TrafficOutcome byStatus(int status, boolean retryAfter) {
        if (status == 408 || status == 429 || (status == 503 && retryAfter)) {
            return TrafficOutcome.BUSY;
        }
        if (status == 501 || isClientError(status)) {
            return TrafficOutcome.CLIENT_ERROR;
        }
        return status >= 500 ? TrafficOutcome.ENGINE_STATUS : TrafficOutcome.SUCCESS;
    }

    private static boolean isSuccessful(@Nullable Integer status) {
        return status != null && status >= 200 && status < 300;
    }

    /** A 4xx that blames the request: not 408 (too slow, either side) nor 429 (load). */
    private static boolean isClientError(int code) {
        return code >= 400 && code < 500 && code != 408 && code != 429;
    }

    private static String detail(TrafficOutcome outcome, Exchange exchange) {
        StreamWatch.Seen seen = exchange.seen();
        String error = seen.error() == null ? "" : ": " + seen.error();
        String events = seen.events() == 1 ? "1 event" : seen.events() + " events";
        return switch (outcome) {
            case SUCCESS ->
                seen.body() == StreamWatch.Body.EVENT_STREAM
                        ? "HTTP " + exchange.status() + ", " + events + " (" + seen.tokenEvents() + " with tokens)"
                        : "HTTP " + exchange.status();
            case CLIENT_ERROR ->
                exchange.ending() == ExchangeEnding.REQUEST_TOO_LARGE
                        ? "the request grew past the gateway's size limit"
                        : "HTTP " + exchange.status() + error;
            case ENGINE_STATUS, BUSY -> "HTTP " + exchange.status() + error;
            case CLIENT_ERROR_EVENT, ERROR_EVENT ->
                (seen.body() == StreamWatch.Body.EVENT_STREAM
                                ? "error event in a " + exchange.status() + " stream after " + events
                                : "error object in a " + exchange.status() + " body")
                        + (seen.errorCode() == null ? "" : " (code " + seen.errorCode() + ")")
                        + error;
            case CLIENT_CANCELLED ->
                exchange.status() == null
                        ? "the client went away before the engine answered"
                        : "the client went away after " + events + " (" + seen.tokenEvents() + " with tokens)";
            case NOT_JUDGED -> "an event too large to read after " + events + "; the stream's end is not known";
            case TRUNCATED_STREAM ->
                (exchange.ending() == ExchangeEnding.ENGINE_CLOSED
                                ? "the engine closed the connection"
                                : "the answer ended")
                        + " after " + events + ", before "
                        + (seen.body() == StreamWatch.Body.EVENT_STREAM ? "[DONE]" : "the body's end");
            case MALFORMED ->
                seen.body() == StreamWatch.Body.EVENT_STREAM
                        ? "a stream event that is not JSON after " + events
                        : "a JSON body that does not parse";
            case STALLED -> "the stream stalled after " + events;
            case FIRST_BYTE_TIMEOUT -> "nothing of the answer within the first-byte limit";
            case CONNECT_TIMEOUT -> "no connection to the engine within the connect limit";
            case CONNECTION_CLOSED -> "the engine closed the connection before answering";
            case REFUSED -> "connection refused";
        };
    }
}
