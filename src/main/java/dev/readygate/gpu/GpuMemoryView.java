package dev.readygate.gpu;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The last GPU memory reading, attributed to owners: who holds how much on each GPU, or why it could not be read.
 *
 * @param at when it was read
 * @param source the source the reading came from ({@code nvidia_smi}, {@code dcgm}), or null when none worked
 * @param gpus the GPUs, as read
 * @param byOwner per GPU UUID, the bytes each owner ({@code engine}, {@code preload_daemon}, {@code other}) holds
 *     (empty per GPU when the source does not list processes)
 * @param processes every process holding memory, with its owner
 * @param failure the named reason of a failed reading (the first source's), or null
 * @param failureDetail a short explanation of the failure
 * @param sourceFailures per source that failed this time, its failure (a reading can succeed from the second source)
 * @param driverVersion the NVIDIA driver version the reading reported, or null
 * @param cudaVersion the CUDA version the driver supports, as the reading reported it, or null
 */
public record GpuMemoryView(
        Instant at,
        @Nullable String source,
        List<GpuMemory> gpus,
        Map<String, Map<ProcessOwners.Owner, Long>> byOwner,
        List<OwnedProcess> processes,
        GpuReading.@Nullable Reason failure,
        @Nullable String failureDetail,
        Map<String, GpuReading.Failure> sourceFailures,
        @Nullable String driverVersion,
        @Nullable String cudaVersion) {

    /**
     * A process holding GPU memory, and who it is.
     *
     * @param pid the process id nvidia-smi reported
     * @param owner who it is
     * @param gpuUuid the GPU
     * @param usedBytes the memory charged to it
     */
    public record OwnedProcess(int pid, ProcessOwners.Owner owner, String gpuUuid, long usedBytes) {}

    public GpuMemoryView {
        gpus = List.copyOf(gpus);
        byOwner = Map.copyOf(byOwner);
        processes = List.copyOf(processes);
        sourceFailures = Map.copyOf(sourceFailures);
    }

    static GpuMemoryView notConfigured(Instant at) {
        return new GpuMemoryView(
                at,
                null,
                List.of(),
                Map.of(),
                List.of(),
                GpuReading.Reason.NOT_CONFIGURED,
                "neither readygate.gpu.nvidia-smi nor readygate.gpu.dcgm-url is set",
                Map.of(),
                null,
                null);
    }

    static GpuMemoryView failed(Instant at, Map<String, GpuReading.Failure> failures) {
        GpuReading.Failure first = failures.values().iterator().next();
        return new GpuMemoryView(
                at, null, List.of(), Map.of(), List.of(), first.reason(), first.detail(), failures, null, null);
    }

    /**
     * The GPUs the engine runs on, sorted by UUID: those its processes hold memory on, else the one GPU read; empty
     * when that cannot be told (several GPUs and no engine process among the holders).
     */
    public List<String> engineGpus() {
        List<String> engine = processes.stream()
                .filter(process -> process.owner() == ProcessOwners.Owner.ENGINE)
                .map(OwnedProcess::gpuUuid)
                .distinct()
                .sorted()
                .toList();
        if (!engine.isEmpty()) {
            return engine;
        }
        return gpus.size() == 1 ? List.of(gpus.getFirst().uuid()) : List.of();
    }

    /** The product name of the engine's GPUs, when they all have the same one. */
    public @Nullable String engineGpuName() {
        List<String> engine = engineGpus();
        List<String> names = gpus.stream()
                .filter(gpu -> engine.contains(gpu.uuid()))
                .map(GpuMemory::name)
                .filter(name -> !name.isBlank())
                .distinct()
                .toList();
        return names.size() == 1 ? names.getFirst() : null;
    }

    /** Whether memory was read. */
    public boolean read() {
        return failure == null;
    }

    /** Memory used on all watched GPUs together. */
    public long usedBytes() {
        return gpus.stream().mapToLong(GpuMemory::usedBytes).sum();
    }

    /** This reading summed over the watched GPUs, per owner and per process; null when the reading failed. */
    public @Nullable MemoryMoment moment() {
        if (!read()) {
            return null;
        }
        Map<Integer, MemoryMoment.Holder> byPid = new LinkedHashMap<>();
        for (OwnedProcess process : processes) {
            byPid.merge(
                    process.pid(),
                    new MemoryMoment.Holder(process.pid(), process.owner(), process.usedBytes()),
                    (a, b) -> new MemoryMoment.Holder(a.pid(), a.owner(), a.bytes() + b.bytes()));
        }
        return new MemoryMoment(at, usedBytes(), ownersTotal(), new ArrayList<>(byPid.values()));
    }

    /** Memory each owner holds on all watched GPUs together; empty when the source lists no processes. */
    public Map<ProcessOwners.Owner, Long> ownersTotal() {
        Map<ProcessOwners.Owner, Long> total = new LinkedHashMap<>();
        byOwner.values().forEach(owners -> owners.forEach((owner, bytes) -> total.merge(owner, bytes, Long::sum)));
        return total;
    }
}
