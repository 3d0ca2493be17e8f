package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.evidence.SnapshotManifest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A snapshot manifest's identity against the engine and node, and the configurations snapshots cannot restore. */
class SnapshotMismatchTests {

    static final SnapshotManifest MANIFEST = new SnapshotManifest(
            "2026-11-30T11:00:00Z",
            "Qwen/Qwen3-0.6B",
            "c1899de289a04d12100db370d81485cdf75e47ca",
            List.of("vllm", "serve", "Qwen/Qwen3-0.6B"),
            "0.31.0",
            "GPU-4f5b61fa",
            "NVIDIA H200",
            "580.159.04",
            "12.9",
            "3f1c2b9a");

    static final Map<String, String> SAME = Map.of("gpu_uuid", "GPU-4f5b61fa", "driver_version", "580.159.04");

    @Test
    void ofWhenEverythingMatchesIsEmpty() {
        assertThat(SnapshotMismatch.of(MANIFEST, SAME, "0.31.0")).isEmpty();
    }

    @Test
    void ofNamesEachFieldThatDiffersWithBothValues() {
        List<SnapshotMismatch> mismatches =
                SnapshotMismatch.of(MANIFEST, Map.of("gpu_uuid", "GPU-9e0c", "driver_version", "580.172.08"), "0.32.0");

        assertThat(mismatches)
                .containsExactly(
                        new SnapshotMismatch(SnapshotMismatch.Field.GPU_UUID, "GPU-4f5b61fa", "GPU-9e0c"),
                        new SnapshotMismatch(SnapshotMismatch.Field.DRIVER_VERSION, "580.159.04", "580.172.08"),
                        new SnapshotMismatch(SnapshotMismatch.Field.VLLM_VERSION, "0.31.0", "0.32.0"));
        assertThat(mismatches.getFirst().describe())
                .isEqualTo("gpu_uuid: the snapshot was taken on GPU-4f5b61fa, this engine runs on GPU-9e0c");
    }

    @Test
    void ofWhenASideDoesNotKnowAFieldIsNoMismatch() {
        assertThat(SnapshotMismatch.of(MANIFEST, Map.of(), "unknown")).isEmpty();
        assertThat(SnapshotMismatch.of(MANIFEST, Map.of(), null)).isEmpty();
        SnapshotManifest bare = new SnapshotManifest(null, null, null, List.of(), null, null, null, null, null, null);
        assertThat(SnapshotMismatch.of(bare, SAME, "0.31.0")).isEmpty();
    }

    @Test
    void unsupportedNamesEveryParallelSizeAboveOneWhenSnapshotEvidenceIsConfigured() {
        EngineArguments wide =
                EngineArguments.parse("{'model': 'm', 'tensor_parallel_size': 2, 'data_parallel_size': 4}");

        assertThat(SnapshotScope.unsupported(wide, true))
                .containsExactly(
                        "tensor_parallel_size is 2: vLLM's snapshots restore one GPU (TP1) engines only, so"
                                + " readygate.evidence.snapshot-dir cannot describe this engine's starts",
                        "data_parallel_size is 4: vLLM's snapshots restore one GPU (TP1) engines only, so"
                                + " readygate.evidence.snapshot-dir cannot describe this engine's starts");
        assertThat(SnapshotScope.unsupported(wide, false)).isEmpty();
        assertThat(SnapshotScope.unsupported(EngineArguments.parse("{'tensor_parallel_size': 1}"), true))
                .isEmpty();
    }
}
