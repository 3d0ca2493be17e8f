package dev.readygate.gpu;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What one reading found: every GPU's memory and the processes holding memory on them.
 *
 * @param at when the reading was taken
 * @param gpus the GPUs, in the tool's order
 * @param processes the processes holding GPU memory, in the tool's order (empty when none, or when the source does not
 *     list processes, as the DCGM exporter does not)
 * @param driverVersion the driver version, when the tool reported it
 * @param cudaVersion the CUDA version the driver supports, when the tool reported it ({@code nvidia-smi -q -x})
 */
record GpuSnapshot(
        Instant at,
        List<GpuMemory> gpus,
        List<GpuProcess> processes,
        @Nullable String driverVersion,
        @Nullable String cudaVersion) {

    /** A snapshot from a tool that does not report the CUDA version. */
    GpuSnapshot(Instant at, List<GpuMemory> gpus, List<GpuProcess> processes, @Nullable String driverVersion) {
        this(at, gpus, processes, driverVersion, null);
    }

    public GpuSnapshot {
        gpus = List.copyOf(gpus);
        processes = List.copyOf(processes);
    }

    /** This snapshot keeping only the given GPUs and the processes on them; all of it when {@code uuids} is empty. */
    public GpuSnapshot onlyGpus(Collection<String> uuids) {
        if (uuids.isEmpty()) {
            return this;
        }
        Set<String> wanted = Set.copyOf(uuids);
        return new GpuSnapshot(
                at,
                gpus.stream().filter(gpu -> wanted.contains(gpu.uuid())).toList(),
                processes.stream()
                        .filter(process -> wanted.contains(process.gpuUuid()))
                        .toList(),
                driverVersion,
                cudaVersion);
    }
}
