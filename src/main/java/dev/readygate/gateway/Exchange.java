package dev.readygate.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.SignalType;
import reactor.netty.http.client.HttpClientResponse;

/**
 * One forwarded exchange's counts and how it ended, written on its event loop and reported once as a
 * {@link ProxiedExchange}; what the client is answered when the engine's answer never began.
 */
final class Exchange {
    private final String path;
    private final LongSupplier nanoTime;
    private final long startNanos;
    private final AtomicBoolean reported = new AtomicBoolean();
    volatile @Nullable HttpClientResponse head;
    private @Nullable EventCounter events;
    private int status;
    private long bytes;
    private long firstByteNanos = -1;
    private @Nullable ExchangeEnding failure;
    private volatile boolean clientGone;

    Exchange(String path, LongSupplier nanoTime) {
        this.path = path;
        this.nanoTime = nanoTime;
        this.startNanos = nanoTime.getAsLong();
    }

    HttpClientResponse requireHead() {
        HttpClientResponse known = head;
        if (known == null) {
            throw new IllegalStateException("the engine's answer began without a head");
        }
        return known;
    }

    void answered(HttpClientResponse head) {
        status = head.status().code();
        String type = head.responseHeaders().get(HttpHeaderNames.CONTENT_TYPE);
        if (type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream")) {
            events = new EventCounter();
        }
    }

    void passed(ByteBuf buffer) {
        if (firstByteNanos < 0) {
            firstByteNanos = nanoTime.getAsLong();
        }
        bytes += buffer.readableBytes();
        EventCounter counter = events;
        if (counter != null) {
            counter.count(buffer);
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
                this.failure = ExchangeEnding.ENGINE_UNREACHABLE;
                yield new GatewayAnswer(OpenAiError.ENGINE_UNREACHABLE, "The engine could not be reached");
            }
        };
        status = answer.error().status();
        return answer;
    }

    /** The answer began and then failed: the client's stream is cut (its connection closed). */
    void failedAfterAnswer(Throwable failure) {
        if (this.failure == null) {
            this.failure = failure instanceof StreamTimeouts.TimedOut timedOut
                            && timedOut.limit() == StreamTimeouts.Limit.BETWEEN_EVENTS
                    ? ExchangeEnding.STALLED
                    : ExchangeEnding.ENGINE_CUT;
        }
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
                    case ON_ERROR -> failure != null ? failure : ExchangeEnding.ENGINE_CUT;
                    default -> failure != null ? failure : ExchangeEnding.COMPLETED;
                };
        long now = nanoTime.getAsLong();
        ends.ended(new ProxiedExchange(
                path,
                status,
                events != null,
                bytes,
                events == null ? 0 : events.events(),
                ending,
                firstByteNanos < 0 ? null : Duration.ofNanos(firstByteNanos - startNanos),
                Duration.ofNanos(now - startNanos)));
    }
}
