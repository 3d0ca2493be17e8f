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
 * @param identity what the engine says of the loaded model beyond its name, or null when it says nothing: llama.cpp's
 *     {@code meta} ({@code vocab_type}, {@code n_vocab}, {@code n_ctx_train}, {@code n_embd}, {@code n_params},
 *     {@code size}), e.g. {@code n_vocab=32000,n_params=8421376,...}; another model at the same path changes it, other
 *     weights of the same shape do not
 */
public record ModelCard(
        String id,
        @Nullable String root,
        @Nullable Integer maxModelLen,
        @Nullable String ownedBy,
        @Nullable String identity) {

    /** A card that names no owner. */
    public ModelCard(String id, @Nullable String root, @Nullable Integer maxModelLen) {
        this(id, root, maxModelLen, null, null);
    }

    /** A card whose engine says nothing of the model beyond its name. */
    public ModelCard(String id, @Nullable String root, @Nullable Integer maxModelLen, @Nullable String ownedBy) {
        this(id, root, maxModelLen, ownedBy, null);
    }

    /** The same card with the context length learned elsewhere. */
    public ModelCard withMaxModelLen(@Nullable Integer value) {
        return new ModelCard(id, root, value, ownedBy, identity);
    }

    /**
     * Whether {@code other} names the same model as far as the engine tells: the same served name, root and identity.
     * A different one served after a restart is a model swap, not a repeat of the same start.
     */
    public boolean sameModel(ModelCard other) {
        return id.equals(other.id)
                && java.util.Objects.equals(root, other.root)
                && java.util.Objects.equals(identity, other.identity);
    }
}
