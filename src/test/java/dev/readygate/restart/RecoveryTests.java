package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a start recovered from, as a table: the facts of the start before and of this one (written {@code name=value}
 * pairs; a fact left out is not known), and the kind with every change named.
 */
class RecoveryTests {

    /** The facts of a start on node-a, pod p-1, boot b-1, container c-1, GPU g-1, driver 580.159.04, CUDA 13.0. */
    static final String BEFORE = "node_name=node-a pod_uid=p-1 boot_id=b-1 engine_container=c-1 gpu_uuid=g-1"
            + " gpu_name=H200 driver_version=580.159.04 cuda_version=13.0";

    static Map<String, String> facts(String pairs) {
        Map<String, String> facts = new LinkedHashMap<>();
        for (String pair : pairs.trim().split("\\s+")) {
            if (!pair.isEmpty()) {
                String[] split = pair.split("=", 2);
                facts.put(split[0], split[1]);
            }
        }
        return facts;
    }

    /** {@link #BEFORE} with some facts changed ({@code name=value}) or left out ({@code -name}). */
    static Map<String, String> changed(String changes) {
        Map<String, String> facts = facts(BEFORE);
        for (String change : changes.trim().split("\\s+")) {
            if (change.startsWith("-")) {
                facts.remove(change.substring(1));
            } else if (!change.isEmpty()) {
                String[] split = change.split("=", 2);
                facts.put(split[0], split[1]);
            }
        }
        return facts;
    }

