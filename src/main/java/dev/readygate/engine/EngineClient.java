package dev.readygate.engine;

import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * Calls the engine. Every method returns a {@link Mono} that emits exactly one {@link EngineCall} and never errors:
 * refused, reset, timed-out, HTTP-status, malformed and truncated answers are {@link EngineCall.Failure}s.
 */
public interface EngineClient {

    /** {@code GET /health}: success on 200 (body ignored). */
    Mono<EngineCall<Void>> health();

    /** {@code GET /v1/models}: the first model card. */
    Mono<EngineCall<ModelCard>> model();

    /** {@code GET /version}: vLLM's version string. {@code NOT_SUPPORTED} on servers without it. */
    Mono<EngineCall<String>> version();

    /** {@code POST /tokenize} with a text prompt. {@code NOT_SUPPORTED} on servers without it. */
    Mono<EngineCall<TokenCount>> tokenize(String model, String prompt);

    /** {@code GET /metrics}, parsed. {@code NOT_SUPPORTED} on servers without it. */
    Mono<EngineCall<EngineMetricsSample>> metrics();

    /**
     * A streamed {@code POST /v1/completions}, parsed event by event. {@code timeout} bounds the whole call; a
     * stream that sends nothing for longer than {@code timeout} is {@code TIMED_OUT}, one that started and then stops
     * sending is {@code STALLED}.
     */
    Mono<EngineCall<StreamedCompletion>> streamCompletion(CompletionRequest request, Duration timeout);
}
