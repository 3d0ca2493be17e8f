package dev.readygate.engine;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A streamed {@code /v1/completions} request readygate sends as a probe. Sent with {@code stream: true} and
 * {@code stream_options.include_usage: true}.
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
        boolean returnTokenIds) {

    public CompletionRequest {
        if ((promptText == null) == (promptTokenIds == null)) {
            throw new IllegalArgumentException("exactly one of promptText and promptTokenIds must be set");
        }
        promptTokenIds = promptTokenIds == null ? null : List.copyOf(promptTokenIds);
    }

    /** Never shows the prompt: readygate does not log prompts. */
    @Override
    public String toString() {
        return "CompletionRequest[model=" + model + ", prompt=<" + (promptText != null ? "text" : "token ids")
                + ">, maxTokens=" + maxTokens + ", minTokens=" + minTokens + ", ignoreEos=" + ignoreEos
                + ", temperature=" + temperature + ", seed=" + seed + ", logprobs=" + logprobs + "]";
    }
}
