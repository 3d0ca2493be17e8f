package dev.readygate.simulator;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The HTTP surface of one simulated vLLM 0.31 engine process: {@code /health}, {@code /ping}, {@code /version},
 * {@code /load}, {@code /v1/models}, {@code /tokenize}, {@code /detokenize}, {@code /metrics},
 * {@code /v1/completions} and {@code /v1/chat/completions}, with the active faults applied; with sleep mode, vLLM's dev
 * routes {@code /sleep}, {@code /wake_up}, {@code /is_sleeping} and {@code /collective_rpc}.
 */
final class EngineApi {

    private static final String JSON = "application/json";
    private static final String SSE = "text/event-stream; charset=utf-8";
    private static final Set<String> JSON_ENDPOINTS = Set.of("version", "load", "v1/models", "tokenize", "detokenize");

    private final SimulatorProperties properties;
    private final SimulatedModel model;
    private final FaultSet faults;
    private final JsonMapper json;
    private final Clock clock;
    private final Scheduler timer;
    private final EngineInstance instance;
    private final LatencyModel latency;

    EngineApi(
            SimulatorProperties properties,
            SimulatedModel model,
            FaultSet faults,
            JsonMapper json,
            Clock clock,
            Scheduler timer,
            EngineInstance instance) {
        this.properties = properties;
        this.model = model;
        this.faults = faults;
        this.json = json;
        this.clock = clock;
        this.timer = timer;
        this.instance = instance;
        this.latency = new LatencyModel(properties.timing());
    }

    /** The version an SGLang engine's {@code /get_server_info} reports (a 2026 build's; illustrative). */
    static final String SGLANG_VERSION = "0.5.9";

    void routes(HttpServerRoutes routes) {
        routes.get("/health", guarded(false, this::health))
                .get("/v1/models", guarded(false, this::models))
                .post("/v1/completions", guarded(true, (req, res) -> inference(req, res, false)))
                .post("/v1/chat/completions", guarded(true, (req, res) -> inference(req, res, true)));
        if (properties.sglang()) {
            // SGLang's own endpoints beside the OpenAI routes (http_server.py): /health_generate (one handler with
            // /health in 2026 builds), /get_server_info with its version, /get_model_info, a vLLM-shaped /tokenize.
            routes.get("/health_generate", guarded(false, this::health))
                    .get(
                            "/get_server_info",
                            guarded(
                                    false,
                                    (req, res) -> sendJson(
                                            res,
                                            Map.of(
                                                    "version",
                                                    SGLANG_VERSION,
                                                    "model_path",
                                                    properties.model().root(),
                                                    "tp_size",
                                                    properties.deployment().tensorParallelSize()))))
                    .get(
                            "/get_model_info",
                            guarded(
                                    false,
                                    (req, res) -> sendJson(
                                            res,
                                            Map.of(
                                                    "model_path",
                                                    properties.model().root(),
                                                    "tokenizer_path",
                                                    properties.model().root(),
                                                    "is_generation",
                                                    true))))
                    .get("/metrics", guarded(false, this::metrics))
                    .post("/tokenize", guarded(false, this::tokenize))
                    .post("/detokenize", guarded(false, this::detokenize));
        } else if (!properties.openaiOnly()) {
            // vLLM's own endpoints; a plain OpenAI-compatible server has none of them.
            routes.get("/ping", guarded(false, this::health))
                    .post("/ping", guarded(false, this::health))
                    .get(
                            "/version",
                            guarded(false, (req, res) -> sendJson(res, Map.of("version", properties.vllmVersion()))))
                    .get("/load", guarded(false, (req, res) -> sendJson(res, Map.of("server_load", 0))))
                    .get("/metrics", guarded(false, this::metrics))
                    .post("/tokenize", guarded(false, this::tokenize))
                    .post("/detokenize", guarded(false, this::detokenize));
            if (properties.sleepMode()) {
                // --enable-sleep-mode with VLLM_SERVER_DEV_MODE=1: the dev routes (serve/sleep/api_router.py and the
                // dev server's collective_rpc); without dev mode vLLM does not attach them.
                routes.post("/sleep", guarded(false, this::sleep))
                        .post("/wake_up", guarded(false, this::wakeUp))
                        .get(
                                "/is_sleeping",
                                guarded(
                                        false,
                                        (req, res) -> sendJson(
                                                res,
                                                Map.of(
                                                        "is_sleeping",
                                                        instance.sleep().sleeping()))))
                        .post("/collective_rpc", guarded(false, this::collectiveRpc));
            }
        }
        routes.route(
                request -> true,
                (req, res) -> res.status(HttpResponseStatus.NOT_FOUND)
                        .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                        .sendString(Mono.just("{\"detail\":\"Not Found\"}")));
    }

