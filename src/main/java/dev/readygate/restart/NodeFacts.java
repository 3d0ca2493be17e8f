package dev.readygate.restart;

import java.util.List;

/**
 * The names of the facts about where an engine start ran, as its record's {@code node} map holds them: each is there
 * only when known.
 */
public final class NodeFacts {

    /** The node's name (the downward API's {@code spec.nodeName}). */
    public static final String NODE_NAME = "node_name";
    /** The pod's UID (the downward API's {@code metadata.uid}). */
    public static final String POD_UID = "pod_uid";
    /** The kernel's boot id ({@code /proc/sys/kernel/random/boot_id}): a new one after every boot. */
    public static final String BOOT_ID = "boot_id";
    /** The engine container's start id, as the chart's engine entrypoint writes it when the container starts. */
    public static final String ENGINE_CONTAINER = "engine_container";
    /** The engine's GPU(s), by UUID (comma-separated when several). */
    public static final String GPU_UUID = "gpu_uuid";
    /** The GPU's product name. */
    public static final String GPU_NAME = "gpu_name";
    /** The NVIDIA driver version. */
    public static final String DRIVER_VERSION = "driver_version";
    /** The CUDA version the driver supports ({@code nvidia-smi -q -x}'s {@code cuda_version}). */
    public static final String CUDA_VERSION = "cuda_version";

    /** Every fact, in the order the records and the CSV show them. */
    public static final List<String> ALL =
            List.of(NODE_NAME, POD_UID, BOOT_ID, ENGINE_CONTAINER, GPU_UUID, GPU_NAME, DRIVER_VERSION, CUDA_VERSION);

    private NodeFacts() {}
}
