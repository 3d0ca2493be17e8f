package dev.readygate.probe;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A canary answer: token ids, text and the first token's logprob; each may be absent from an expectation.
 *
 * @param tokenIds the generated token ids (empty: not known)
 * @param text the generated text (null: not known)
 * @param logprob the first token's sampled logprob (null: not known)
 */
public record CanaryAnswer(
        List<Integer> tokenIds,
        @Nullable String text,
        @Nullable Double logprob) {

    public CanaryAnswer {
        tokenIds = List.copyOf(tokenIds);
    }

    /** Short, for logs and {@code /status}: {@code [12095] " Paris" (-0.4243)}. */
    public String describe() {
        StringBuilder out = new StringBuilder();
        if (!tokenIds.isEmpty()) {
            out.append(tokenIds);
        }
        if (text != null) {
            out.append(out.isEmpty() ? "" : " ")
                    .append('"')
                    .append(text.replace("\n", "\\n"))
                    .append('"');
        }
        if (logprob != null) {
            out.append(out.isEmpty() ? "" : " ").append(String.format(java.util.Locale.ROOT, "(%.4f)", logprob));
        }
        return out.isEmpty() ? "(nothing)" : out.toString();
    }
}
