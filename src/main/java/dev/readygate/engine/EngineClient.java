package dev.readygate.engine;

import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * Calls the engine. Every method returns a {@link Mono} that emits exactly one {@link EngineCall} and never errors:
 * refused, reset, timed-out, HTTP-status, malformed and truncated answers are {@link EngineCall.Failure}s. The optional
 * endpoints answer {@code NOT_SUPPORTED} on servers without them; a 503 that says the model is loading is
 * {@code LOADING}.
 */
public interface EngineClient {

    /** {@code GET /health}: success on 200 (body ignored). */
    Mono<EngineCall<Void>> health();

    /** {@code GET /v1/models}: the first model card. */
    Mono<EngineCall<ModelCard>> model();

    /** {@code GET /version}: vLLM's version string. */
    Mono<EngineCall<String>> version();

    /** {@code POST /tokenize} with a text, in {@code dialect}'s request shape; any server's answer shape is read. */
    Mono<EngineCall<TokenCount>> tokenize(EngineDialect dialect, String model, String text);

    /** {@code POST /detokenize} with token ids, in {@code dialect}'s request shape: the text. */
    Mono<EngineCall<String>> detokenize(EngineDialect dialect, String model, List<Integer> tokens);

    /**
     * {@code dialect}'s server-information endpoint (llama.cpp {@code /props}, TGI {@code /info}, SGLang
     * {@code /get_server_info}); {@code NOT_SUPPORTED} without a request for dialects that have none.
     */
    Mono<EngineCall<ServerInfo>> serverInfo(EngineDialect dialect);

    /**
     * llama-server's {@code GET /slots}: which slots a request holds, and how far each one got; {@code NOT_SUPPORTED}
     * where it is off ({@code --no-slots}, or older servers without {@code --slots}) and on other engines.
     */
    default Mono<EngineCall<SlotsSample>> slots() {
        return Mono.just(new EngineCall.Failure<>(
                new EngineFailure(EngineFailure.Kind.NOT_SUPPORTED, null, "GET /slots: not asked of this engine"),
                java.time.Duration.ZERO));
    }

    /** {@code GET /metrics}, parsed. */
    Mono<EngineCall<EngineMetricsSample>> metrics();

    /**
     * A streamed {@code POST /v1/completions}, parsed event by event. {@code timeout} bounds the whole call; a
     * stream that sends nothing for longer than {@code timeout} is {@code TIMED_OUT}, one that started and then stops
     * sending is {@code STALLED}.
     */
    Mono<EngineCall<StreamedCompletion>> streamCompletion(CompletionRequest request, Duration timeout);

    /**
     * Completes when readygate's idle connection to the engine's port closes, or could not be opened: a sign that the
     * engine process may have exited, never proof (servers close idle connections too), so the caller checks
     * {@code /health}. Holds one connection at a time, with a back-off when the engine keeps closing it at once. A
     * client that holds none never completes.
     */
    default Mono<Void> connectionClosed() {
        return Mono.never();
    }
}
