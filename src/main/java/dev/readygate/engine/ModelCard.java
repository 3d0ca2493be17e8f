package dev.readygate.engine;

import org.jspecify.annotations.Nullable;

/**
 * The first entry of {@code /v1/models}: the served model.
 *
 * @param id the served model name, as requests must name it
 * @param root the model path or hub id ({@code args.model}), when the server reports it
 * @param maxModelLen the effective {@code max_model_len}, when the server reports it (vLLM does; other
 *     OpenAI-compatible servers may not)
 */
public record ModelCard(
        String id, @Nullable String root, @Nullable Integer maxModelLen) {}
