package dev.readygate.evidence;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a CRIU snapshot's {@code manifest.json} says about the engine it captured: the identity vLLM's restore checks
 * exactly ({@code vllm_version}, {@code gpu_uuid}, {@code driver_version}, ...), and what the engine served
 * ({@code model_revision}, {@code engine_argv}). Each field is null (or empty) when the manifest does not give it.
 *
 * @param createdAt {@code created_at}
 * @param model {@code model}
 * @param modelRevision {@code model_revision}
 * @param engineArgv {@code engine_argv}
 * @param vllmVersion {@code vllm_version}
 * @param gpuUuid {@code gpu_uuid}
 * @param gpuName {@code gpu_name}
 * @param driverVersion {@code driver_version}
 * @param cudaRuntime {@code cuda_runtime}
 * @param hostId {@code host_id} ({@code /etc/machine-id} of the node it was taken on)
 */
public record SnapshotManifest(
        @Nullable String createdAt,
        @Nullable String model,
        @Nullable String modelRevision,
        List<String> engineArgv,
        @Nullable String vllmVersion,
        @Nullable String gpuUuid,
        @Nullable String gpuName,
        @Nullable String driverVersion,
        @Nullable String cudaRuntime,
        @Nullable String hostId) {

    public SnapshotManifest {
        engineArgv = List.copyOf(engineArgv);
    }
}
