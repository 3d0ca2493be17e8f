package dev.readygate.engine;

import org.jspecify.annotations.Nullable;

/**
 * What {@code /tokenize} says of a prompt.
 *
 * @param count the number of prompt tokens
 * @param maxModelLen the engine's {@code max_model_len}, when reported
 */
public record TokenCount(int count, @Nullable Integer maxModelLen) {}
