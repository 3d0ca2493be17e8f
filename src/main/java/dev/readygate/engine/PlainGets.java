package dev.readygate.engine;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * readygate's {@code GET}s to the engine, among them those it sends on every cycle of its probe loop ({@code /health}
 * every {@code readygate.probe.health-interval}, 50 ms by default; {@code /metrics}, {@code /v1/models} and
 * llama-server's {@code /slots} every second while ready), on a kept plain connection ({@link EngineConnections}) of
 * the engine client's loop, not through {@code WebClient}, whose per-request setup cost a {@code /health} poll about
 * 1 ms of CPU on this project's machines (docs/benchmarks.md §4b). One connection carries them one after the other,
 * as the pool's last-used one did (the pool keeps the probes' {@code POST}s): on llama-server, where each open
 * connection holds one of its few HTTP threads, readygate holds no more than before. Each answer's status and headers
 * are kept, and its body read whole up to a bound.
 */
final class PlainGets {

    /**
     * An engine's answer.
     *
     * @param head its status and headers
     * @param body its body, or as much of it as came within the bound
     * @param tooLarge whether the body went past the bound (the rest was not read; the connection was closed)
     * @param interrupted how the connection failed during the body, or null
     */
    record Answer(
            HttpResponse head,
            byte[] body,
            boolean tooLarge,
            @Nullable Throwable interrupted) {

        int status() {
            return head.status().code();
        }

        /** Whether {@code body} is all of it. */
        boolean whole() {
            return !tooLarge && interrupted == null;
        }

        /** Whether the body is an HTML page (a proxy's or a framework's error page). */
        boolean html() {
            String type = head.headers().get(HttpHeaderNames.CONTENT_TYPE);
            return type != null && type.strip().toLowerCase(Locale.ROOT).startsWith("text/html");
        }
    }

    private final EngineConnections connections;
    private final EventLoop loop;
    private final HttpHeaders headers;
    private final HttpHeaders jsonHeaders;
    private final int maxBodyBytes;

    /**
     * @param headers sent with every request (the API key's {@code Authorization})
     * @param maxBodyBytes the most of a body kept; the connection is closed on a longer one
     */
    PlainGets(EngineConnections connections, EventLoop loop, HttpHeaders headers, int maxBodyBytes) {
        this.connections = connections;
        this.loop = loop;
        this.headers = headers;
        this.jsonHeaders = headers.copy().set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON);
        this.maxBodyBytes = maxBodyBytes;
    }

    /**
     * {@code GET path}, asking for JSON or not: its answer once its body ended or passed the bound. Fails only when no
     * answer began (refused, reset, closed, a connect timeout) or what came is not HTTP; a connection that ends during
     * the body gives what came, with {@link Answer#interrupted} saying how it ended.
     */
    Mono<Answer> get(String path, boolean json) {
        return Mono.defer(() -> {
            Reading reading = new Reading(maxBodyBytes);
            return connections
                    .exchange(loop, HttpMethod.GET, path, json ? jsonHeaders : headers, null, reading::head)
                    .doOnNext(reading::add)
                    .takeWhile(buffer -> !reading.tooLarge)
                    .onErrorResume(failure -> {
                        if (reading.head == null) {
                            return Mono.error(failure);
                        }
                        reading.interrupted = failure;
                        return Mono.empty();
                    })
                    .then(Mono.fromCallable(reading::answer));
        });
    }

    /** What came back is not an HTTP answer. */
    static final class NotHttp extends IOException {
        NotHttp(Throwable cause) {
            super("not an HTTP answer: " + cause.getMessage(), null);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** One answer as it comes; written and read on the connection's loop. */
    private static final class Reading {
        private final int max;
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private @Nullable HttpResponse head;
        private boolean tooLarge;
        private @Nullable Throwable interrupted;

        Reading(int max) {
            this.max = max;
        }

        void head(HttpResponse response) {
            head = response;
        }

        void add(ByteBuf buffer) {
            try {
                int room = max - body.size();
                int readable = buffer.readableBytes();
                if (readable > room) {
                    tooLarge = true;
                }
                byte[] bytes = new byte[Math.min(room, readable)];
                buffer.getBytes(buffer.readerIndex(), bytes);
                body.writeBytes(bytes);
            } finally {
                buffer.release();
            }
        }

        Answer answer() throws NotHttp {
            HttpResponse known = head;
            if (known == null) {
                throw new IllegalStateException("the engine's answer ended without a head");
            }
            if (known.decoderResult().isFailure()) {
                throw new NotHttp(known.decoderResult().cause());
            }
            return new Answer(known, body.toByteArray(), tooLarge, interrupted);
        }
    }
}
