package dev.readygate.engine;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A streamed {@code /v1/completions} request readygate sends as a probe, or the same through
 * {@code /v1/chat/completions} (the prompt text as one user message) on a server that offers only chat completions.
 * Sent with {@code stream: true} and {@code stream_options.include_usage: true}.
 *
 * @param model the served model name
 * @param promptText the prompt as text, or null when {@code promptTokenIds} is used
 * @param promptTokenIds the prompt as token ids, or null when {@code promptText} is used
 * @param maxTokens {@code max_tokens}
 * @param minTokens {@code min_tokens}
 * @param ignoreEos {@code ignore_eos}
 * @param temperature {@code temperature}
 * @param seed {@code seed}, or null for none
 * @param logprobs {@code logprobs}, or null for none
 * @param returnTokenIds {@code return_token_ids}
 * @param chat whether it goes to {@code /v1/chat/completions} (a text prompt only: token ids cannot be sent there)
 */
public record CompletionRequest(
        String model,
        @Nullable String promptText,
        @Nullable List<Integer> promptTokenIds,
        int maxTokens,
        int minTokens,
        boolean ignoreEos,
        double temperature,
        @Nullable Long seed,
        @Nullable Integer logprobs,
        boolean returnTokenIds,
        boolean chat) {

    public CompletionRequest {
        if ((promptText == null) == (promptTokenIds == null)) {
            throw new IllegalArgumentException("exactly one of promptText and promptTokenIds must be set");
        }
        if (chat && promptText == null) {
            throw new IllegalArgumentException("a chat completion's prompt is text");
        }
        promptTokenIds = promptTokenIds == null ? null : List.copyOf(promptTokenIds);
    }

    /** A {@code /v1/completions} request. */
    public CompletionRequest(
            String model,
            @Nullable String promptText,
            @Nullable List<Integer> promptTokenIds,
            int maxTokens,
            int minTokens,
            boolean ignoreEos,
            double temperature,
            @Nullable Long seed,
            @Nullable Integer logprobs,
            boolean returnTokenIds) {
        this(
                model,
                promptText,
                promptTokenIds,
                maxTokens,
                minTokens,
                ignoreEos,
                temperature,
                seed,
                logprobs,
                returnTokenIds,
                false);
    }

    /** The same request through {@code /v1/chat/completions}. */
    public CompletionRequest asChat() {
        return new CompletionRequest(
                model,
                promptText,
                promptTokenIds,
                maxTokens,
                minTokens,
                ignoreEos,
                temperature,
                seed,
                logprobs,
                returnTokenIds,
                true);
    }

    /** Never shows the prompt: readygate does not log prompts. */
    @Override
    public String toString() {
        return "CompletionRequest[model=" + model + ", prompt=<" + (promptText != null ? "text" : "token ids")
                + ">, maxTokens=" + maxTokens + ", minTokens=" + minTokens + ", ignoreEos=" + ignoreEos
                + ", temperature=" + temperature + ", seed=" + seed + ", logprobs=" + logprobs + (chat ? ", chat" : "")
                + "]";
    }
}