    /** Applies what comes before any handler: connection resets, hangs and the API key. */
    private BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> guarded(
            boolean inference, BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler) {
        return (request, response) -> {
            if (faults.hits(Fault.RESET, inference)) {
                return reset(response);
            }
            boolean protectedPath = request.uri().startsWith("/v1/") || properties.apiKeyProtectsHealth();
            if (protectedPath && !authorized(request)) {
                return response.status(HttpResponseStatus.UNAUTHORIZED)
                        .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                        .sendString(Mono.just("{\"error\":\"Unauthorized\"}"));
            }
            if (faults.hits(Fault.HANG, inference)) {
                return request.receive().then(Mono.never());
            }
            if (!inference && faults.hits(Fault.MALFORMED_JSON, false) && JSON_ENDPOINTS.contains(request.path())) {
                return response.header(HttpHeaderNames.CONTENT_TYPE, JSON)
                        .sendString(Mono.just("{\"object\":\"list\",\"data\":[{\"id\":"));
            }
            return handler.apply(request, response);
        };
    }

    private boolean authorized(HttpServerRequest request) {
        String key = properties.apiKey();
        if (key == null || key.isEmpty()) {
            return true;
        }
        String header = request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION);
        return header != null && header.equals("Bearer " + key);
    }

    private Publisher<Void> health(HttpServerRequest request, HttpServerResponse response) {
        // SGLang answers 503 (an empty body) from its open port until its own warmup request came back.
        HttpResponseStatus status =
                faults.has(Fault.ENGINE_DEAD) || clock.instant().isBefore(instance.healthFrom())
                        ? HttpResponseStatus.SERVICE_UNAVAILABLE
                        : HttpResponseStatus.OK;
        return response.status(status)
                .header(HttpHeaderNames.CONTENT_LENGTH, "0")
                .send();
    }

    /**
     * {@code POST /sleep?level=N&mode=M} (level 1 and mode {@code abort} by default; the query string only, a body is
     * not read): an empty 200 once asleep. {@code mode} says what happens to the requests in flight
     * ({@link EngineSleep.Mode}): by default they end at once with {@code finish_reason} {@code abort}. A level that is
     * not an integer fails {@code int()} in the handler: Starlette's plain 500; levels other than 1 and 2, and an unknown
     * mode, the same (the simulator's choice).
     */
    private Publisher<Void> sleep(HttpServerRequest request, HttpServerResponse response) {
        Map<String, List<String>> query = query(request);
        List<String> levels = query.getOrDefault("level", List.of("1"));
        int level;
        try {
            level = Integer.parseInt(levels.getFirst().strip());
        } catch (NumberFormatException ex) {
            level = -1;
        }
        EngineSleep.Mode mode =
                EngineSleep.Mode.of(query.getOrDefault("mode", List.of("abort")).getFirst());
        if ((level != 1 && level != 2) || mode == null) {
            return response.status(HttpResponseStatus.INTERNAL_SERVER_ERROR)
                    .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                    .sendString(Mono.just("Internal Server Error"));
        }
        return request.receive()
                .then()
                .then(instance.sleep().sleep(level, mode))
                .then(Mono.defer(() -> Mono.from(emptyOk(response))));
    }

    /** {@code POST /wake_up} with {@code tags} repeated ({@code weights}, {@code kv_cache}; none: all): an empty 200. */
    private Publisher<Void> wakeUp(HttpServerRequest request, HttpServerResponse response) {
        List<String> tags = query(request).getOrDefault("tags", List.of());
        return request.receive()
                .then()
                .then(instance.sleep().wakeUp(tags.isEmpty() ? null : List.copyOf(tags)))
                .then(Mono.defer(() -> Mono.from(emptyOk(response))));
    }

    /**
     * {@code POST /collective_rpc} with {@code {"method": "reload_weights"}}: the weights are read again, each worker
     * answers None ({@code {"results":[null]}}, one per rank). No method: 400; a method the simulator does not know:
     * 500 (the worker's AttributeError).
     */
    private Publisher<Void> collectiveRpc(HttpServerRequest request, HttpServerResponse response) {
        return request.receive()
                .aggregate()
                .asString(StandardCharsets.UTF_8)
                .defaultIfEmpty("")
                .flatMap(body -> {
                    JsonNode root;
                    try {
                        root = json.readTree(body);
                    } catch (RuntimeException ex) {
                        return Mono.from(detail(response, HttpResponseStatus.BAD_REQUEST, "JSON decode error"));
                    }
                    JsonNode method = root == null ? null : root.get("method");
                    if (method == null || method.isNull()) {
                        return Mono.from(
                                detail(response, HttpResponseStatus.BAD_REQUEST, "Missing 'method' in request body"));
                    }
                    if (!method.asString().equals("reload_weights")) {
                        return Mono.from(response.status(HttpResponseStatus.INTERNAL_SERVER_ERROR)
                                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                                .sendString(Mono.just("Internal Server Error")));
                    }
                    instance.sleep().reloadWeights();
                    List<Object> results = new ArrayList<>();
                    for (int rank = 0; rank < properties.deployment().tensorParallelSize(); rank++) {
                        results.add(null);
                    }
                    Map<String, Object> answer = new LinkedHashMap<>();
                    answer.put("results", results);
                    return Mono.from(sendJson(response, answer));
                });
    }

    private static Map<String, List<String>> query(HttpServerRequest request) {
        return new QueryStringDecoder(request.uri()).parameters();
    }

    private static Publisher<Void> emptyOk(HttpServerResponse response) {
        return response.status(HttpResponseStatus.OK)
                .header(HttpHeaderNames.CONTENT_LENGTH, "0")
                .send();
    }

    private Publisher<Void> detail(HttpServerResponse response, HttpResponseStatus status, String detail) {
        return response.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                .sendString(Mono.fromSupplier(() -> json.writeValueAsString(Map.of("detail", detail))));
    }

    private Publisher<Void> metrics(HttpServerRequest request, HttpServerResponse response) {
        return response.header(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                .sendString(Mono.fromSupplier(() -> properties.sglang()
                        ? instance.metrics().renderSglang()
                        : instance.metrics().render()));
    }

    private Publisher<Void> models(HttpServerRequest request, HttpServerResponse response) {
        SimulatorProperties.Model m = properties.model();
        long created = clock.instant().getEpochSecond();
        Map<String, Object> permission = new LinkedHashMap<>();
        permission.put(
                "id",
                "modelperm-" + hex(UUID.nameUUIDFromBytes(m.servedModelName().getBytes(StandardCharsets.UTF_8))));
        permission.put("object", "model_permission");
        permission.put("created", created);
        permission.put("allow_create_engine", false);
        permission.put("allow_sampling", true);
        permission.put("allow_logprobs", true);
        permission.put("allow_search_indices", false);
        permission.put("allow_view", true);
        permission.put("allow_fine_tuning", false);
        permission.put("organization", "*");
        permission.put("group", null);
        permission.put("is_blocking", false);
        Map<String, Object> card = new LinkedHashMap<>();
        card.put("id", m.servedModelName());
        card.put("object", "model");
        card.put("created", created);
        card.put("owned_by", properties.sglang() ? "sglang" : "vllm");
        if (!properties.openaiOnly()) {
            card.put("root", m.root());
            card.put("parent", null);
            card.put("max_model_len", m.maxModelLen());
        }
        card.put("permission", List.of(permission));
        return sendJson(response, Map.of("object", "list", "data", List.of(card)));
    }

    private Publisher<Void> tokenize(HttpServerRequest request, HttpServerResponse response) {
        return request.receive()
                .aggregate()
                .asString(StandardCharsets.UTF_8)
                .defaultIfEmpty("")
                .flatMap(body -> {
                    JsonNode root = parseObject(body);
                    List<Integer> tokens;
                    if (root.has("messages")) {
                        tokens = model.tokenizer().encode(ChatTemplate.render(root.get("messages")), true);
                    } else {
                        JsonNode prompt = root.get("prompt");
                        if (prompt == null || !prompt.isString()) {
                            throw EngineError.badRequest(
                                    "1 validation error for TokenizeRequest\nprompt\n  Field required", "prompt");
                        }
                        tokens = model.tokenizer().encode(prompt.asString(), false);
                    }
                    boolean strs = root.path("return_token_strs").asBoolean(false);
                    Map<String, Object> body1 = new LinkedHashMap<>();
                    body1.put("count", tokens.size());
                    body1.put("max_model_len", properties.model().maxModelLen());
                    body1.put("tokens", tokens);
                    body1.put(
                            "token_strs",
                            strs
                                    ? tokens.stream()
                                            .map(model.tokenizer()::tokenText)
                                            .toList()
                                    : null);
                    return Mono.from(sendJson(response, body1));
                })
                .onErrorResume(EngineError.class, error -> Mono.from(sendError(response, error)));
    }

    private Publisher<Void> detokenize(HttpServerRequest request, HttpServerResponse response) {
        return request.receive()
                .aggregate()
                .asString(StandardCharsets.UTF_8)
                .defaultIfEmpty("")
                .flatMap(body -> {
                    JsonNode tokens = parseObject(body).get("tokens");
                    if (tokens == null || !tokens.isArray()) {
                        throw EngineError.badRequest(
                                "1 validation error for DetokenizeRequest\ntokens\n  Field required", "tokens");
                    }
                    List<Integer> ids = new ArrayList<>();
                    for (JsonNode id : tokens) {
                        if (!id.isIntegralNumber() || !model.tokenizer().isValid(id.intValue())) {
                            throw EngineError.badRequest("Token id " + id + " is out of vocabulary", "tokens");
                        }
                        ids.add(id.intValue());
                    }
                    return Mono.from(sendJson(
                            response, Map.of("prompt", model.tokenizer().decode(ids, false))));
                })
                .onErrorResume(EngineError.class, error -> Mono.from(sendError(response, error)));
    }

    private JsonNode parseObject(String body) {
        try {
            JsonNode root = json.readTree(body);
            if (root != null && root.isObject()) {
                return root;
            }
        } catch (RuntimeException ex) {
            // Reported below as vLLM reports a body it cannot decode.
        }
        throw EngineError.badRequest("JSON decode error", null);
    }

    private Publisher<Void> inference(HttpServerRequest request, HttpServerResponse response, boolean chat) {
        return request.receive()
                .aggregate()
                .asString(StandardCharsets.UTF_8)
                .defaultIfEmpty("")
                .flatMap(body -> {
                    InferenceRequest parsed = InferenceRequest.parse(body, chat, model.tokenizer(), json);
                    // A sleeping engine's scheduler is paused: the request is queued until the engine is awake.
                    return queuedWhileAsleep().then(Mono.defer(() -> {
                        Plan plan = plan(parsed);
                        return Mono.from(parsed.stream() ? stream(response, plan) : respond(response, plan));
                    }));
                })
                .onErrorResume(EngineError.class, error -> Mono.from(sendError(response, error)));
    }

    /** Everything decided before generation starts, or an error in vLLM's shape. */
    private record Plan(
            InferenceRequest request,
            String id,
            long created,
            List<Integer> prompt,
            int maxTokens,
            int cachedTokens,
            Duration ttft,
            double slowFactor,
            String checkpoint) {}

    private Plan plan(InferenceRequest request) {
        SimulatorProperties.Model m = properties.model();
        if (request.model() != null && !request.model().equals(m.servedModelName())) {
            throw new EngineError(
                    HttpResponseStatus.NOT_FOUND,
                    "NotFoundError",
                    "The model `" + request.model() + "` does not exist.",
                    "model");
        }
        if (faults.has(Fault.ENGINE_DEAD)) {
            throw new EngineError(
                    HttpResponseStatus.INTERNAL_SERVER_ERROR,
                    "InternalServerError",
                    "EngineCore encountered an issue. See stack trace (above) for the root cause.",
                    null);
        }
        if (faults.has(Fault.ERROR_5XX)) {
            throw new EngineError(
                    HttpResponseStatus.INTERNAL_SERVER_ERROR, "InternalServerError", "Internal server error", null);
        }
        if (faults.has(Fault.BUSY_429)) {
            throw new EngineError(
                    HttpResponseStatus.TOO_MANY_REQUESTS,
                    "TooManyRequestsError",
                    "The server is overloaded; retry later.",
                    null);
        }
        List<Integer> prompt = request.promptTokenIds();
        if (faults.has(Fault.TRUNCATE_PROMPT)
                && prompt.size() > properties.faults().truncatePromptLimit()) {
            prompt = prompt.subList(0, properties.faults().truncatePromptLimit());
        }
        int limit = m.maxModelLen();
        int maxTokens = request.maxTokens() != null ? request.maxTokens() : limit - prompt.size();
        if (request.maxTokens() == null && prompt.size() >= limit) {
            throw EngineError.badRequest(
                    ("This model's maximum context length is %d tokens. However, your request has "
                                    + "%d input tokens. Please reduce the length of the input messages.")
                            .formatted(limit, prompt.size()),
                    "input_tokens");
        }
        if (prompt.size() + maxTokens > limit) {
            // vLLM stops tokenizing one token past what could fit, hence "at least".
            int atLeast = limit - maxTokens + 1 > 0 ? Math.min(prompt.size(), limit - maxTokens + 1) : prompt.size();
            throw EngineError.badRequest(
                    ("This model's maximum context length is %d tokens. However, you requested "
                                    + "%d output tokens and your prompt contains at least %d input tokens, for a total of at least "
                                    + "%d tokens. Please reduce the length of the input prompt or the number of requested output "
                                    + "tokens. (parameter=input_tokens, value=%d)")
                            .formatted(limit, maxTokens, atLeast, atLeast + maxTokens, atLeast),
                    "input_tokens");
        }
        int cached = instance.prefixCache().lookupAndInsert(prompt);
        double slow = faults.has(Fault.SLOW) ? properties.faults().slowFactor() : 1.0;
        int admitted = instance.served().getAndIncrement();
        int warmupRequests = properties.timing().warmupRequests();
        boolean warmup = admitted < warmupRequests;
        if (admitted == warmupRequests - 1) {
            instance.warmedUpAt().set(clock.instant());
        }
        Duration ttft = latency.timeToFirstToken(
                prompt.size(), cached, instance.metrics().running.get() + 1, warmup, slow);
        String checkpoint =
                instance.answeringCheckpoint(faults, properties.faults().wrongCheckpoint());
        return new Plan(
                request,
                (request.chat() ? "chatcmpl-" : "cmpl-") + randomHex(),
                clock.instant().getEpochSecond(),
                prompt,
                maxTokens,
                cached,
                ttft,
                slow,
                checkpoint);
    }

    private Duration itl(Plan plan) {
        return latency.interTokenLatency(instance.metrics().running.get(), plan.slowFactor());
    }

    /** Marks the end of a request a sleep aborted, after its last token; never sent as a token. */
    private static final SimulatedModel.Token ABORTED = new SimulatedModel.Token(-1, "", 0.0, List.of());

    /**
     * The tokens of one generation, paced like an engine: TTFT, then one token per inter-token latency; ended early,
     * with {@link #ABORTED} last, by a sleep with mode=abort.
     */
    private Flux<SimulatedModel.Token> generate(Plan plan) {
        InferenceRequest request = plan.request();
        boolean kvTooSmall = faults.has(Fault.KV_TOO_SMALL)
                && plan.prompt().size() + plan.maxTokens() > properties.faults().kvTooSmallTokens();
        if (kvTooSmall
                && properties.faults().kvTooSmallBehavior() == SimulatorProperties.Faults.KvTooSmallBehavior.STUCK) {
            return queuedForever();
        }
        if (kvTooSmall) {
            return Flux.error(new EngineError(
                    HttpResponseStatus.INTERNAL_SERVER_ERROR,
                    "InternalServerError",
                    "Insufficient KV cache blocks: the request needs %d tokens but the KV cache holds %d."
                            .formatted(
                                    plan.prompt().size() + plan.maxTokens(),
                                    properties.faults().kvTooSmallTokens()),
                    null));
        }
        EngineMetrics metrics = instance.metrics();
        SimulatedModel.Generation generation = model.start(
                plan.checkpoint(),
                plan.prompt(),
                new SimulatedModel.Sampling(
                        plan.maxTokens(),
                        request.minTokens(),
                        request.ignoreEos(),
                        request.temperature(),
                        request.seed(),
                        request.logprobs() == null ? 0 : request.logprobs()));
        long startNanos = System.nanoTime();
        long[] firstTokenNanos = {0};
        String[] finish = {null};
        EngineSleep sleep = instance.sleep();
        Flux<SimulatedModel.Token> tokens = Flux.range(0, plan.maxTokens())
                .concatMap(
                        i -> sleep.inFlightMayRun()
                                .then(Mono.delay(i == 0 ? plan.ttft() : itl(plan), timer))
                                .map(tick -> {
                                    if (faults.has(Fault.GENERATION_FAILS) || faults.has(Fault.ENGINE_DEAD)) {
                                        throw new EngineError(
                                                HttpResponseStatus.INTERNAL_SERVER_ERROR,
                                                "InternalServerError",
                                                "EngineCore encountered an issue. See stack trace (above) for the root cause.",
                                                null);
                                    }
                                    long now = System.nanoTime();
                                    if (i == 0) {
                                        firstTokenNanos[0] = now;
                                        metrics.prefillDone(plan.prompt().size(), (now - startNanos) / 1e9);
                                        metrics.tokenGenerated(-1);
                                    } else {
                                        metrics.tokenGenerated(itl(plan).toNanos() / 1e9);
                                    }
                                    // Other sequences in the batch: vLLM's output is not batch-invariant by default.
                                    SimulatedModel.Token token = generation.next(metrics.running.get() - 1);
                                    if (generation.finished()) {
                                        finish[0] = generation.finishReason();
                                    }
                                    return token;
                                }),
                        0)
                .takeUntil(token -> generation.finished());
        // A sleep with mode=abort ends the request where it is: vLLM's last output says finish_reason abort.
        boolean[] aborted = {false};
        tokens = tokens.takeUntilOther(sleep.aborts().doOnNext(signal -> aborted[0] = true))
                .concatWith(Mono.fromSupplier(() -> aborted[0] ? ABORTED : null));
        if (faults.has(Fault.STALL_STREAM)) {
            tokens = tokens.take(properties.faults().stallAfterTokens()).concatWith(Flux.never());
        }
        return instance.batch()
                .admitted(tokens.doOnSubscribe(s ->
                                metrics.requestStarted(plan.prompt().size(), plan.cachedTokens(), plan.maxTokens()))
                        .doFinally(signal -> {
                            long end = System.nanoTime();
                            double prefill = firstTokenNanos[0] == 0 ? 0 : (firstTokenNanos[0] - startNanos) / 1e9;
                            metrics.requestFinished(
                                    plan.prompt().size(),
                                    plan.maxTokens(),
                                    generation.generated(),
                                    finish[0],
                                    (end - startNanos) / 1e9,
                                    prefill);
                        }));
    }

    /** Waits while the engine sleeps, counted as waiting ({@code vllm:num_requests_waiting}); at once when awake. */
    private Mono<Void> queuedWhileAsleep() {
        EngineSleep sleep = instance.sleep();
        if (!sleep.sleeping()) {
            return Mono.empty();
        }
        EngineMetrics metrics = instance.metrics();
        return sleep.awake()
                .doOnSubscribe(s -> metrics.waiting.incrementAndGet())
                .doFinally(signal -> metrics.waiting.decrementAndGet());
    }

    private Flux<SimulatedModel.Token> queuedForever() {
        EngineMetrics metrics = instance.metrics();
        return Flux.<SimulatedModel.Token>never()
                .doOnSubscribe(s -> metrics.waiting.incrementAndGet())
                .doFinally(signal -> metrics.waiting.decrementAndGet());
    }

    private Publisher<Void> respond(HttpServerResponse response, Plan plan) {
        return generate(plan).collectList().flatMap(generated -> {
            boolean aborted = !generated.isEmpty() && generated.getLast() == ABORTED;
            List<SimulatedModel.Token> tokens = aborted ? generated.subList(0, generated.size() - 1) : generated;
            String body = json.writeValueAsString(completionBody(plan, tokens, aborted));
            if (faults.has(Fault.MALFORMED_JSON)) {
                body = body.substring(0, body.length() / 2) + "<!-- upstream error -->";
            }
            if (faults.has(Fault.TRUNCATED_SSE)) {
                byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                return Mono.from(truncated(response, bytes));
            }
            return Mono.from(response.header(HttpHeaderNames.CONTENT_TYPE, JSON).sendString(Mono.just(body)));
        });
    }

    private Publisher<Void> truncated(HttpServerResponse response, byte[] full) {
        ByteBuf half = Unpooled.wrappedBuffer(full, 0, full.length / 2);
        return Mono.from(response.header(HttpHeaderNames.CONTENT_TYPE, JSON)
                        .header(HttpHeaderNames.CONTENT_LENGTH, String.valueOf(full.length))
                        .send(Mono.just(half), buf -> true))
                .then(closeConnection(response, false));
    }

    private Map<String, Object> completionBody(Plan plan, List<SimulatedModel.Token> tokens, boolean aborted) {
        InferenceRequest request = plan.request();
        String text =
                String.join("", tokens.stream().map(SimulatedModel.Token::text).toList());
        String finish = aborted ? "abort" : finishReason(plan, tokens);
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        if (request.chat()) {
            Map<String, Object> message = new LinkedHashMap<>();
            message.put("role", "assistant");
            message.put("content", text);
            message.put("reasoning_content", null);
            message.put("tool_calls", List.of());
            choice.put("message", message);
            choice.put("logprobs", request.logprobs() == null ? null : chatLogprobs(tokens));
        } else {
            choice.put("text", text);
            choice.put("logprobs", request.logprobs() == null ? null : completionLogprobs(tokens, 0));
        }
        choice.put("finish_reason", finish);
        choice.put("stop_reason", null);
        if (request.returnTokenIds()) {
            choice.put(
                    "token_ids", tokens.stream().map(SimulatedModel.Token::id).toList());
            choice.put("prompt_token_ids", plan.prompt());
        }
        Map<String, Object> body = envelope(plan, request.chat() ? "chat.completion" : "text_completion");
        body.put("choices", List.of(choice));
        body.put("service_tier", null);
        body.put("system_fingerprint", null);
        body.put("usage", usage(plan, tokens.size()));
        body.put("kv_transfer_params", null);
        return body;
    }

    private static String finishReason(Plan plan, List<SimulatedModel.Token> tokens) {
        boolean stopped = !tokens.isEmpty() && tokens.getLast().id() == SimulatedTokenizer.EOS;
        return stopped ? "stop" : "length";
    }

    private Map<String, Object> envelope(Plan plan, String object) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", plan.id());
        body.put("object", object);
        body.put("created", plan.created());
        body.put("model", properties.model().servedModelName());
        return body;
    }

    private static Map<String, Object> usage(Plan plan, int completionTokens) {
        Map<String, Object> usage = new LinkedHashMap<>();
        usage.put("prompt_tokens", plan.prompt().size());
        usage.put("total_tokens", plan.prompt().size() + completionTokens);
        usage.put("completion_tokens", completionTokens);
        usage.put("prompt_tokens_details", null);
        return usage;
    }

    private Map<String, Object> completionLogprobs(List<SimulatedModel.Token> tokens, int offsetStart) {
        List<Integer> offsets = new ArrayList<>();
        List<Double> logprobs = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        List<Map<String, Double>> top = new ArrayList<>();
        int offset = offsetStart;
        for (SimulatedModel.Token token : tokens) {
            offsets.add(offset);
            offset += token.text().length();
            logprobs.add(token.logprob());
            String tokenText = model.tokenizer().tokenText(token.id());
            texts.add(tokenText);
            Map<String, Double> entry = new LinkedHashMap<>();
            entry.put(tokenText, token.logprob());
            token.alternatives().forEach(alternative -> entry.put(alternative.text(), alternative.logprob()));
            top.add(entry);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("text_offset", offsets);
        out.put("token_logprobs", logprobs);
        out.put("tokens", texts);
        out.put("top_logprobs", top);
        return out;
    }

    private Map<String, Object> chatLogprobs(List<SimulatedModel.Token> tokens) {
        List<Map<String, Object>> content = new ArrayList<>();
        for (SimulatedModel.Token token : tokens) {
            String tokenText = model.tokenizer().tokenText(token.id());
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("token", tokenText);
            entry.put("logprob", token.logprob());
            entry.put("bytes", bytes(tokenText));
            entry.put(
                    "top_logprobs",
                    token.alternatives().stream()
                            .map(a -> Map.<String, Object>of(
                                    "token", a.text(), "logprob", a.logprob(), "bytes", bytes(a.text())))
                            .toList());
            content.add(entry);
        }
        return Map.of("content", content);
    }

    private static List<Integer> bytes(String text) {
        byte[] raw = text.getBytes(StandardCharsets.UTF_8);
        List<Integer> out = new ArrayList<>(raw.length);
        for (byte b : raw) {
            out.add(b & 0xff);
        }
        return out;
    }

    private Publisher<Void> stream(HttpServerResponse response, Plan plan) {
        InferenceRequest request = plan.request();
        int[] index = {0};
        int[] textOffset = {0};
        List<SimulatedModel.Token> all = new ArrayList<>();
        Flux<String> chunks = generate(plan)
                .map(token -> {
                    if (token == ABORTED) {
                        return event(json.writeValueAsString(abortedChunk(plan)));
                    }
                    all.add(token);
                    String chunk = chunk(plan, token, index[0]++, textOffset[0], all);
                    textOffset[0] += token.text().length();
                    return chunk;
                })
                .onErrorResume(
                        EngineError.class,
                        error -> Flux.just(event(json.writeValueAsString(error.body(properties.errorShape())))));
        if (request.chat()) {
            chunks = Flux.concat(Mono.fromSupplier(() -> event(json.writeValueAsString(chatRoleChunk(plan)))), chunks);
        }
        Flux<String> tail = Flux.defer(() -> request.includeUsage()
                ? Flux.just(event(json.writeValueAsString(usageChunk(plan, all.size()))))
                : Flux.empty());
        Flux<String> events = chunks.concatWith(tail).concatWith(Mono.just("data: [DONE]\n\n"));
        if (faults.has(Fault.MALFORMED_JSON)) {
            events = events.index()
                    .map(indexed -> indexed.getT1() == 0
                            ? "data: {\"id\": \"" + plan.id() + "\", \"choices\": [{\"text\": \n\n"
                            : indexed.getT2());
        }
        HttpServerResponse headers = response.header(HttpHeaderNames.CONTENT_TYPE, SSE);
        if (faults.has(Fault.TRUNCATED_SSE)) {
            Flux<String> cut = events.take(2).concatWith(Mono.just("data: {\"id\":\"" + plan.id() + "\",\"ch"));
            return Mono.from(headers.send(cut.map(EngineApi::buffer), buf -> true))
                    .then(closeConnection(response, false));
        }
        return headers.send(events.map(EngineApi::buffer), buf -> true);
    }

    /** The last chunk of a request a sleep aborted: no new text, {@code finish_reason} {@code abort}. */
    private Map<String, Object> abortedChunk(Plan plan) {
        boolean chat = plan.request().chat();
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        if (chat) {
            choice.put("delta", Map.of("content", ""));
        } else {
            choice.put("text", "");
        }
        choice.put("logprobs", null);
        choice.put("finish_reason", "abort");
        choice.put("stop_reason", null);
        Map<String, Object> body = envelope(plan, chat ? "chat.completion.chunk" : "text_completion");
        body.put("choices", List.of(choice));
        body.put("usage", null);
        return body;
    }

    private Map<String, Object> chatRoleChunk(Plan plan) {
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        choice.put("delta", Map.of("role", "assistant", "content", ""));
        choice.put("logprobs", null);
        choice.put("finish_reason", null);
        Map<String, Object> body = envelope(plan, "chat.completion.chunk");
        body.put("choices", List.of(choice));
        return body;
    }

    private String chunk(
            Plan plan, SimulatedModel.Token token, int index, int textOffset, List<SimulatedModel.Token> all) {
        InferenceRequest request = plan.request();
        boolean last = all.size() == plan.maxTokens() || token.id() == SimulatedTokenizer.EOS;
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        if (request.chat()) {
            choice.put("delta", Map.of("content", token.text()));
            choice.put("logprobs", request.logprobs() == null ? null : chatLogprobs(List.of(token)));
        } else {
            choice.put("text", token.text());
            choice.put("logprobs", request.logprobs() == null ? null : completionLogprobs(List.of(token), textOffset));
        }
        choice.put("finish_reason", last ? finishReason(plan, all) : null);
        choice.put("stop_reason", null);
        if (request.returnTokenIds()) {
            if (index == 0) {
                choice.put("prompt_token_ids", plan.prompt());
            }
            choice.put("token_ids", List.of(token.id()));
        }
        Map<String, Object> body = envelope(plan, request.chat() ? "chat.completion.chunk" : "text_completion");
        body.put("choices", List.of(choice));
        body.put("usage", request.continuousUsage() ? usage(plan, all.size()) : null);
        return event(json.writeValueAsString(body));
    }

    private Map<String, Object> usageChunk(Plan plan, int completionTokens) {
        Map<String, Object> body = envelope(plan, plan.request().chat() ? "chat.completion.chunk" : "text_completion");
        body.put("choices", List.of());
        Map<String, Object> usage = usage(plan, completionTokens);
        if (properties.deployment().formats() == SimulatorProperties.Deployment.Formats.V0_31) {
            // vLLM 0.31's final usage chunk leaves out what is unset.
            usage.remove("prompt_tokens_details");
        }
        body.put("usage", usage);
        return body;
    }

    private static String event(String data) {
        return "data: " + data + "\n\n";
    }

    /**
     * A direct buffer, written as is: a heap buffer would be copied into a pooled direct one on the event loop, whose
     * allocator may take a lock (BlockHound reports it).
     */
    private static ByteBuf buffer(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return Unpooled.directBuffer(bytes.length).writeBytes(bytes);
    }

    private Publisher<Void> sendJson(HttpServerResponse response, Object body) {
        return response.header(HttpHeaderNames.CONTENT_TYPE, JSON)
                .sendString(Mono.fromSupplier(() -> json.writeValueAsString(body)));
    }

    private Publisher<Void> sendError(HttpServerResponse response, EngineError error) {
        return response.status(error.status())
                .header(HttpHeaderNames.CONTENT_TYPE, JSON)
                .sendString(Mono.fromSupplier(() -> json.writeValueAsString(error.body(properties.errorShape()))));
    }

    /** Resets the connection: SO_LINGER 0 then close sends a TCP RST instead of a FIN. */
    private Publisher<Void> reset(HttpServerResponse response) {
        return closeConnection(response, true);
    }

    private static Mono<Void> closeConnection(HttpServerResponse response, boolean reset) {
        return Mono.<Void>fromRunnable(() -> response.withConnection(connection -> {
                    Channel channel = connection.channel();
                    if (reset) {
                        channel.config().setOption(ChannelOption.SO_LINGER, 0);
                    }
                    channel.close();
                }))
                .then(Mono.never());
    }

    /** A request id like vLLM's; not {@code UUID.randomUUID()}, whose SecureRandom may block an event loop. */
    private static String randomHex() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return "%016x%016x".formatted(random.nextLong(), random.nextLong());
    }

    private static String hex(UUID uuid) {
        return uuid.toString().replace("-", "");
    }
}
