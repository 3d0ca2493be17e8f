package dev.readygate.probe;

import java.util.List;

/**
 * What a learned canary baseline is valid for: the same served model, model root, {@code max_model_len}, vLLM
 * version, GPU and canary request. Any difference means the baseline does not apply.
 */
record BaselineKey(
        String model, String root, int maxModelLen, String vllmVersion, String gpuName, String canaryRequest) {

    /** The key as one string, the store's map key. */
    public String value() {
        return String.join("|", List.of(model, root, String.valueOf(maxModelLen), vllmVersion, gpuName, canaryRequest));
    }
}
