package dev.readygate.engine;

import static dev.readygate.engine.EngineCalls.client;
import static dev.readygate.engine.EngineCalls.failure;
import static dev.readygate.engine.EngineCalls.success;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The client and discovery against other engines' answers, byte for byte as their sources write them: llama.cpp's
 * llama-server (examples/server/server.cpp and utils.hpp at c392e509), TGI's router and an OpenAI-compatible proxy's
 * plain-text errors. The same shapes are met for real in LlamaServerIT.
 */
class EngineDialectShapesTests {

    static final String JSON = "application/json; charset=utf-8";

    static final String LLAMA_MODELS = "{\"object\":\"list\",\"data\":[{\"id\":\"small.gguf\",\"object\":\"model\","
            + "\"created\":1796115598,\"owned_by\":\"llamacpp\",\"meta\":{\"vocab_type\":1,\"n_vocab\":32000,"
            + "\"n_ctx_train\":2048,\"n_embd\":64,\"n_params\":4178240,\"size\":16712960}}]}";

    static final String LLAMA_PROPS = "{\"default_generation_settings\":{\"id\":0,\"id_task\":-1,\"n_ctx\":256,"
            + "\"speculative\":false,\"is_processing\":false},\"total_slots\":1,\"model_path\":\"small.gguf\","
            + "\"chat_template\":\"\",\"bos_token\":\"<s>\",\"eos_token\":\"</s>\",\"build_info\":\"b0-unknown\"}";

    static final String LLAMA_METRICS = """
            # HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
            # TYPE llamacpp:prompt_tokens_total counter
            llamacpp:prompt_tokens_total 518
            # HELP llamacpp:tokens_predicted_total Number of generation tokens processed.
            # TYPE llamacpp:tokens_predicted_total counter
            llamacpp:tokens_predicted_total 65
            # HELP llamacpp:n_busy_slots_per_decode Average number of busy slots per llama_decode() call
            # TYPE llamacpp:n_busy_slots_per_decode counter
            llamacpp:n_busy_slots_per_decode 1
            # HELP llamacpp:requests_processing Number of requests processing.
            # TYPE llamacpp:requests_processing gauge
            llamacpp:requests_processing 0
            # HELP llamacpp:requests_deferred Number of requests deferred.
            # TYPE llamacpp:requests_deferred gauge
            llamacpp:requests_deferred 0
            """;

    /** llama-server's {@code /slots} (c392e509, {@code --slots}): slot 0 generating, slot 1 idle; each with its prompt. */
    static final String LLAMA_SLOTS = "[{\"id\":0,\"id_task\":57,\"n_ctx\":1024,\"speculative\":false,"
            + "\"is_processing\":true,\"non_causal\":false,\"params\":{\"n_predict\":32000},"
            + "\"prompt\":\"A secret prompt\",\"next_token\":{\"has_next_token\":true,\"has_new_line\":false,"
            + "\"n_remain\":31877,\"n_decoded\":123,\"stopping_word\":\"\"}},"
            + "{\"id\":1,\"id_task\":-1,\"n_ctx\":1024,\"speculative\":false,\"is_processing\":false,"
            + "\"non_causal\":false,\"params\":{},\"prompt\":\"\",\"next_token\":[{\"has_next_token\":true,"
            + "\"n_remain\":-1,\"n_decoded\":0,\"stopping_word\":\"\"}]}]";

    static final String LLAMA_NOT_FOUND =
            "{\"error\":{\"code\":404,\"message\":\"File Not Found\",\"type\":" + "\"not_found_error\"}}";

    static Mono<Void> send(HttpServerResponse res, int status, String body) {
        return res.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                .sendString(Mono.just(body))
                .then();
    }

    /** llama-server with {@code -c 256} and {@code --metrics}; {@code body} records the last /tokenize request. */
    static FakeEngine llamaServer(AtomicReference<String> body, boolean loading) {
        return llamaServer(body, loading, new InFlight(Duration.ZERO));
    }

    /** Requests the server is answering at once, each answered after {@code delay}: the most at any moment. */
    record InFlight(Duration delay, AtomicInteger now, AtomicInteger most) {

        InFlight(Duration delay) {
            this(delay, new AtomicInteger(), new AtomicInteger());
        }

