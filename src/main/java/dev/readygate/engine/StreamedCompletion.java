package dev.readygate.engine;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a streamed completion delivered, parsed incrementally, with its timing. The client records what it saw;
 * whether that is a pass is the probe's decision.
 *
 * @param textChunks how many events carried a choice
 * @param text the completion text (kept in memory for the canary; never logged or shown)
 * @param tokenIds the generated token ids, when {@code return_token_ids} was asked and the server returned them
 * @param tokenLogprobs the sampled tokens' logprobs, when {@code logprobs} was asked
 * @param finishReason the last non-null {@code finish_reason}, or null
 * @param promptTokens {@code usage.prompt_tokens} of the final usage chunk, or null when there was none
 * @param completionTokens {@code usage.completion_tokens} of the final usage chunk, or null
 * @param errorEvent the message of an error event in the stream (vLLM sends {@code data: {"error": ...}}), or null
 * @param timeToFirstToken from sending the request to the first event carrying text or token ids
 * @param maxInterTokenLatency the largest gap between consecutive token-carrying events
 * @param meanInterTokenLatency the mean of those gaps (zero with fewer than two such events)
 * @param total from sending the request to {@code [DONE]}
 */
public record StreamedCompletion(
        int textChunks,
        String text,
        List<Integer> tokenIds,
        List<Double> tokenLogprobs,
        @Nullable String finishReason,
        @Nullable Integer promptTokens,
        @Nullable Integer completionTokens,
        @Nullable String errorEvent,
        Duration timeToFirstToken,
        Duration maxInterTokenLatency,
        Duration meanInterTokenLatency,
        Duration total) {

    public StreamedCompletion {
        tokenIds = List.copyOf(tokenIds);
        tokenLogprobs = List.copyOf(tokenLogprobs);
    }

    /** Never shows the completion text. */
    @Override
    public String toString() {
        return "StreamedCompletion[chunks=" + textChunks + ", tokens=" + tokenIds.size() + ", finishReason="
                + finishReason + ", promptTokens=" + promptTokens + ", completionTokens=" + completionTokens
                + ", error=" + (errorEvent != null) + ", ttft=" + timeToFirstToken + ", total=" + total + "]";
    }
}
