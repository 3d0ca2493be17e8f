package dev.readygate.engine;

import org.jspecify.annotations.Nullable;

/**
 * The first entry of {@code /v1/models}: the served model.
 *
 * @param id the served model name, as requests must name it
 * @param root the model path or hub id ({@code args.model}), when the server reports it
 * @param maxModelLen the effective {@code max_model_len}, when known: vLLM reports it here; for other servers readygate
 *     fills it in from what the engine says elsewhere or from {@code readygate.engine.max-model-len}
 * @param ownedBy {@code owned_by}, which names the engine ({@code vllm}, {@code llamacpp}, {@code sglang}), or null
 */
public record ModelCard(
        String id,
        @Nullable String root,
        @Nullable Integer maxModelLen,
        @Nullable String ownedBy) {

    /** A card that names no owner. */
    public ModelCard(String id, @Nullable String root, @Nullable Integer maxModelLen) {
        this(id, root, maxModelLen, null);
    }

    /** The same card with the context length learned elsewhere. */
    public ModelCard withMaxModelLen(@Nullable Integer value) {
        return new ModelCard(id, root, value, ownedBy);
    }
}