        Mono<Void> answer(Mono<Void> response) {
            // Counted out before the answer is written: the client may send its next request as soon as it has read
            // the answer, before a count-out after the write would run (seen once: two "at once" that were not).
            return Mono.fromRunnable(() -> most.accumulateAndGet(now.incrementAndGet(), Math::max))
                    .then(Mono.delay(delay))
                    .then(Mono.fromRunnable(now::decrementAndGet))
                    .then(response);
        }
    }

    static FakeEngine llamaServer(AtomicReference<String> body, boolean loading, InFlight inFlight) {
        return FakeEngine.start(routes -> routes.get(
                        "/health",
                        (req, res) -> loading
                                ? send(
                                        res,
                                        503,
                                        "{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":"
                                                + "\"unavailable_error\"}}")
                                : send(res, 200, "{\"status\":\"ok\"}"))
                .get("/v1/models", (req, res) -> send(res, 200, LLAMA_MODELS))
                .get("/props", (req, res) -> inFlight.answer(send(res, 200, LLAMA_PROPS)))
                .get("/slots", (req, res) -> inFlight.answer(send(res, 200, LLAMA_SLOTS)))
                .get(
                        "/metrics",
                        (req, res) -> inFlight.answer(res.status(200)
                                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4")
                                .sendString(Mono.just(LLAMA_METRICS))
                                .then()))
                .post(
                        "/tokenize",
                        (req, res) -> inFlight.answer(req.receive()
                                .aggregate()
                                .asString()
                                .flatMap(request -> {
                                    body.set(request);
                                    // llama-server reads "content" only; anything else gets an empty token list.
                                    return send(
                                            res,
                                            200,
                                            request.contains("\"content\"")
                                                    ? "{\"tokens\":[1,450,4996,17354]}"
                                                    : "{\"tokens\":[]}");
                                })))
                .post(
                        "/detokenize",
                        (req, res) -> inFlight.answer(send(
                                res, 200, "{\"content\":\"<s> The quick brown fox jumps over" + " the lazy dog.\"}")))
                .route(req -> true, (req, res) -> inFlight.answer(send(res, 404, LLAMA_NOT_FOUND))));
    }

    /** Discovery of the engine behind {@code client}, its dialect not configured, its model as it lists it. */
    static EngineSurface discover(WebClientEngineClient client) {
        return new EngineDiscovery(client, Optional.empty(), null)
                .discover(success(client.model()))
                .block(Duration.ofSeconds(10));
    }

    @Test
    void tokenizeInTheLlamaCppFormSendsContentAndReadsTheBareTokenList() {
        AtomicReference<String> body = new AtomicReference<>();
        try (FakeEngine engine = llamaServer(body, false);
                WebClientEngineClient client = client(engine.url())) {

            TokenCount count = success(client.tokenize(EngineDialect.LLAMA_CPP, "small.gguf", "The quick brown"));

            assertThat(body.get()).isEqualTo("{\"content\":\"The quick brown\",\"add_special\":true}");
            assertThat(count).isEqualTo(new TokenCount(4, null, List.of(1, 450, 4996, 17354)));
        }
    }

    @Test
    void tokenizeInTheVllmFormAgainstLlamaServerCountsNothingRatherThanFailing() {
        // Issue 15: {"model","prompt"} gets 200 {"tokens":[]}; this used to be malformed_response "no count" forever.
        AtomicReference<String> body = new AtomicReference<>();
        try (FakeEngine engine = llamaServer(body, false);
                WebClientEngineClient client = client(engine.url())) {

            TokenCount count = success(client.tokenize(EngineDialect.VLLM, "small.gguf", "The quick brown"));

            assertThat(count.tokens()).isEmpty();
            assertThat(count.count()).isZero();
        }
    }

    @Test
    void llamaServersSlotsAreReadWithoutTheirPrompts() {
        try (FakeEngine engine = llamaServer(new AtomicReference<>(), false);
                WebClientEngineClient client = client(engine.url())) {
            SlotsSample slots = success(client.slots());

            assertThat(slots.slots())
                    .containsExactly(new SlotsSample.Slot(0, 57, true, 123), new SlotsSample.Slot(1, -1, false, 0));
            assertThat(slots.processing()).isEqualTo(1);
            assertThat(slots.full()).isFalse();
            assertThat(slots.toString()).doesNotContain("secret");
        }
    }