    static Stream<Arguments> recoveries() {
        return Stream.of(
                Arguments.of(
                        "the same container: the engine process restarted in it",
                        BEFORE,
                        changed(""),
                        RecoveryKind.PROCESS_RESTARTED,
                        List.of()),
                Arguments.of(
                        "another container start id in the same pod: the container restarted",
                        BEFORE,
                        changed("engine_container=c-2"),
                        RecoveryKind.CONTAINER_RESTARTED,
                        List.of("engine_container c-1 → c-2")),
                Arguments.of(
                        "another pod on the same node and boot",
                        BEFORE,
                        changed("pod_uid=p-2 engine_container=c-2"),
                        RecoveryKind.NEW_POD,
                        List.of("pod_uid p-1 → p-2", "engine_container c-1 → c-2")),
                Arguments.of(
                        "another pod where nothing says which node",
                        "pod_uid=p-1",
                        facts("pod_uid=p-2"),
                        RecoveryKind.NEW_POD,
                        List.of("pod_uid p-1 → p-2", "node not known: on the same node or another")),
                Arguments.of(
                        "the same node after a reboot",
                        BEFORE,
                        changed("pod_uid=p-2 boot_id=b-2 engine_container=c-2"),
                        RecoveryKind.NODE_REBOOTED,
                        List.of("pod_uid p-1 → p-2", "boot_id b-1 → b-2", "engine_container c-1 → c-2")),
                Arguments.of(
                        "a new boot where the node's name is not known: another node, or a reboot",
                        "boot_id=b-1 pod_uid=p-1",
                        facts("boot_id=b-2 pod_uid=p-2"),
                        RecoveryKind.NEW_NODE,
                        List.of(
                                "pod_uid p-1 → p-2",
                                "boot_id b-1 → b-2",
                                "node name not known: another node, or this one rebooted")),
                Arguments.of(
                        "another node, whatever else changed with it",
                        BEFORE,
                        changed("node_name=node-b pod_uid=p-2 boot_id=b-9 gpu_uuid=g-7 driver_version=580.172.08"),
                        RecoveryKind.NEW_NODE,
                        List.of(
                                "node_name node-a → node-b",
                                "pod_uid p-1 → p-2",
                                "boot_id b-1 → b-9",
                                "gpu_uuid g-1 → g-7",
                                "driver_version 580.159.04 → 580.172.08")),
                Arguments.of(
                        "a driver upgrade on the same node is named before the reboot it took",
                        BEFORE,
                        changed("boot_id=b-2 pod_uid=p-2 driver_version=580.172.08"),
                        RecoveryKind.DRIVER_CHANGED,
                        List.of("pod_uid p-1 → p-2", "boot_id b-1 → b-2", "driver_version 580.159.04 → 580.172.08")),
                Arguments.of(
                        "a CUDA change alone is a driver change",
                        BEFORE,
                        changed("cuda_version=13.1"),
                        RecoveryKind.DRIVER_CHANGED,
                        List.of("cuda_version 13.0 → 13.1")),
                Arguments.of(
                        "another GPU for a new pod on the same node",
                        BEFORE,
                        changed("pod_uid=p-2 engine_container=c-2 gpu_uuid=g-2"),
                        RecoveryKind.GPU_CHANGED,
                        List.of("pod_uid p-1 → p-2", "engine_container c-1 → c-2", "gpu_uuid g-1 → g-2")),
                Arguments.of(
                        "a fact this start does not know is no change",
                        BEFORE,
                        changed("-driver_version -cuda_version -gpu_uuid"),
                        RecoveryKind.PROCESS_RESTARTED,
                        List.of()),
                Arguments.of(
                        "the same pod without a container start id: process or container restart cannot be told",
                        "node_name=node-a pod_uid=p-1 boot_id=b-1",
                        facts("node_name=node-a pod_uid=p-1 boot_id=b-1"),
                        RecoveryKind.UNKNOWN,
                        List.of("same pod; whether the engine's container restarted is not known (no container start"
                                + " id: readygate.evidence.engine-container-file)")),
                Arguments.of(
                        "nothing known on either side",
                        "",
                        facts(""),
                        RecoveryKind.UNKNOWN,
                        List.of("too little known of this start or the one before (pod UID, engine container)")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("recoveries")
    void decideNamesTheWidestChangeAndEveryFactThatChanged(
            String name, String before, Map<String, String> now, RecoveryKind kind, List<String> changes) {
        Recovery recovery = Recovery.decide(facts(before), now);

        assertThat(recovery.kind()).as(name).isEqualTo(kind);
        assertThat(recovery.changes()).as(name).containsExactlyElementsOf(changes);
    }

    @Test
    void decideWhenNoStartWasRecordedBeforeIsUnknown() {
        Recovery recovery = Recovery.decide(null, facts(BEFORE));

        assertThat(recovery.kind()).isEqualTo(RecoveryKind.UNKNOWN);
        assertThat(recovery.changes()).containsExactly("no earlier start recorded to compare with");
    }

    static Stream<Arguments> snapshotsAfterChanges() {
        return Stream.of(
                Arguments.of(
                        RestartPath.SNAPSHOT_RESTORE,
                        Outcome.NOT_READY,
                        "driver_version=580.172.08",
                        "snapshot restore failed after a driver change (driver_version 580.159.04 → 580.172.08): vLLM"
                                + " restores a snapshot only on the GPU and driver it was taken on; take a new one"),
                Arguments.of(
                        RestartPath.SNAPSHOT_RESTORE,
                        Outcome.NOT_READY,
                        "gpu_uuid=g-2 pod_uid=p-2",
                        "snapshot restore failed after a GPU change (gpu_uuid g-1 → g-2): vLLM restores a snapshot"
                                + " only on the GPU and driver it was taken on; take a new one"),
                Arguments.of(RestartPath.SNAPSHOT_RESTORE, Outcome.READY, "driver_version=580.172.08", null),
                Arguments.of(RestartPath.COLD, Outcome.NOT_READY, "driver_version=580.172.08", null),
                Arguments.of(RestartPath.SNAPSHOT_RESTORE, Outcome.NOT_READY, "engine_container=c-2", null));
    }

    @ParameterizedTest(name = "{0} {1} after {2}")
    @MethodSource("snapshotsAfterChanges")
    void snapshotAfterChangeSaysWhyARestoreFailedAfterADriverOrGpuChange(
            RestartPath path, Outcome outcome, String changes, @Nullable String expected) {
        Recovery recovery = Recovery.decide(facts(BEFORE), changed(changes));

        assertThat(recovery.snapshotAfterChange(path, outcome)).isEqualTo(expected);
    }

    @Test
    void kindValuesAreSnakeCaseAndReadBack() {
        for (RecoveryKind kind : RecoveryKind.values()) {
            assertThat(kind.value()).matches("[a-z_]+");
            assertThat(RecoveryKind.of(kind.value())).isEqualTo(kind);
        }
        assertThat(RecoveryKind.of("a_kind_from_later")).isEqualTo(RecoveryKind.UNKNOWN);
    }
}
