package dev.readygate.restart;

import java.util.ArrayList;
import java.util.List;

/**
 * What vLLM 0.31's initialized-engine snapshots cannot restore: an engine wider than one GPU. A snapshot captures a
 * fully initialized TP1 engine (tensor, pipeline and data parallel sizes 1) and nothing wider, so snapshot evidence
 * configured for such an engine names an unsupported configuration; the chart's schema refuses it outright.
 */
public final class SnapshotScope {

    /** The parallel sizes a snapshot requires to be 1, as vLLM's arguments name them. */
    static final List<String> SIZES = List.of("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size");

    private SnapshotScope() {}

    /**
     * Why the engine's configuration cannot be restored from a snapshot, one line per parallel size above 1; empty
     * when it can, or when no snapshot evidence is configured.
     */
    public static List<String> unsupported(EngineArguments arguments, boolean snapshotConfigured) {
        if (!snapshotConfigured) {
            return List.of();
        }
        List<String> unsupported = new ArrayList<>();
        for (String size : SIZES) {
            int value = arguments.size(size);
            if (value > 1) {
                unsupported.add(size + " is " + value + ": vLLM's snapshots restore one GPU (TP1) engines only,"
                        + " so readygate.evidence.snapshot-dir cannot describe this engine's starts");
            }
        }
        return List.copyOf(unsupported);
    }
}
