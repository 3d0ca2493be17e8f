package dev.readygate.probe;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a learned canary baseline is valid for: the same served model, model root, model identity (what the engine
 * reports of the loaded model beyond its name: llama.cpp's vocabulary, parameter count and size), {@code max_model_len},
 * vLLM version, GPU and canary request. Any difference means the baseline does not apply: another model at the same
 * path with another identity learns its own baseline, while other weights with the same identity are compared with it.
 */
record BaselineKey(
        String model,
        String root,
        int maxModelLen,
        String vllmVersion,
        String gpuName,
        String canaryRequest,
        @Nullable String identity) {

    BaselineKey(String model, String root, int maxModelLen, String vllmVersion, String gpuName, String canaryRequest) {
        this(model, root, maxModelLen, vllmVersion, gpuName, canaryRequest, null);
    }

    /**
     * The key as one string, the store's map key. Without an identity it is the key of the versions before identities
     * (a vLLM baseline learned then still applies).
     */
    public String value() {
        List<String> parts =
                new ArrayList<>(List.of(model, root, String.valueOf(maxModelLen), vllmVersion, gpuName, canaryRequest));
        if (identity != null) {
            parts.add(identity);
        }
        return String.join("|", parts);
    }
}