    @Test
    void slotsOffNamesItNotSupported() {
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get(
                        "/slots",
                        (req, res) -> send(
                                res,
                                501,
                                "{\"error\":{\"code\":501,\"message\":\"This server does not support slots"
                                        + " endpoint. Start it with `--slots`\",\"type\":\"not_supported_error\"}}")));
                WebClientEngineClient client = client(engine.url())) {
            EngineCall<SlotsSample> call = client.slots().block();

            assertThat(call).isInstanceOf(EngineCall.Failure.class);
            assertThat(((EngineCall.Failure<SlotsSample>) call).failure().kind())
                    .isEqualTo(EngineFailure.Kind.NOT_SUPPORTED);
        }
    }

    @Test
    void llamaServerAnswersAreReadInItsOwnShapes() {
        try (FakeEngine engine = llamaServer(new AtomicReference<>(), false);
                WebClientEngineClient client = client(engine.url())) {

            assertThat(success(client.model()))
                    .isEqualTo(new ModelCard(
                            "small.gguf",
                            null,
                            null,
                            "llamacpp",
                            "vocab_type=1,n_vocab=32000,n_ctx_train=2048,n_embd=64,n_params=4178240,size=16712960"));
            assertThat(success(client.serverInfo(EngineDialect.LLAMA_CPP)))
                    .isEqualTo(new ServerInfo(
                            "/props", 256, "/props default_generation_settings.n_ctx", null, "b0-unknown", 1));
            assertThat(success(client.detokenize(EngineDialect.LLAMA_CPP, "small.gguf", List.of(1, 450))))
                    .contains("The quick brown fox");
            EngineMetricsSample sample = success(client.metrics());
            assertThat(sample.families()).containsExactly("llamacpp:");
            assertThat(sample.generationTokens()).isEqualTo(65.0);
            assertThat(sample.promptTokens()).isEqualTo(518.0);
            assertThat(sample.requestsRunning()).isZero();
            assertThat(sample.processStartTimeSeconds()).isNull();
            assertThat(sample.requestSuccess()).isNull();
        }
    }

    @Test
    void llamaServerNotFoundForAnOptionalEndpointIsNotSupported() {
        // Its 404 is in its own error shape ("File Not Found"), which used to count as an answer: version "available".
        try (FakeEngine engine = llamaServer(new AtomicReference<>(), false);
                WebClientEngineClient client = client(engine.url())) {

            EngineFailure version = failure(client.version());

            assertThat(version.kind()).isEqualTo(EngineFailure.Kind.NOT_SUPPORTED);
            assertThat(version.detail())
                    .isEqualTo("GET /version answered 404: File Not Found: this server does not" + " offer it");
        }
    }

    @Test
    void metricsWithoutTheMetricsFlagAnswer501AndAreNotSupported() {
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get(
                        "/metrics",
                        (req, res) -> send(
                                res,
                                501,
                                "{\"error\":{\"code\":501,\"message\":\"This server does not support metrics endpoint."
                                        + " Start it with `--metrics`\",\"type\":\"not_supported_error\"}}")));
                WebClientEngineClient client = client(engine.url())) {

            EngineFailure metrics = failure(client.metrics());

            assertThat(metrics.kind()).isEqualTo(EngineFailure.Kind.NOT_SUPPORTED);
            assertThat(metrics.detail()).contains("Start it with `--metrics`");
        }
    }

    @Test
    void healthWhileTheModelLoadsIsLoadingNotAnHttpStatus() {
        try (FakeEngine engine = llamaServer(new AtomicReference<>(), true);
                WebClientEngineClient client = client(engine.url())) {

            EngineFailure health = failure(client.health());

            assertThat(health.kind()).isEqualTo(EngineFailure.Kind.LOADING);
            assertThat(health.httpStatus()).isEqualTo(503);
            assertThat(health.detail()).isEqualTo("GET /health answered 503: Loading model");
        }
    }

    @Test
    void vllmsDeadEngine503StaysAnHttpStatus() {
        try (FakeEngine engine = FakeEngine.start(routes ->
                        routes.get("/health", (req, res) -> res.status(503).send()));
                WebClientEngineClient client = client(engine.url())) {

            EngineFailure health = failure(client.health());

            assertThat(health.kind()).isEqualTo(EngineFailure.Kind.HTTP_STATUS);
            assertThat(health.httpStatus()).isEqualTo(503);
        }
    }

    @Test
    void plainTextAndHtmlErrorBodiesReachTheDetailBoundedAndWithoutTags() {
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get(
                                "/v1/models",
                                (req, res) -> res.status(HttpResponseStatus.BAD_GATEWAY)
                                        .header(HttpHeaderNames.CONTENT_TYPE, "text/plain")
                                        .sendString(Mono.just("upstream connect error or disconnect/reset before"
                                                + " headers. reset reason: connection termination")))
                        .get(
                                "/health",
                                (req, res) -> res.status(HttpResponseStatus.SERVICE_UNAVAILABLE)
                                        .header(HttpHeaderNames.CONTENT_TYPE, "text/html")
                                        .sendString(Mono.just("<html><head><style>body{}</style></head><body><h1>503"
                                                + " Service Temporarily Unavailable</h1>" + "x".repeat(400)
                                                + "</body></html>"))));
                WebClientEngineClient client = client(engine.url())) {

            assertThat(failure(client.model()).detail())
                    .isEqualTo("GET /v1/models answered 502: upstream connect error or disconnect/reset before"
                            + " headers. reset reason: connection termination");
            String health = failure(client.health()).detail();
            assertThat(health).startsWith("GET /health answered 503: 503 Service Temporarily Unavailable xxx");
            assertThat(health).doesNotContain("<h1>").doesNotContain("body{}").endsWith("...");
        }
    }

    @Test
    void tgiErrorsAndTokenizeAnswersAreRead() {
        AtomicReference<String> body = new AtomicReference<>();
        try (FakeEngine engine = FakeEngine.start(routes -> routes.post(
                                "/tokenize",
                                (req, res) -> req.receive()
                                        .aggregate()
                                        .asString()
                                        .flatMap(request -> {
                                            body.set(request);
                                            return send(
                                                    res,
                                                    200,
                                                    "[{\"id\":415,\"text\":\"The\",\"start\":0,\"stop\":3},{\"id\":2936,"
                                                            + "\"text\":\" quick\",\"start\":3,\"stop\":9}]");
                                        }))
                        .get(
                                "/info",
                                (req, res) -> send(
                                        res,
                                        200,
                                        "{\"model_id\":\"m\",\"max_input_tokens\":1024,\"max_total_tokens\":2048,"
                                                + "\"version\":\"3.0.1\"}"))
                        .get(
                                "/v1/models",
                                (req, res) -> send(
                                        res,
                                        422,
                                        "{\"error\":\"Input validation error: `inputs` tokens +"
                                                + " `max_new_tokens` must be <= 2048. Given: 2000 `inputs` tokens and"
                                                + " 64 `max_new_tokens`\",\"error_type\":\"validation\"}")));
                WebClientEngineClient client = client(engine.url())) {

            assertThat(success(client.tokenize(EngineDialect.TGI, "m", "The quick")))
                    .isEqualTo(new TokenCount(2, null, List.of(415, 2936)));
            assertThat(body.get()).isEqualTo("{\"inputs\":\"The quick\"}");
            assertThat(success(client.serverInfo(EngineDialect.TGI)))
                    .isEqualTo(new ServerInfo("/info", 2048, "/info max_total_tokens", 1024, "3.0.1", null));
            String detail = failure(client.model()).detail();
            assertThat(detail).startsWith("GET /v1/models answered 422: Input validation error");
            assertThat(EngineMessages.contextLength(detail)).isTrue();
        }
    }

    @Test
    void discoveryOfLlamaServerFindsItsDialectContextVersionAndWhatItLacks() {
        try (FakeEngine engine = llamaServer(new AtomicReference<>(), false);
                WebClientEngineClient client = client(engine.url())) {
            EngineSurface surface = discover(client);

            assertThat(surface.dialect()).isEqualTo(EngineDialect.LLAMA_CPP);
            assertThat(surface.dialectEvidence()).isEqualTo("/v1/models owned_by llamacpp");
            assertThat(surface.maxModelLen()).isEqualTo(256);
            assertThat(surface.maxModelLenSource()).isEqualTo("/props default_generation_settings.n_ctx");
            assertThat(surface.version()).isEqualTo("b0-unknown");
            assertThat(surface.tokenizeUsable()).isTrue();
            assertThat(surface.endpoint(EngineSurface.Endpoint.DETOKENIZE).usable())
                    .isTrue();
            assertThat(surface.versionEndpointUsable()).isFalse();
            assertThat(surface.endpoint(EngineSurface.Endpoint.METRICS).describe())
                    .isEqualTo("usable: reachable, no vllm:* series, llamacpp:* series, no process start time");
            assertThat(surface.capabilities(success(client.metrics())))
                    .containsEntry(
                            "busyDetection",
                            "yes: /metrics has requests running and tokens generated (no vllm:* series, llamacpp:*"
                                    + " series)");
        }
    }

    @Test
    void discoveryOfLlamaServerAsksOneQuestionAtATime() {
        // llama-server gives every open connection one of its few HTTP threads (3 on a small machine): discovery
        // asking /tokenize, /version and /metrics at once would take them all while the engine's clients wait.
        InFlight inFlight = new InFlight(Duration.ofMillis(50));
        try (FakeEngine engine = llamaServer(new AtomicReference<>(), false, inFlight);
                WebClientEngineClient client = client(engine.url())) {
            EngineSurface surface = discover(client);

            assertThat(surface.dialect()).isEqualTo(EngineDialect.LLAMA_CPP);
            assertThat(surface.tokenizeUsable()).isTrue();
            assertThat(inFlight.most()).hasValue(1);
        }
    }

    @Test
    void discoveryWithAConfiguredMaxModelLenThatDiffersFromTheEngineNamesTheProblem() {
        try (FakeEngine engine = llamaServer(new AtomicReference<>(), false);
                WebClientEngineClient client = client(engine.url())) {
            ModelCard card = success(client.model());

            EngineSurface surface = new EngineDiscovery(client, Optional.empty(), 4096)
                    .discover(card)
                    .block(Duration.ofSeconds(10));

            assertThat(surface.maxModelLen()).isEqualTo(256);
            assertThat(surface.problems())
                    .containsExactly("readygate.engine.max-model-len is 4096 but the engine reports 256 (/props"
                            + " default_generation_settings.n_ctx); the engine's value is used");
        }
    }

    @Test
    void discoveryOfAServerWithoutAnyExtraEndpointIsAGenericOpenAiServer() {
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get(
                                "/v1/models",
                                (req, res) -> send(res, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"m\"}]}"))
                        .route(req -> true, (req, res) -> send(res, 404, "{\"detail\":\"Not Found\"}")));
                WebClientEngineClient client = client(engine.url())) {
            EngineSurface surface = discover(client);

            assertThat(surface.dialect()).isEqualTo(EngineDialect.OPENAI);
            assertThat(surface.maxModelLen()).isNull();
            assertThat(surface.maxModelLenSource()).startsWith("unknown:");
            assertThat(surface.describeEndpoints())
                    .containsEntry(
                            "tokenize",
                            "missing: POST /tokenize answered 404: Not Found: this server does not offer it; prompts"
                                    + " are calibrated from usage")
                    .containsEntry(
                            "metrics",
                            "missing: GET /metrics answered 404: Not Found: this server does not offer it; no busy"
                                    + " detection and no restart detection by process start");
            assertThat(surface.capabilities(null).get("restartDetection"))
                    .contains("no restart detection by process start: no /metrics");
        }
    }

    @Test
    void everyDialectButVllmSaysWhatReadygateCannotSeeOfIt() {
        assertThat(EngineDialect.VLLM.unseen()).isEmpty();
        for (EngineDialect dialect : List.of(EngineDialect.LLAMA_CPP, EngineDialect.SGLANG, EngineDialect.TGI)) {
            assertThat(dialect.unseen()).as(dialect.value()).anyMatch(line -> line.startsWith("restart paths"));
        }
        // SGLang's /health generates in 2026 builds: readygate polls it once per ready-interval, and says so.
        assertThat(EngineDialect.SGLANG.unseen())
                .anyMatch(line -> line.contains("/health_generate") && line.contains("SGLANG_ENABLE_HEALTH_ENDPOINT"))
                .anyMatch(line -> line.contains("readygate.evidence.engine-log"));
    }
}
