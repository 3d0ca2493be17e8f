package dev.readygate.engine;

import static dev.readygate.engine.EngineCalls.call;
import static dev.readygate.engine.EngineCalls.client;
import static dev.readygate.engine.EngineCalls.failure;
import static dev.readygate.engine.EngineCalls.success;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

/**
 * {@link WebClientEngineClient} against fake engines: OpenAI-compatible servers that are not vLLM, bodies far beyond
 * {@code max-body-size}, odd SSE framing, and error messages that echo what they should not.
 */
class WebClientEngineClientFakeEngineTests {

    static final long GIB = 1024L * 1024 * 1024;
    static final int CHUNK = 64 * 1024;
    static final String JSON = "application/json";
    static final String SSE = "text/event-stream";

    static final String MODELS = "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\",\"object\":\"model\"}]}";

    static final CompletionRequest REQUEST =
            new CompletionRequest("fake-model", "Tell me about the harbor", null, 4, 1, true, 0.0, null, null, true);

    /** A request whose {@code max_tokens} no stream here reaches: what bounds the stream is its size. */
    static final CompletionRequest LONG_REQUEST = new CompletionRequest(
            "fake-model", "Tell me about the harbor", null, 1_000_000, 1, true, 0.0, null, null, true);

    @Test
    void optionalEndpointsWhenServerIsNotVllmReturnNotSupportedAndModelStillWorks() {
        try (FakeEngine openAiCompatible = FakeEngine.start(routes -> routes.get(
                                "/health",
                                (req, res) -> res.status(HttpResponseStatus.OK).send())
                        .get("/v1/models", (req, res) -> json(res, MODELS))
                        .post(
                                "/tokenize",
                                (req, res) -> res.status(HttpResponseStatus.METHOD_NOT_ALLOWED)
                                        .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                                        .sendString(Mono.just("{\"detail\":\"Method Not Allowed\"}")))
                        .get(
                                "/metrics",
                                (req, res) -> res.status(HttpResponseStatus.NOT_FOUND)
                                        .sendString(Mono.just("404 page not found\n")))
                        .route(
                                req -> true,
                                (req, res) -> res.status(HttpResponseStatus.NOT_FOUND)
                                        .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                                        .sendString(Mono.just("{\"detail\":\"Not Found\"}"))));
                WebClientEngineClient client = client(openAiCompatible.url())) {

            assertThat(success(client.model())).isEqualTo(new ModelCard("fake-model", null, null));
            assertThat(call(client.health())).isInstanceOf(EngineCall.Success.class);

            EngineFailure version = failure(client.version());
            assertThat(version.kind()).isEqualTo(EngineFailure.Kind.NOT_SUPPORTED);
            assertThat(version.httpStatus()).isEqualTo(404);
            EngineFailure tokenize = failure(client.tokenize(EngineDialect.VLLM, "fake-model", "hello"));
            assertThat(tokenize.kind()).isEqualTo(EngineFailure.Kind.NOT_SUPPORTED);
            assertThat(tokenize.httpStatus()).isEqualTo(405);
            EngineFailure metrics = failure(client.metrics());
            assertThat(metrics.kind()).isEqualTo(EngineFailure.Kind.NOT_SUPPORTED);
            assertThat(metrics.detail())
                    .isEqualTo("GET /metrics answered 404: 404 page not found: this server does not offer it");
        }
    }

