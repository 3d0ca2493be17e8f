package dev.readygate.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.SignalType;

/**
 * One forwarded exchange: what its answer showed ({@link StreamWatch}: counts, times, an error's message made safe,
 * never the text) and how it ended, written on its event loop and reported once as a {@link ProxiedExchange}; what
 * the client is answered when the engine's answer never began.
 */
final class Exchange {
    private final String path;
    private final @Nullable String startId;
    private final List<String> secrets;
    private final Clock clock;
    private final Instant started;
    private final AtomicBoolean reported = new AtomicBoolean();
    volatile @Nullable HttpResponse head;
    private @Nullable StreamWatch watch;
    private int status;
    private @Nullable Integer engineStatus;
    private boolean retryAfter;
    private @Nullable Instant firstByte;
    private @Nullable ExchangeEnding failure;
    private volatile boolean clientGone;
    private final Admission.Ticket ticket;
    private boolean sentAgain;

    /**
     * @param startId the engine start it was admitted to (null: admitted without one)
     * @param secrets what the engine's error messages must not show (the client's API key)
     * @param ticket its place among the requests in flight, given back as it ends
     */
    Exchange(String path, @Nullable String startId, List<String> secrets, Admission.Ticket ticket, Clock clock) {
        this.path = path;
        this.startId = startId;
        this.secrets = List.copyOf(secrets);
        this.ticket = ticket;
        this.clock = clock;
        this.started = clock.instant();
    }

    HttpResponse requireHead() {
        HttpResponse known = head;
        if (known == null) {
            throw new IllegalStateException("the engine's answer began without a head");
        }
        return known;
    }

    void answered(HttpResponse head) {
        status = head.status().code();
        engineStatus = status;
        retryAfter = head.headers().contains(HttpHeaderNames.RETRY_AFTER);
        String type = head.headers().get(HttpHeaderNames.CONTENT_TYPE);
        String lower = type == null ? "" : type.toLowerCase(Locale.ROOT);
        StreamWatch.Body body = lower.startsWith("text/event-stream")
                ? StreamWatch.Body.EVENT_STREAM
                : lower.startsWith("application/json") ? StreamWatch.Body.JSON : StreamWatch.Body.OTHER;
        watch = new StreamWatch(body, StreamWatch.DEFAULT_MAX_EVENT_BYTES, secrets);
    }

    void passed(ByteBuf buffer) {
        Instant now = clock.instant();
        if (firstByte == null) {
            firstByte = now;
        }
        StreamWatch seen = watch;
        if (seen != null) {
            seen.feed(buffer, now);
        }
    }

    /** What the client is answered when the engine's answer never began. */
    GatewayAnswer failedBeforeAnswer(Throwable failure, GatewayAnswer tooLarge) {
        GatewayAnswer answer = switch (failure) {
            case GatewayProxy.RequestTooLarge t -> {
                this.failure = ExchangeEnding.REQUEST_TOO_LARGE;
                yield tooLarge;
            }
            case StreamTimeouts.TimedOut t -> {
                this.failure = ExchangeEnding.FIRST_BYTE_TIMED_OUT;
                yield new GatewayAnswer(
                        OpenAiError.ENGINE_TIMEOUT,
                        "The engine sent no answer within readygate.gateway.first-byte-timeout");
            }
            case ConnectTimeoutException t -> {
                this.failure = ExchangeEnding.CONNECT_TIMED_OUT;
                yield new GatewayAnswer(
                        OpenAiError.ENGINE_CONNECT_TIMEOUT,
                        "No connection to the engine within readygate.gateway.connect-timeout");
            }
            default -> {
                // Refused: nothing listens (the engine is down); otherwise it closed or reset the connection.
                this.failure = failure instanceof ConnectException
                        ? ExchangeEnding.CONNECT_REFUSED
                        : ExchangeEnding.ENGINE_CLOSED;
                yield new GatewayAnswer(OpenAiError.ENGINE_UNREACHABLE, "The engine could not be reached");
            }
        };
        status = answer.error().status();
        return answer;
    }

    /** Whether the engine's answer, once begun, failed ({@link #failedAfterAnswer}): its failure, not the client's. */
    boolean engineFailed() {
        return failure != null;
    }

    /** The answer began and then failed: the client's stream is cut (its connection closed). */
    void failedAfterAnswer(Throwable failure) {
        if (this.failure == null) {
            this.failure = failure instanceof StreamTimeouts.TimedOut timedOut
                            && timedOut.limit() == StreamTimeouts.Limit.BETWEEN_EVENTS
                    ? ExchangeEnding.STALLED
                    : ExchangeEnding.ENGINE_CLOSED;
        }
    }

    /**
     * Whether the request may be sent once more: its connection to the engine was refused or closed before any answer
     * (the engine went away). Not a timeout (the engine may still be working on it) nor an answer (the request may be
     * what failed it).
     */
    boolean mayBeSentAgain() {
        return head == null && (failure == ExchangeEnding.CONNECT_REFUSED || failure == ExchangeEnding.ENGINE_CLOSED);
    }

    /** Its failure is not the client's answer: the request waits to be sent once more. */
    void sentAgain() {
        sentAgain = true;
        status = 0;
    }

    void clientWentAway() {
        clientGone = true;
    }

    void end(SignalType signal, ExchangeEnds ends) {
        if (!reported.compareAndSet(false, true)) {
            return;
        }
        ExchangeEnding ending = clientGone
                ? ExchangeEnding.CLIENT_CANCELLED
                : switch (signal) {
                    case CANCEL -> ExchangeEnding.CLIENT_CANCELLED;
                    case ON_ERROR -> failure != null ? failure : ExchangeEnding.ENGINE_CLOSED;
                    default -> failure != null ? failure : ExchangeEnding.COMPLETED;
                };
        Instant now = clock.instant();
        StreamWatch known = watch;
        StreamWatch.Seen seen = known == null ? StreamWatch.Seen.nothing(StreamWatch.Body.OTHER) : known.finish(now);
        Instant first = firstByte;
        ends.ended(new ProxiedExchange(
                path,
                startId,
                status,
                engineStatus,
                retryAfter,
                seen,
                ending,
                first == null ? null : Duration.between(started, first),
                started,
                now,
                sentAgain));
        ticket.close();
    }
}
