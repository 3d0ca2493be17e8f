package dev.readygate.engine;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What an engine's own error message means, where engines say the same thing in their own words: a model still
 * loading, a request longer than the context, a route that does not exist. Pure; the phrases are each engine's, quoted
 * in docs/engines.md.
 */
public final class EngineMessages {

    /** llama.cpp's 503 during loading is {@code Loading model}; SGLang and TGI write similar words. */
    private static final Pattern LOADING = Pattern.compile("\\bloading\\b", Pattern.CASE_INSENSITIVE);

    /** Each engine's words for a prompt plus output longer than the context. */
    private static final List<String> CONTEXT_PHRASES = List.of(
            // vLLM: "This model's maximum context length is 131072 tokens. However, you requested ..."
            "maximum context length",
            // llama.cpp: "the request exceeds the available context size. try increasing the context size or ..."
            "exceeds the available context size",
            // llama.cpp (non-causal models): "input is larger than the max context size. skipping"
            "larger than the max context size",
            // SGLang: "The input (N tokens) is longer than the model's context length (M tokens)."
            "longer than the model's context length",
            // TGI: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: ..."
            "`max_new_tokens` must be <=",
            // TGI: "Input validation error: `inputs` must have less than 1024 tokens. Given: 1500"
            "`inputs` must have less than");

    private EngineMessages() {}

    /** Whether a 503's message says the model is still loading (not a dead engine). */
    public static boolean loading(int status, String message) {
        return status == 503 && LOADING.matcher(message).find();
    }

    /** Whether the message says the request does not fit the engine's context. */
    public static boolean contextLength(String message) {
        String lower = message.toLowerCase(Locale.ROOT);
        return CONTEXT_PHRASES.stream().anyMatch(phrase -> lower.contains(phrase.toLowerCase(Locale.ROOT)));
    }

    /**
     * Whether an answer to an optional endpoint says the server does not have it: 405, 501 (llama.cpp's
     * {@code not_supported_error}, e.g. {@code /metrics} without {@code --metrics}), or a 404 that names no model
     * (FastAPI's {@code Not Found}, llama.cpp's {@code File Not Found}; vLLM's 404 for an unknown model is an answer).
     */
    static boolean routeMissing(int status, String message) {
        return status == 405
                || status == 501
                || (status == 404 && !message.toLowerCase(Locale.ROOT).contains("model"));
    }
}
