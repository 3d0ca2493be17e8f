package dev.readygate.gateway;

import dev.readygate.engine.EngineConnections;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The traffic port's handler: a request on one of the engine's routes ({@link #proxied}) is admitted or refused
 * ({@link TrafficAdmission}), then forwarded to the engine with its headers (the client's {@code Authorization} among
 * them, untouched) and body, and the engine's answer is passed back buffer by buffer, each flushed as it comes, so a
 * server-sent event reaches the client when the engine wrote it. The answer's status and headers are sent with its
 * first body byte, so a 504 can still be answered while none came. A client that goes away cancels the engine's
 * request (its connection to the engine is closed). Each forwarded exchange's end is reported to {@link ExchangeEnds}.
 * Nothing of a request or an answer is logged or kept: only counts.
 */
final class GatewayProxy implements BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> {

    /** The engine's OpenAI-compatible routes, proxied under this prefix. */
    static final String OPENAI_PREFIX = "/v1/";

    /**
     * The engine's other routes a client uses (vLLM's tokenizer, version, pooling and scoring routes, SageMaker's
     * {@code /invocations}). Not proxied: {@code /health}, {@code /metrics}, {@code /load} and the development routes
     * ({@code /sleep}, {@code /wake_up}, {@code /server_info}, ...), which are the operator's, not a client's.
     */
    static final Set<String> OTHER_ROUTES = Set.of(
            "/tokenize", "/detokenize", "/version", "/pooling", "/classify", "/score", "/rerank", "/invocations");

    /** Hop-by-hop headers (RFC 9110 7.6.1), never forwarded either way; {@code Host} is the engine's own. */
    private static final Set<String> HOP_BY_HOP = Set.of(
            "connection",
            "keep-alive",
            "proxy-connection",
            "proxy-authenticate",
            "proxy-authorization",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade");

    private final EngineConnections engine;
    private final long maxRequestBytes;
    private final StreamTimeouts timeouts;
    private final TrafficAdmission admission;
    private final boolean retries;
    private final ExchangeEnds ends;
    private final Clock clock;
    private final TrafficEvents events;

    GatewayProxy(
            EngineConnections engine,
            long maxRequestBytes,
            StreamTimeouts timeouts,
            TrafficAdmission admission,
            boolean retries,
            ExchangeEnds ends,
            Clock clock,
            TrafficEvents events) {
        this.engine = engine;
        this.maxRequestBytes = maxRequestBytes;
        this.timeouts = timeouts;
        this.admission = admission;
        this.retries = retries;
        this.ends = ends;
        this.clock = clock;
        this.events = events;
    }

    /** vLLM's administrative routes under the OpenAI prefix (runtime LoRA loading): the operator's, never forwarded. */
    static final Set<String> ADMINISTRATIVE_ROUTES = Set.of("/v1/load_lora_adapter", "/v1/unload_lora_adapter");

    /** Whether a path is one of the engine's routes the gateway forwards. */
    static boolean proxied(String path) {
        return (path.startsWith(OPENAI_PREFIX) && !ADMINISTRATIVE_ROUTES.contains(path)) || OTHER_ROUTES.contains(path);
    }

    @Override
    public Publisher<Void> apply(HttpServerRequest request, HttpServerResponse response) {
        String path = request.fullPath();
        if (!proxied(path)) {
            return refuse(
                    response,
                    new GatewayAnswer(OpenAiError.ROUTE_NOT_PROXIED, "readygate's gateway does not forward " + path));
        }
        long declared = contentLength(request.requestHeaders());
        if (declared > maxRequestBytes) {
            return refuse(response, tooLarge());
        }
        if (!retries || !hasBody(request)) {
            return admission.admit().flatMap(admitted -> decided(request, response, path, admitted, null));
        }
        // Sent once more after a failure: the body is kept whole (at most max-request-size) to be sent again.
        return collected(request)
                .flatMap(
                        body -> admission.admit().flatMap(admitted -> decided(request, response, path, admitted, body)))
                .onErrorResume(RequestTooLarge.class, tooLarge -> refuse(response, tooLarge()));
    }

    /** The request forwarded once admitted, or answered as refused. */
    private Mono<Void> decided(
            HttpServerRequest request,
            HttpServerResponse response,
            String path,
            Admission admission,
            byte @Nullable [] body) {
        return switch (admission) {
            case Admission.Admitted admitted -> forward(request, response, path, admitted, body, retries);
            case Admission.Refused refused -> refused(response, refused);
        };
    }

    /** A request the admission refused: its {@code Retry-After}, its connection closed when it says so. */
    private Mono<Void> refused(HttpServerResponse response, Admission.Refused refused) {
        response.header(HttpHeaderNames.RETRY_AFTER, Long.toString(refused.retryAfterSeconds()));
        if (refused.closeConnection()) {
            response.keepAlive(false);
        }
        return refuse(response, new GatewayAnswer(refused.error(), refused.message()));
    }

    /** A request the gateway answers itself, told to the traffic meters. */
    private Mono<Void> refuse(HttpServerResponse response, GatewayAnswer answer) {
        events.refused(answer.error());
        return answer(response, answer);
    }

    private GatewayAnswer tooLarge() {
        return new GatewayAnswer(
                OpenAiError.REQUEST_TOO_LARGE,
                "The request body is larger than readygate.gateway.max-request-size (" + maxRequestBytes + " bytes)");
    }

    /**
     * The request sent to the engine and its answer passed back. A first attempt whose connection failed before any
     * answer ({@link Exchange#mayBeSentAgain}) is, with {@code retries} on, reported as the engine's failure and waits
     * to be sent once more ({@link TrafficAdmission#retry}); its client saw nothing of it.
     *
     * @param body the request's body kept whole to be sent again; null: passed on as it is read
     * @param mayRetry whether this attempt may be followed by another
     */
    private Mono<Void> forward(
            HttpServerRequest request,
            HttpServerResponse response,
            String path,
            Admission.Admitted admitted,
            byte @Nullable [] body,
            boolean mayRetry) {
        Exchange exchange =
                new Exchange(path, admitted.startId(), clientKey(request.requestHeaders()), admitted.ticket(), clock);
        Flux<ByteBuf> answer = timeouts.apply(send(request, exchange, body));
        return answer.switchOnFirst((first, rest) -> {
                    if (first.hasValue() || first.isOnComplete()) {
                        return respond(response, exchange, rest);
                    }
                    Throwable failure = first.getThrowable();
                    if (!first.isOnError() || failure == null) {
                        return Mono.<Void>empty();
                    }
                    GatewayAnswer failed = exchange.failedBeforeAnswer(failure, tooLarge());
                    if (!mayRetry || !exchange.mayBeSentAgain()) {
                        return answer(response, failed);
                    }
                    exchange.sentAgain();
                    exchange.end(SignalType.ON_ERROR, ends);
                    return admission
                            .retry(admitted.startId())
                            .flatMap(next -> switch (next) {
                                case Admission.Admitted again -> forward(request, response, path, again, body, false);
                                case Admission.Refused refused -> refused(response, refused);
                            })
                            .switchIfEmpty(Mono.defer(() -> answer(response, failed)));
                })
                .doOnSubscribe(subscription -> ends.began(admitted.startId()))
                // After the answer's completion went to the server, which wrote its last chunk: the client has it all.
                .doFinally(signal -> {
                    exchange.end(signal, ends);
                    ends.released();
                })
                .then();
    }

    /** The client's body, read whole (failed past the limit), to be sent as often as needed. */
    private Mono<byte[]> collected(HttpServerRequest request) {
        return limited(request)
                .collect(java.io.ByteArrayOutputStream::new, (out, buffer) -> {
                    try {
                        out.writeBytes(ByteBufUtil.getBytes(buffer));
                    } finally {
                        buffer.release();
                    }
                })
                .map(java.io.ByteArrayOutputStream::toByteArray);
    }

    /**
     * The request to the engine, on a connection of the client's own event loop, its body read whole first (at most
     * max-request-size) and sent with its head in one write; the answer's head is kept on the exchange, its body
     * buffers are the flux. An engine that answered 400 or more is not asked again on that connection: it may have
     * answered before it read the body (llama-server checks the API key first), which would be read as the next head.
     */
    private Flux<ByteBuf> send(HttpServerRequest request, Exchange exchange, byte @Nullable [] body) {
        HttpHeaders headers = new DefaultHttpHeaders();
        copy(request.requestHeaders(), headers);
        // The traffic server answers the client's 100-continue as it reads the body; the engine gets the body
        // without being asked.
        headers.remove(HttpHeaderNames.EXPECT);
        EventLoop[] loop = new EventLoop[1];
        request.withConnection(connection -> loop[0] = connection.channel().eventLoop());
        Function<byte @Nullable [], Flux<ByteBuf>> sent = whole ->
                engine.exchange(loop[0], request.method(), request.uri(), headers, whole, head -> exchange.head = head);
        return body != null || !hasBody(request)
                ? sent.apply(body)
                : collected(request).flatMapMany(sent);
    }

    /** The client's API key (its {@code Authorization} bearer token): never shown in an engine's error message. */
    private static List<String> clientKey(HttpHeaders headers) {
        String authorization = headers.get(HttpHeaderNames.AUTHORIZATION);
        if (authorization == null || authorization.isBlank()) {
            return List.of();
        }
        String value = authorization.strip();
        int space = value.indexOf(' ');
        String token = space < 0 ? value : value.substring(space + 1).strip();
        return token.isEmpty() ? List.of() : List.of(token);
    }

    private static boolean hasBody(HttpServerRequest request) {
        return contentLength(request.requestHeaders()) > 0
                || request.requestHeaders().contains(HttpHeaderNames.TRANSFER_ENCODING, "chunked", true);
    }

    /** The declared body length, -1 when none or unreadable (a chunked body declares none). */
    private static long contentLength(HttpHeaders headers) {
        String value = headers.get(HttpHeaderNames.CONTENT_LENGTH);
        if (value == null) {
            return -1;
        }
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The client's body, failed once it grows past the limit (a chunked body declares no length). */
    private Flux<ByteBuf> limited(HttpServerRequest request) {
        AtomicLong seen = new AtomicLong();
        return request.receive().handle((buffer, sink) -> {
            if (seen.addAndGet(buffer.readableBytes()) > maxRequestBytes) {
                sink.error(new RequestTooLarge());
            } else {
                sink.next(buffer.retain());
            }
        });
    }

    /** The engine's status and headers, then its body, each buffer flushed as it comes. */
    private Mono<Void> respond(HttpServerResponse response, Exchange exchange, Flux<ByteBuf> body) {
        HttpResponse head = exchange.requireHead();
        response.status(head.status());
        copy(head.headers(), response.responseHeaders());
        exchange.answered(head);
        // Reactor Netty cancels the body when the client's connection closes, and then completes the send: the cancel
        // is the one sign that the client went away (it also closes the connection to the engine).
        // A failure once the status went out (a stall, the engine cut its answer) can only cut the client's stream: the
        // connection is closed here, without the last chunk, so the client cannot take the stream for a whole one.
        // The exchange's end is reported as the engine's answer ends, before the client has its last byte: a client
        // that sends its next request once it read the answer finds the verdict applied (a failed answer's successor is
        // refused once the failures took the engine out, not forwarded in the moment between).
        // A failure the body did not bring is the write's to the client: the client went away (its connection closed or
        // reset as an event was on its way), which is the client's doing, never the engine's.
        Flux<ByteBuf> passed = body.doOnNext(exchange::passed)
                .doOnError(exchange::failedAfterAnswer)
                .doOnCancel(exchange::clientWentAway)
                .doOnComplete(() -> exchange.end(SignalType.ON_COMPLETE, ends));
        return response.send(passed, buffer -> true).then().onErrorResume(failure -> {
            if (!exchange.engineFailed()) {
                exchange.clientWentAway();
            }
            exchange.end(SignalType.ON_ERROR, ends);
            response.withConnection(connection -> connection.channel().close());
            return Mono.empty();
        });
    }

    private static Mono<Void> answer(HttpServerResponse response, GatewayAnswer answer) {
        return response.status(answer.error().status())
                .header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .sendByteArray(Mono.just(answer.error().body(answer.message())))
                .then();
    }

    /** Every header but the hop-by-hop ones, those the {@code Connection} header names among them, and {@code Host}. */
    private static void copy(HttpHeaders from, HttpHeaders to) {
        List<String> connection = from.getAll(HttpHeaderNames.CONNECTION);
        Set<String> named = connection.isEmpty() ? Set.of() : new java.util.HashSet<>();
        for (String value : connection) {
            for (String token : value.split(",")) {
                named.add(token.strip().toLowerCase(Locale.ROOT));
            }
        }
        from.forEach(header -> {
            String name = header.getKey().toLowerCase(Locale.ROOT);
            if (!HOP_BY_HOP.contains(name) && !name.equals("host") && !named.contains(name)) {
                to.add(header.getKey(), header.getValue());
            }
        });
    }

    /** The client's body passed the limit while it was forwarded. */
    static final class RequestTooLarge extends RuntimeException {
        RequestTooLarge() {
            super("request body over readygate.gateway.max-request-size", null, false, false);
        }
    }
}