    @Test
    void tokenizeWhenEngineDoesNotKnowTheModelReturnsHttpStatus404() {
        // vLLM answers an unknown model with its own 404 error JSON: the endpoint exists, the request is wrong.
        String notFound = "{\"error\":{\"message\":\"The model `other` does not exist.\",\"type\":\"NotFoundError\","
                + "\"param\":\"model\",\"code\":404}}";
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                        "/tokenize",
                        (req, res) -> res.status(HttpResponseStatus.NOT_FOUND)
                                .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                                .sendString(Mono.just(notFound))));
                WebClientEngineClient client = client(engine.url())) {

            EngineFailure failure = failure(client.tokenize(EngineDialect.VLLM, "other", "hello"));

            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.HTTP_STATUS);
            assertThat(failure.httpStatus()).isEqualTo(404);
            assertThat(failure.detail()).isEqualTo("POST /tokenize answered 404: The model `other` does not exist.");
        }
    }

    @Test
    void modelWhenBodyIsAnEndlessGigabyteReturnsBodyTooLargeWithoutGrowingTheHeap() {
        AtomicLong produced = new AtomicLong();
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get("/v1/models", (req, res) -> {
                    return res.header(HttpHeaderNames.CONTENT_TYPE, JSON)
                            .send(Flux.concat(
                                    FakeEngine.text("{\"object\":\"list\",\"data\":[{\"id\":\""),
                                    FakeEngine.repeat("x".repeat(CHUNK), GIB / CHUNK, produced)));
                }));
                WebClientEngineClient client = client(engine.url())) {
            EngineCall<ModelCard> call = measured(() -> call(client.model()));

            assertThat(((EngineCall.Failure<ModelCard>) call).failure().kind())
                    .isEqualTo(EngineFailure.Kind.BODY_TOO_LARGE);
            assertThat(call.elapsed()).isLessThan(Duration.ofSeconds(30));
            // The read stopped at the bound: the server produced a few megabytes (socket buffers), not a gigabyte.
            assertThat(produced.get()).isLessThan(128L * 1024 * 1024);
        }
    }

    @Test
    void versionWhenContentLengthIsAGigabyteReturnsBodyTooLargeWithoutReadingIt() {
        AtomicLong produced = new AtomicLong();
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get(
                        "/version",
                        (req, res) -> res.header(HttpHeaderNames.CONTENT_TYPE, JSON)
                                .header(HttpHeaderNames.CONTENT_LENGTH, String.valueOf(GIB))
                                .send(FakeEngine.repeat("x".repeat(CHUNK), GIB / CHUNK, produced))));
                WebClientEngineClient client = client(engine.url())) {
            EngineFailure failure = failure(client.version());

            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.BODY_TOO_LARGE);
            assertThat(failure.detail()).contains("readygate.engine.max-body-size (4MB)");
            assertThat(produced.get()).isLessThan(128L * 1024 * 1024);
        }
    }

    @Test
    void healthWhenBodyIsAnEndlessGigabyteIgnoresItWithoutDrainingIt() {
        AtomicLong produced = new AtomicLong();
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get(
                        "/health",
                        (req, res) -> res.send(FakeEngine.repeat("x".repeat(CHUNK), GIB / CHUNK, produced))));
                WebClientEngineClient client = client(engine.url())) {
            assertThat(call(client.health())).isInstanceOf(EngineCall.Success.class);
            assertThat(produced.get()).isLessThan(128L * 1024 * 1024);
        }
    }

    @Test
    void streamCompletionWhenStreamIsAnEndlessGigabyteReturnsBodyTooLargeWithoutGrowingTheHeap() {
        AtomicLong produced = new AtomicLong();
        String event = sseEvent(CHUNK);
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                        "/v1/completions",
                        (req, res) -> res.header(HttpHeaderNames.CONTENT_TYPE, SSE)
                                .send(FakeEngine.repeat(event, GIB / CHUNK, produced), buffer -> true)));
                WebClientEngineClient client = client(engine.url())) {
            EngineCall<StreamedCompletion> call =
                    measured(() -> call(client.streamCompletion(LONG_REQUEST, Duration.ofSeconds(60))));

            EngineFailure failure = ((EngineCall.Failure<StreamedCompletion>) call).failure();
            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.BODY_TOO_LARGE);
            assertThat(failure.detail()).startsWith("event stream larger than readygate.engine.max-body-size");
            assertThat(call.elapsed()).isLessThan(Duration.ofSeconds(30));
            assertThat(produced.get()).isLessThan(128L * 1024 * 1024);
        }
    }

    @Test
    void streamCompletionWhenOneEventIsTenMegabytesReturnsBodyTooLarge() {
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                        "/v1/completions",
                        (req, res) -> res.header(HttpHeaderNames.CONTENT_TYPE, SSE)
                                .send(Flux.concat(
                                        FakeEngine.text("data: {\"choices\":[{\"index\":0,\"text\":\""),
                                        FakeEngine.repeat("x".repeat(CHUNK), 160, new AtomicLong()),
                                        FakeEngine.text("\"}]}\n\ndata: [DONE]\n\n")))));
                WebClientEngineClient client = client(engine.url())) {
            EngineFailure failure = failure(client.streamCompletion(LONG_REQUEST, Duration.ofSeconds(30)));

            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.BODY_TOO_LARGE);
            assertThat(failure.detail()).startsWith("stream event larger than readygate.engine.max-body-size");
        }
    }

    @Test
    void streamCompletionWhenTheStreamNeverEndsIsCutAsOverlongAtTheEventPastMaxTokens() {
        // A hostile engine: token events without end, small enough that neither the size bound nor a stall stops
        // them, and a timeout far away (a light check without /metrics waits heavy-timeout).
        AtomicLong produced = new AtomicLong();
        String event = "data: {\"choices\":[{\"index\":0,\"text\":\" x\",\"finish_reason\":null}]}\n\n";
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                        "/v1/completions",
                        (req, res) -> res.header(HttpHeaderNames.CONTENT_TYPE, SSE)
                                .send(FakeEngine.repeat(event, Long.MAX_VALUE, produced), buffer -> true)));
                WebClientEngineClient client = client(engine.url())) {
            EngineFailure failure = failure(client.streamCompletion(REQUEST, Duration.ofMinutes(10)));

            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.OVERLONG_STREAM);
            assertThat(failure.detail())
                    .isEqualTo("the stream ran past what was asked: 13 events for max_tokens 4 (at most 12 with"
                            + " those that carry no token); cut");
        }
    }

    @Test
    void streamCompletionWhenFramingVariesParsesEveryEvent() {
        String body = ": a comment, then events with CRLF, without the space after data:, split over lines\r\n"
                + "data:{\"choices\":[{\"index\":0,\"text\":\"Hello\",\"token_ids\":[11],"
                + "\"logprobs\":{\"token_logprobs\":[-0.5]},\"finish_reason\":null}]}\r\n\r\n"
                + ": keep-alive\r\n\r\n"
                + "event: message\r\n"
                + "data: {\"choices\":[{\"index\":0,\"text\":\" world\",\r\n"
                + "data: \"token_ids\":[12],\"logprobs\":{\"token_logprobs\":[-1.5]},\"finish_reason\":\"stop\"}]}\r\n\r\n"
                + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n"
                + "data:[DONE]\r\n\r\n";
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                        "/v1/completions",
                        (req, res) -> res.header(HttpHeaderNames.CONTENT_TYPE, SSE + "; charset=utf-8")
                                .send(inPieces(body, 7), buffer -> true)));
                WebClientEngineClient client = client(engine.url())) {

            StreamedCompletion completion = success(client.streamCompletion(REQUEST, Duration.ofSeconds(5)));

            assertThat(completion.text()).isEqualTo("Hello world");
            assertThat(completion.tokenIds()).containsExactly(11, 12);
            assertThat(completion.tokenLogprobs()).containsExactly(-0.5, -1.5);
            assertThat(completion.finishReason()).isEqualTo("stop");
            assertThat(completion.promptTokens()).isEqualTo(5);
            assertThat(completion.completionTokens()).isEqualTo(2);
            assertThat(completion.textChunks()).isEqualTo(2);
        }
    }

    /** llama.cpp's chat stream, event by event as its server writes it (role first, usage in the last chunk). */
    static final String CHAT_STREAM = "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
            + "{\"role\":\"assistant\"}}],\"object\":\"chat.completion.chunk\"}\n\n"
            + "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hello\"},"
            + "\"logprobs\":{\"content\":[{\"id\":11,\"token\":\"Hello\",\"logprob\":-0.5,\"bytes\":[72],"
            + "\"top_logprobs\":[]}]}}],\"object\":\"chat.completion.chunk\"}\n\n"
            + "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\" world\"}}],"
            + "\"object\":\"chat.completion.chunk\"}\n\n"
            + "data: {\"choices\":[{\"finish_reason\":\"length\",\"index\":0,\"delta\":{}}],\"object\":"
            + "\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":2,\"prompt_tokens\":17,"
            + "\"total_tokens\":19}}\n\n"
            + "data: [DONE]\n\n";

    @Test
    void aChatOnlyServerAnswersPlainCompletionsNotSupportedAndChatCompletionsAreRead() {
        List<String> chatBodies = new ArrayList<>();
        try (FakeEngine chatOnly = FakeEngine.start(routes -> routes.post(
                                "/v1/chat/completions",
                                (req, res) -> req.receive()
                                        .aggregate()
                                        .asString()
                                        .flatMap(body -> {
                                            chatBodies.add(body);
                                            return res.header(HttpHeaderNames.CONTENT_TYPE, SSE)
                                                    .sendString(Mono.just(CHAT_STREAM))
                                                    .then();
                                        }))
                        .route(
                                req -> true,
                                (req, res) -> res.status(HttpResponseStatus.NOT_FOUND)
                                        .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                                        .sendString(Mono.just("{\"detail\":\"Not Found\"}"))));
                WebClientEngineClient client = client(chatOnly.url())) {

            EngineFailure plain = failure(client.streamCompletion(REQUEST, Duration.ofSeconds(5)));
            StreamedCompletion chat = success(client.streamCompletion(
                    new CompletionRequest("fake-model", "The capital of France is", null, 2, 2, false, 0.0, 0L, 0, true)
                            .asChat(),
                    Duration.ofSeconds(5)));

            assertThat(plain.kind()).isEqualTo(EngineFailure.Kind.NOT_SUPPORTED);
            assertThat(plain.detail()).startsWith("POST /v1/completions answered 404");
            assertThat(chat.text()).isEqualTo("Hello world");
            assertThat(chat.tokenLogprobs()).containsExactly(-0.5);
            assertThat(chat.finishReason()).isEqualTo("length");
            assertThat(chat.promptTokens()).isEqualTo(17);
            assertThat(chat.completionTokens()).isEqualTo(2);
            assertThat(chatBodies.getFirst())
                    .contains("\"messages\":[{\"role\":\"user\",\"content\":\"The capital of France is\"}]")
                    .contains("\"logprobs\":true,\"top_logprobs\":1")
                    .contains("\"include_usage\":true")
                    .doesNotContain("\"prompt\"");
        }
    }

    @Test
    void streamCompletionWhenStreamEndsWithoutDoneReturnsTruncatedStream() {
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                        "/v1/completions",
                        (req, res) -> res.header(HttpHeaderNames.CONTENT_TYPE, SSE)
                                .sendString(Mono.just("data: {\"choices\":[{\"index\":0,\"text\":\"Hi\"}]}\n\n"))));
                WebClientEngineClient client = client(engine.url())) {

            EngineFailure failure = failure(client.streamCompletion(REQUEST, Duration.ofSeconds(5)));

            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.TRUNCATED_STREAM);
            assertThat(failure.detail()).isEqualTo("stream ended after 1 event without [DONE]");
        }
    }

    @Test
    void streamCompletionWhenAnswerIsNotAnEventStreamReturnsMalformedBody() {
        try (FakeEngine engine = FakeEngine.start(routes ->
                        routes.post("/v1/completions", (req, res) -> json(res, "{\"choices\":[{\"text\":\"Hi\"}]}")));
                WebClientEngineClient client = client(engine.url())) {

            EngineFailure failure = failure(client.streamCompletion(REQUEST, Duration.ofSeconds(5)));

            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.MALFORMED_BODY);
            assertThat(failure.detail()).endsWith("answered application/json, not text/event-stream");
        }
    }

    @Test
    void streamCompletionWhenErrorEchoesPromptAndKeyRedactsBoth() {
        String key = "sk-echoed-secret-key";
        String echo = "{\"error\":{\"message\":\"1 validation error: prompt Input should be short "
                + "[type=string_too_long, input_value='Tell me about the ha...', input_type=str]; you sent '"
                + REQUEST.promptText() + "' with Bearer " + key + "\",\"code\":400}}";
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                        "/v1/completions",
                        (req, res) -> res.status(HttpResponseStatus.BAD_REQUEST)
                                .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                                .sendString(Mono.just(echo))));
                WebClientEngineClient client = client(engine.url(), Duration.ofSeconds(5), EngineApiKey.of(key))) {

            EngineFailure failure = failure(client.streamCompletion(REQUEST, Duration.ofSeconds(5)));

            assertThat(failure.httpStatus()).isEqualTo(400);
            assertThat(failure.detail())
                    .contains("input_value=<redacted>")
                    .doesNotContain(REQUEST.promptText())
                    .doesNotContain("Tell me about")
                    .doesNotContain(key);
        }
    }

    @Test
    void callsWhenKeyIsPresentSendItAsBearerOnEveryRequest() {
        Map<String, String> authorization = new ConcurrentHashMap<>();
        try (FakeEngine engine = FakeEngine.start(routes -> routes.route(req -> true, (req, res) -> {
                    authorization.put(
                            req.path(), String.valueOf(req.requestHeaders().get(HttpHeaderNames.AUTHORIZATION)));
                    return res.status(HttpResponseStatus.SERVICE_UNAVAILABLE).send();
                }));
                WebClientEngineClient client =
                        client(engine.url(), Duration.ofSeconds(5), EngineApiKey.of("  sk-bearer-key \n"))) {

            failure(client.health());
            failure(client.model());
            failure(client.version());
            failure(client.tokenize(EngineDialect.VLLM, "fake-model", "hello"));
            failure(client.metrics());
            failure(client.streamCompletion(REQUEST, Duration.ofSeconds(5)));

            assertThat(authorization)
                    .containsOnlyKeys("health", "v1/models", "version", "tokenize", "metrics", "v1/completions")
                    .allSatisfy((path, header) -> assertThat(header).isEqualTo("Bearer sk-bearer-key"));
        }
    }

    static Mono<Void> json(HttpServerResponse response, String body) {
        return response.header(HttpHeaderNames.CONTENT_TYPE, JSON)
                .sendString(Mono.just(body))
                .then();
    }

    /** One SSE event of exactly {@code size} bytes. */
    static String sseEvent(int size) {
        String head = "data: {\"choices\":[{\"index\":0,\"text\":\"";
        String tail = "\"}]}\n\n";
        return head + "x".repeat(size - head.length() - tail.length()) + tail;
    }

    static Flux<ByteBuf> inPieces(String text, int size) {
        List<String> pieces = new ArrayList<>();
        for (int i = 0; i < text.length(); i += size) {
            pieces.add(text.substring(i, Math.min(text.length(), i + size)));
        }
        return Flux.fromIterable(pieces).concatMap(FakeEngine::text);
    }

    /** Runs {@code action} and checks it left the heap where it was, give or take 256 MiB. */
    static <T> T measured(Supplier<T> action) {
        System.gc();
        long before = usedHeap();
        T result = action.get();
        assertThat(usedHeap() - before).isLessThan(256L * 1024 * 1024);
        return result;
    }

    static long usedHeap() {
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }
}
