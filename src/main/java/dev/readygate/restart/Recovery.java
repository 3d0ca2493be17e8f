package dev.readygate.restart;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What an engine start recovered from: its {@link RecoveryKind} and every fact that differs from the start before it,
 * in words ({@code driver_version 580.159.04 → 580.172.08}).
 *
 * @param kind the kind
 * @param changes what changed since the start before, or why the kind is unknown
 */
public record Recovery(RecoveryKind kind, List<String> changes) {

    /** Nothing known (records written before readygate recorded recovery kinds read as this). */
    public static final Recovery UNKNOWN = new Recovery(RecoveryKind.UNKNOWN, List.of());

    public Recovery {
        changes = List.copyOf(changes);
    }

    /** How one fact compares between two starts. */
    private enum Fact {
        SAME,
        CHANGED,
        NOT_KNOWN
    }

    /**
     * The recovery of a start from its facts and those of the start before it ({@link NodeFacts}), a pure decision.
     * The widest change wins: another node; on the same node a changed driver or CUDA, then another GPU, then a new
     * boot; then a new pod, a new container, and the same container. A fact known on one side only says nothing.
     *
     * @param previous the facts of the start before, null when none was recorded
     * @param current this start's facts
     */
    public static Recovery decide(@Nullable Map<String, String> previous, Map<String, String> current) {
        if (previous == null) {
            return new Recovery(RecoveryKind.UNKNOWN, List.of("no earlier start recorded to compare with"));
        }
        List<String> changes = new ArrayList<>();
        for (String name : NodeFacts.ALL) {
            if (compare(previous, current, name) == Fact.CHANGED) {
                changes.add(name + " " + previous.get(name) + " → " + current.get(name));
            }
        }
        Fact node = compare(previous, current, NodeFacts.NODE_NAME);
        Fact boot = compare(previous, current, NodeFacts.BOOT_ID);
        Fact driver = worst(
                compare(previous, current, NodeFacts.DRIVER_VERSION),
                compare(previous, current, NodeFacts.CUDA_VERSION));
        Fact gpu = compare(previous, current, NodeFacts.GPU_UUID);
        Fact pod = compare(previous, current, NodeFacts.POD_UID);
        Fact container = compare(previous, current, NodeFacts.ENGINE_CONTAINER);
        if (node == Fact.CHANGED) {
            return new Recovery(RecoveryKind.NEW_NODE, changes);
        }
        if (driver == Fact.CHANGED) {
            return new Recovery(RecoveryKind.DRIVER_CHANGED, changes);
        }
        if (gpu == Fact.CHANGED) {
            return new Recovery(RecoveryKind.GPU_CHANGED, changes);
        }
        if (boot == Fact.CHANGED) {
            if (node == Fact.SAME) {
                return new Recovery(RecoveryKind.NODE_REBOOTED, changes);
            }
            changes.add("node name not known: another node, or this one rebooted");
            return new Recovery(RecoveryKind.NEW_NODE, changes);
        }
        if (pod == Fact.CHANGED) {
            if (node == Fact.NOT_KNOWN && boot == Fact.NOT_KNOWN) {
                changes.add("node not known: on the same node or another");
            }
            return new Recovery(RecoveryKind.NEW_POD, changes);
        }
        if (container == Fact.CHANGED) {
            return new Recovery(RecoveryKind.CONTAINER_RESTARTED, changes);
        }
        if (container == Fact.SAME) {
            return new Recovery(RecoveryKind.PROCESS_RESTARTED, changes);
        }
        changes.add(
                pod == Fact.SAME
                        ? "same pod; whether the engine's container restarted is not known (no container start id:"
                                + " readygate.evidence.engine-container-file)"
                        : "too little known of this start or the one before (pod UID, engine container)");
        return new Recovery(RecoveryKind.UNKNOWN, changes);
    }

    /**
     * What a snapshot restore that was never verified ready owes to a changed driver, CUDA or GPU, in words; null when
     * this is not such a start. vLLM validates a snapshot's identity exactly ({@code snapshot mismatch: driver_version}),
     * so a snapshot taken before the change cannot be restored after it.
     */
    public @Nullable String snapshotAfterChange(RestartPath path, Outcome outcome) {
        if (path != RestartPath.SNAPSHOT_RESTORE || outcome == Outcome.READY) {
            return null;
        }
        List<String> relevant = changes.stream()
                .filter(change -> change.startsWith(NodeFacts.DRIVER_VERSION + " ")
                        || change.startsWith(NodeFacts.CUDA_VERSION + " ")
                        || change.startsWith(NodeFacts.GPU_UUID + " "))
                .toList();
        if (relevant.isEmpty()) {
            return null;
        }
        return "snapshot restore failed after a " + (kind == RecoveryKind.GPU_CHANGED ? "GPU" : "driver") + " change ("
                + String.join("; ", relevant) + "): vLLM restores a snapshot only on the GPU and driver it was taken"
                + " on; take a new one";
    }

    private static Fact compare(Map<String, String> previous, Map<String, String> current, String name) {
        String before = previous.get(name);
        String now = current.get(name);
        if (before == null || now == null || before.isBlank() || now.isBlank()) {
            return Fact.NOT_KNOWN;
        }
        return before.equals(now) ? Fact.SAME : Fact.CHANGED;
    }

    private static Fact worst(Fact a, Fact b) {
        if (a == Fact.CHANGED || b == Fact.CHANGED) {
            return Fact.CHANGED;
        }
        return a == Fact.SAME || b == Fact.SAME ? Fact.SAME : Fact.NOT_KNOWN;
    }
}
