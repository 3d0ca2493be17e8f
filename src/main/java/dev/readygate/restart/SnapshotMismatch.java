package dev.readygate.restart;

import dev.readygate.evidence.SnapshotManifest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot manifest's identity field that differs from the engine and node a start runs on: a restore there is not
 * what vLLM validated, so the manifest is named and not trusted (its oracle does not vouch, and the start does not
 * teach a baseline).
 *
 * @param field the field, as the manifest names it
 * @param manifest the manifest's value
 * @param current the value of the engine or node now
 */
public record SnapshotMismatch(Field field, String manifest, String current) {

    /** The identity fields readygate can check: the GPU, the driver and vLLM's version. */
    public enum Field {
        GPU_UUID,
        DRIVER_VERSION,
        VLLM_VERSION;

        /** The manifest's name of the field, also the label value in metrics: {@code gpu_uuid}, ... */
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The field of a value, or null for one this version does not know. */
        public static @Nullable Field of(String value) {
            for (Field field : values()) {
                if (field.value().equals(value)) {
                    return field;
                }
            }
            return null;
        }
    }

    /** The mismatch in words: {@code gpu_uuid: the snapshot was taken on GPU-a, this engine runs on GPU-b}. */
    public String describe() {
        return field.value() + ": the snapshot was taken on " + manifest + ", this engine runs on " + current;
    }

    /**
     * The manifest's fields that differ from the node's facts ({@link NodeFacts}) and the engine's vLLM version, a pure
     * decision; a field that either side does not know is not a mismatch. The engine's GPU is a list when it has
     * several: the manifest's (a TP1 snapshot's one GPU) must be it.
     */
    public static List<SnapshotMismatch> of(
            SnapshotManifest manifest, Map<String, String> node, @Nullable String vllmVersion) {
        List<SnapshotMismatch> mismatches = new ArrayList<>();
        compare(mismatches, Field.GPU_UUID, manifest.gpuUuid(), node.get(NodeFacts.GPU_UUID));
        compare(mismatches, Field.DRIVER_VERSION, manifest.driverVersion(), node.get(NodeFacts.DRIVER_VERSION));
        compare(mismatches, Field.VLLM_VERSION, manifest.vllmVersion(), vllmVersion);
        return List.copyOf(mismatches);
    }

    private static void compare(
            List<SnapshotMismatch> mismatches, Field field, @Nullable String manifest, @Nullable String current) {
        if (manifest == null || current == null || manifest.isBlank() || current.isBlank()) {
            return;
        }
        if (!manifest.strip().equals(current.strip()) && !"unknown".equals(current)) {
            mismatches.add(new SnapshotMismatch(field, manifest.strip(), current.strip()));
        }
    }
}
