package dev.readygate.engine;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What {@code /tokenize} says of a prompt.
 *
 * @param count the number of prompt tokens
 * @param maxModelLen the engine's {@code max_model_len}, when reported
 * @param tokens the token ids (vLLM returns them; empty when a server does not)
 */
public record TokenCount(int count, @Nullable Integer maxModelLen, List<Integer> tokens) {

    public TokenCount {
        tokens = List.copyOf(tokens);
    }
}
