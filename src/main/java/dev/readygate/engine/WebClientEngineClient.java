package dev.readygate.engine;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.logging.RateLimitedLog;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.util.unit.DataSize;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;

/**
 * The {@link EngineClient}: its {@code GET}s on one kept plain connection ({@link PlainGets}), its {@code POST}s (the
 * probes' streams, {@code /tokenize}) over Spring's {@link WebClient} on Reactor Netty, both on one event loop of
 * their own. Each call is bounded in time (the request timeout, or the caller's timeout for streams) and in size
 * ({@code max-body-size}, per body, per stream event and per stream), and every failure is mapped to an
 * {@link EngineFailure} here, at the I/O edge. The {@code POST}s' timeouts run on the given {@link Scheduler}, the
 * {@code GET}s' on the loop; durations come from the given nanosecond ticker.
 */
final class WebClientEngineClient implements EngineClient, AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(WebClientEngineClient.class);

    /**
     * Below uvicorn's default keep-alive timeout (5 s): a pooled connection the server is closing just as a probe
     * reuses it would fail as RESET, a false alarm.
     */
    private static final Duration MAX_IDLE = Duration.ofSeconds(3);

    /** A failure that repeats on every probe (a TLS error) is logged once per this window, with a count. */
    private static final Duration WARNING_WINDOW = Duration.ofMinutes(1);

    private final WebClient webClient;
    private final ConnectionProvider connections;
    private final LoopResources loops;
    private final HeldConnection held;
    private final EngineConnections plainConnections;
    private final PlainGets gets;
    private final Scheduler plainTimer;
    private final EngineApiKey apiKey;
    private final RateLimitedLog warnings;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final int maxBodyBytes;
    private final String maxBodyText;
    private final LongSupplier ticker;
    private final Scheduler scheduler;
    private final EngineJson json = new EngineJson();

    /**
     * @param engine where the engine is, the timeouts and the body bound
     * @param apiKey sent as {@code Authorization: Bearer} on every request when present
     * @param ticker a nanosecond time source ({@code System::nanoTime} outside tests) for elapsed times and TTFT
     * @param scheduler the scheduler the {@code POST}s' timeouts run on
     * @param clock the time a repeated warning is rate-limited by
     */
    public WebClientEngineClient(
            ReadygateProperties.Engine engine,
            EngineApiKey apiKey,
            LongSupplier ticker,
            Scheduler scheduler,
            Clock clock) {
        this.apiKey = apiKey;
        this.warnings = new RateLimitedLog(logger, clock, WARNING_WINDOW);
        this.connectTimeout = engine.connectTimeout();
        this.requestTimeout = engine.requestTimeout();
        this.maxBodyBytes = (int) Math.min(engine.maxBodySize().toBytes(), Integer.MAX_VALUE - 8);
        this.maxBodyText = readable(engine.maxBodySize());
        this.ticker = ticker;
        this.scheduler = scheduler;
        // Last in, first out: the connection used last is used again, so sequential checks keep one connection open
        // and the others idle out after MAX_IDLE (first in, first out kept every connection ever opened alive by
        // turns; on llama-server each one holds an HTTP thread taken from real traffic).
        this.connections = ConnectionProvider.builder("readygate-engine")
                .maxConnections(16)
                .maxIdleTime(MAX_IDLE)
                .lifo()
                .build();
        // Its own event loop, not Reactor Netty's global ones: the engine client's shutdown (a stuck stream included)
        // then never holds up the web server's.
        this.loops = LoopResources.create("readygate-engine", 1, true);
        int connectMillis = (int) Math.min(connectTimeout.toMillis(), Integer.MAX_VALUE);
        // Unpooled buffers: a pool's arenas and caches cost memory a sidecar's few requests never repay.
        HttpClient http = HttpClient.create(connections)
                .runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis)
                .option(ChannelOption.ALLOCATOR, UnpooledByteBufAllocator.DEFAULT);
        URI base = engine.requiredBaseUrl();
        this.held = new HeldConnection(
                TcpClient.newConnection()
                        .runOn(loops)
                        .host(base.getHost())
                        .port(base.getPort() >= 0 ? base.getPort() : "https".equals(base.getScheme()) ? 443 : 80)
                        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis)
                        .option(ChannelOption.ALLOCATOR, UnpooledByteBufAllocator.DEFAULT),
                ticker,
                scheduler);
        this.plainConnections =
                new EngineConnections(base, connectTimeout, MAX_IDLE, loops, UnpooledByteBufAllocator.DEFAULT);
        io.netty.handler.codec.http.HttpHeaders plainHeaders = new DefaultHttpHeaders();
        apiKey.applyTo(plainHeaders);
        EventLoop plainLoop = loops.onClient(LoopResources.DEFAULT_NATIVE).next();
        this.gets = new PlainGets(plainConnections, plainLoop, plainHeaders, maxBodyBytes);
        // Their timeouts on the loop their answers come on: no other thread woken per poll. Never disposed (that would
        // shut the loop down): the loops' own disposal ends it.
        this.plainTimer = Schedulers.fromExecutorService(plainLoop, "readygate-engine-timer");
        String baseUrl = base.toString();
        this.webClient = WebClient.builder()
                .baseUrl(baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl)
                .clientConnector(new ReactorClientHttpConnector(http))
                .defaultHeaders(apiKey::applyTo)
                .build();
    }

    @Override
    public Mono<EngineCall<Void>> health() {
        // Its body means nothing: a 2xx is the answer whatever follows.
        return plain(Route.HEALTH, null);
    }

    @Override
    public Mono<EngineCall<ModelCard>> model() {
        return plain(Route.MODELS, json::modelCard);
    }

    @Override
    public Mono<EngineCall<String>> version() {
        return plain(Route.VERSION, json::version);
    }

    @Override
    public Mono<EngineCall<TokenCount>> tokenize(EngineDialect dialect, String model, String text) {
        return Mono.defer(() -> {
            byte[] body = json.tokenizeRequest(dialect, model, text);
            return call(
                    Route.TOKENIZE,
                    requestTimeout,
                    client -> client.post()
                            .uri(Route.TOKENIZE.path)
                            .contentType(MediaType.APPLICATION_JSON)
                            .accept(MediaType.APPLICATION_JSON)
                            .bodyValue(body),
                    response -> readBody(response, Route.TOKENIZE).map(json::tokenCount),
                    List.of(text));
        });
    }

    @Override
    public Mono<EngineCall<String>> detokenize(EngineDialect dialect, String model, List<Integer> tokens) {
        return Mono.defer(() -> {
            byte[] body = json.detokenizeRequest(dialect, model, tokens);
            return call(
                    Route.DETOKENIZE,
                    requestTimeout,
                    client -> client.post()
                            .uri(Route.DETOKENIZE.path)
                            .contentType(MediaType.APPLICATION_JSON)
                            .accept(MediaType.APPLICATION_JSON)
                            .bodyValue(body),
                    response -> readBody(response, Route.DETOKENIZE).map(json::detokenized));
        });
    }

    @Override
    public Mono<EngineCall<ServerInfo>> serverInfo(EngineDialect dialect) {
        Route route = switch (dialect) {
            case LLAMA_CPP -> Route.PROPS;
            case TGI -> Route.INFO;
            case SGLANG -> Route.SERVER_INFO;
            case VLLM, OPENAI -> null;
        };
        if (route == null) {
            return Mono.just(new EngineCall.Failure<>(
                    new EngineFailure(
                            EngineFailure.Kind.NOT_SUPPORTED,
                            null,
                            dialect.value() + " has no server-information endpoint readygate reads"),
                    Duration.ZERO));
        }
        return plain(route, bytes -> json.serverInfo(dialect, route.path, bytes));
    }

    @Override
    public Mono<EngineCall<EngineMetricsSample>> metrics() {
        return plain(Route.METRICS, bytes -> PrometheusText.parse(new String(bytes, StandardCharsets.UTF_8)));
    }

    @Override
    public Mono<EngineCall<SlotsSample>> slots() {
        return plain(Route.SLOTS, json::slots);
    }

    @Override
    public Mono<EngineCall<StreamedCompletion>> streamCompletion(CompletionRequest request, Duration timeout) {
        return Mono.defer(() -> {
            byte[] body = json.completionRequest(request);
            List<String> prompt = request.promptText() == null ? List.of() : List.of(request.promptText());
            Collection<String> secrets = secrets(prompt);
            CompletionStream stream = new CompletionStream(json.mapper(), ticker, secrets, request.maxTokens());
            Route route = request.chat() ? Route.CHAT_COMPLETIONS : Route.COMPLETIONS;
            return exchange(
                    route,
                    timeout,
                    stream.startNanos(),
                    client -> client.post()
                            .uri(route.path)
                            .contentType(MediaType.APPLICATION_JSON)
                            .accept(MediaType.TEXT_EVENT_STREAM)
                            .bodyValue(body),
                    response -> readStream(response, stream, route),
                    secrets,
                    stream::progress);
        });
    }

    @Override
    public Mono<Void> connectionClosed() {
        return held.closed();
    }

    /** Gives the connection pool back; in-flight calls fail. */
    @Override
    public void close() {
        held.dispose();
        plainConnections
                .close()
                .then(connections.disposeLater())
                .then(loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)))
                .block(Duration.ofSeconds(5));
    }

    private <T> Mono<EngineCall<T>> call(
            Route route,
            Duration timeout,
            Function<WebClient, WebClient.RequestHeadersSpec<?>> request,
            Function<ClientResponse, Mono<T>> onSuccess) {
        return call(route, timeout, request, onSuccess, List.of());
    }

    private <T> Mono<EngineCall<T>> call(
            Route route,
            Duration timeout,
            Function<WebClient, WebClient.RequestHeadersSpec<?>> request,
            Function<ClientResponse, Mono<T>> onSuccess,
            List<String> extraSecrets) {
        return Mono.defer(() -> exchange(
                route,
                timeout,
                ticker.getAsLong(),
                request,
                onSuccess,
                secrets(extraSecrets),
                timedOut -> "no complete answer"));
    }

    /**
     * One request, timed from {@code startNanos}: a 2xx answer goes to {@code onSuccess} (whose empty result is a
     * success without a value), anything else becomes a failure.
     */
    private <T> Mono<EngineCall<T>> exchange(
            Route route,
            Duration timeout,
            long startNanos,
            Function<WebClient, WebClient.RequestHeadersSpec<?>> request,
            Function<ClientResponse, Mono<T>> onSuccess,
            Collection<String> secrets,
            Function<Duration, String> progress) {
        return request.apply(webClient)
                .exchangeToMono(response -> response.statusCode().is2xxSuccessful()
                        ? onSuccess.apply(response)
                        : errorBody(response, route)
                                .flatMap(error -> Mono.<T>error(new EngineCallException(
                                        statusFailure(route, response.statusCode(), error, secrets)))))
                .timeout(timeout, scheduler)
                .<EngineCall<T>>map(value -> new EngineCall.Success<>(value, since(startNanos)))
                .switchIfEmpty(Mono.fromSupplier(() -> valueless(since(startNanos))))
                .onErrorResume(error -> {
                    EngineFailure failure = failure(error, route, timeout, secrets, progress);
                    log(route, failure, error);
                    return Mono.just(new EngineCall.Failure<>(failure, since(startNanos)));
                });
    }

    /** {@code health()} has no value: its {@code Success<Void>} carries null, as {@code Void} can only. */
    private static <T> EngineCall<T> valueless(Duration elapsed) {
        return new EngineCall.Success<>(null, elapsed);
    }

    private EngineFailure failure(
            Throwable error,
            Route route,
            Duration timeout,
            Collection<String> secrets,
            Function<Duration, String> progress) {
        if (error instanceof EngineCallException known) {
            return known.failure();
        }
        if (error instanceof TimeoutException) {
            String where = progress.apply(timeout);
            return EngineFailure.of(
                    where.startsWith(CompletionStream.STALLED)
                            ? EngineFailure.Kind.STALLED
                            : EngineFailure.Kind.TIMED_OUT,
                    route.call() + ": " + where + " within " + timeout.toMillis() + " ms");
        }
        return TransportFailures.beforeResponse(error, route.call(), connectTimeout, secrets);
    }

    private EngineFailure statusFailure(
            Route route, HttpStatusCode status, EngineJson.ErrorBody error, Collection<String> secrets) {
        int code = status.value();
        String message = SafeDetail.of(error.message(), secrets);
        String answered = route.call() + " answered " + code + (message.isEmpty() ? "" : ": " + message);
        if (route.optional && EngineMessages.routeMissing(code, error.message())) {
            return new EngineFailure(
                    EngineFailure.Kind.NOT_SUPPORTED, code, answered + ": this server does not offer it");
        }
        if (EngineMessages.loading(code, error.message())) {
            return new EngineFailure(EngineFailure.Kind.LOADING, code, answered);
        }
        if (code == 401) {
            return EngineFailure.status(
                    code,
                    route.call() + " answered 401: "
                            + (apiKey.isPresent()
                                    ? "the engine refused readygate's API key"
                                    : "the engine wants an API key and readygate has none (set"
                                            + " readygate.engine.api-key-file or readygate.engine.api-key-env)"));
        }
        return EngineFailure.status(code, answered);
    }

    /**
     * Reads an error body (bounded) for its message; never fails: an unreadable body just has no message.
     */
    private Mono<EngineJson.ErrorBody> errorBody(ClientResponse response, Route route) {
        boolean html = response.headers()
                .contentType()
                .map(MediaType.TEXT_HTML::isCompatibleWith)
                .orElse(false);
        return readBody(response, route)
                .map(bytes -> errorText(bytes, html))
                .onErrorReturn(new EngineJson.ErrorBody(""));
    }

    /** An error body's message: an OpenAI-style or FastAPI JSON error's, else its text (an HTML page's reduced). */
    private EngineJson.ErrorBody errorText(byte[] bytes, boolean html) {
        EngineJson.ErrorBody body = json.errorBody(bytes);
        return body != null ? body : EngineJson.ErrorBody.plainText(bytes, html);
    }

    /**
     * A {@code GET} on the plain connection ({@link PlainGets}), judged as {@link #exchange} judges one: a 2xx answer's
     * whole body goes to {@code onSuccess} (null: the body is not read for a value), anything else becomes a failure.
     */
    private <T> Mono<EngineCall<T>> plain(Route route, @Nullable Function<byte[], T> onSuccess) {
        return Mono.defer(() -> {
            long startNanos = ticker.getAsLong();
            Collection<String> secrets = apiKey.secrets();
            // Not Reactor's timeout(): it names its subscriber chain on every subscription, a third of a poll's cost.
            Mono<PlainGets.Answer> limited = Mono.firstWithSignal(
                    gets.get(route.path, route.json),
                    Mono.delay(requestTimeout, plainTimer).then(Mono.error(TimeoutException::new)));
            return limited.<T>handle((answer, sink) -> {
                        T value = answered(route, answer, onSuccess, secrets);
                        if (value != null) {
                            sink.next(value);
                        }
                    })
                    .<EngineCall<T>>map(value -> new EngineCall.Success<>(value, since(startNanos)))
                    .switchIfEmpty(Mono.fromSupplier(() -> valueless(since(startNanos))))
                    .onErrorResume(error -> {
                        EngineFailure failure =
                                failure(error, route, requestTimeout, secrets, timedOut -> "no complete answer");
                        log(route, failure, error);
                        return Mono.just(new EngineCall.Failure<>(failure, since(startNanos)));
                    });
        });
    }

    /** A plain answer's value, or the failure it is (thrown as an {@link EngineCallException}). */
    private <T> @Nullable T answered(
            Route route, PlainGets.Answer answer, @Nullable Function<byte[], T> onSuccess, Collection<String> secrets) {
        if (answer.status() / 100 != 2) {
            EngineJson.ErrorBody error =
                    answer.whole() ? errorText(answer.body(), answer.html()) : new EngineJson.ErrorBody("");
            throw new EngineCallException(
                    statusFailure(route, HttpStatusCode.valueOf(answer.status()), error, secrets));
        }
        if (onSuccess == null) {
            return null;
        }
        if (answer.tooLarge()) {
            throw tooLarge(route);
        }
        Throwable interrupted = answer.interrupted();
        if (interrupted != null) {
            throw EngineCallException.of(
                    EngineFailure.Kind.MALFORMED_BODY,
                    route.call() + ": connection " + TransportFailures.endedHow(interrupted)
                            + " before the body was complete");
        }
        return onSuccess.apply(answer.body());
    }

    /**
     * The whole body, at most {@code max-body-size}: a larger one is abandoned as {@code BODY_TOO_LARGE}, which
     * cancels the read and closes the connection instead of draining it. A body cut off by the connection is
     * {@code MALFORMED_BODY}: the answer began, so it is not RESET, and it is not what the endpoint promises.
     */
    private Mono<byte[]> readBody(ClientResponse response, Route route) {
        long declared = response.headers().contentLength().orElse(-1);
        if (declared > maxBodyBytes) {
            return abandon(response).then(Mono.error(tooLarge(route)));
        }
        return DataBufferUtils.join(response.body(BodyExtractors.toDataBuffers()), maxBodyBytes)
                .map(buffer -> {
                    try {
                        byte[] bytes = new byte[buffer.readableByteCount()];
                        buffer.read(bytes);
                        return bytes;
                    } finally {
                        DataBufferUtils.release(buffer);
                    }
                })
                .defaultIfEmpty(new byte[0])
                .onErrorMap(DataBufferLimitException.class, ex -> tooLarge(route))
                .onErrorMap(
                        error -> !(error instanceof EngineCallException),
                        error -> EngineCallException.of(
                                EngineFailure.Kind.MALFORMED_BODY,
                                route.call() + ": connection " + TransportFailures.endedHow(error)
                                        + " before the body was complete"));
    }

    /** Reads at most one buffer and cancels: never drains a body readygate does not want. */
    private static Mono<Void> abandon(ClientResponse response) {
        return response.body(BodyExtractors.toDataBuffers())
                .doOnNext(DataBufferUtils::release)
                .next()
                .onErrorComplete()
                .then();
    }

    private Mono<StreamedCompletion> readStream(ClientResponse response, CompletionStream stream, Route route) {
        MediaType type = response.headers().contentType().orElse(null);
        if (type != null && !MediaType.TEXT_EVENT_STREAM.isCompatibleWith(type)) {
            return abandon(response)
                    .then(Mono.error(EngineCallException.of(
                            EngineFailure.Kind.MALFORMED_BODY,
                            route.call() + " answered " + type.getType() + "/" + type.getSubtype()
                                    + ", not text/event-stream")));
        }
        ServerSentEvents events = new ServerSentEvents(maxBodyBytes, maxBodyBytes, maxBodyText);
        Flux<DataBuffer> body = response.body(BodyExtractors.toDataBuffers());
        return body.map(events::feed)
                .concatWith(Mono.fromSupplier(events::finish))
                .concatMapIterable(Function.identity())
                .<ServerSentEvents.Event>handle((event, sink) -> {
                    if (stream.accept(event)) {
                        sink.complete();
                    }
                })
                .onErrorMap(error -> !(error instanceof EngineCallException), stream::interrupted)
                .then(Mono.fromSupplier(stream::result));
    }

    private EngineCallException tooLarge(Route route) {
        return EngineCallException.of(
                EngineFailure.Kind.BODY_TOO_LARGE,
                route.call() + ": body larger than readygate.engine.max-body-size (" + maxBodyText + "); abandoned");
    }

    private Collection<String> secrets(List<String> extra) {
        List<String> secrets = new ArrayList<>(extra);
        secrets.addAll(apiKey.secrets());
        return secrets;
    }

    /** As an operator would write it in the configuration: {@code 4MB}, not {@code 4194304B}. */
    private static String readable(DataSize size) {
        long bytes = size.toBytes();
        if (bytes % (1L << 30) == 0) {
            return (bytes >> 30) + "GB";
        }
        if (bytes % (1L << 20) == 0) {
            return (bytes >> 20) + "MB";
        }
        if (bytes % (1L << 10) == 0) {
            return (bytes >> 10) + "KB";
        }
        return bytes + "B";
    }

    private Duration since(long startNanos) {
        return Duration.ofNanos(ticker.getAsLong() - startNanos);
    }

    /**
     * DEBUG only: failures are expected outcomes that the caller (the prober) reports, and this runs on event-loop
     * threads. The exception comes along only for the unexpected kind, IO_ERROR.
     */
    private void log(Route route, EngineFailure failure, Throwable error) {
        if (failure.kind() == EngineFailure.Kind.IO_ERROR) {
            // Not the engine's state (refused, reset and timeouts are, and the state machine logs their changes): a
            // failure of the connection itself, such as an untrusted certificate. One line, never a stack trace.
            warnings.warn(failure.kind().reason(), "Engine calls fail: {}", failure.detail());
        }
        if (!logger.isDebugEnabled()) {
            return;
        }
        if (failure.kind() == EngineFailure.Kind.IO_ERROR) {
            logger.debug("{} failed: {} ({})", route.call(), failure.kind().reason(), failure.detail(), error);
        } else {
            logger.debug("{} failed: {} ({})", route.call(), failure.kind().reason(), failure.detail());
        }
    }

    /** The engine endpoints readygate calls; {@code optional} ones are NOT_SUPPORTED on servers without them. */
    private enum Route {
        HEALTH("GET", "/health", false, false),
        MODELS("GET", "/v1/models", false, true),
        VERSION("GET", "/version", true, true),
        TOKENIZE("POST", "/tokenize", true, true),
        DETOKENIZE("POST", "/detokenize", true, true),
        PROPS("GET", "/props", true, true),
        INFO("GET", "/info", true, true),
        SERVER_INFO("GET", "/get_server_info", true, true),
        METRICS("GET", "/metrics", true, false),
        SLOTS("GET", "/slots", true, true),
        // A server may offer only one of them: a missing one is NOT_SUPPORTED, and the probes use the other.
        COMPLETIONS("POST", "/v1/completions", true, true),
        CHAT_COMPLETIONS("POST", "/v1/chat/completions", true, true);

        final String method;
        final String path;
        final boolean optional;
        /** Whether readygate asks for JSON ({@code Accept: application/json}). */
        final boolean json;

        Route(String method, String path, boolean optional, boolean json) {
            this.method = method;
            this.path = path;
            this.optional = optional;
            this.json = json;
        }

        String call() {
            return method + " " + path;
        }
    }
}
