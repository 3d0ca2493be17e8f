package dev.readygate.gpu;

import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * GPU memory at one moment, on the GPUs readygate watches together: in all, per owner and per process. A restart
 * cycle's memory is three of these (before the start, at readiness, after the stop).
 *
 * @param at when it was read
 * @param usedBytes memory used on the watched GPUs together
 * @param byOwner bytes per owner; empty when the source lists no processes (the DCGM exporter)
 * @param processes the processes holding memory, each with its owner
 */
public record MemoryMoment(Instant at, long usedBytes, Map<ProcessOwners.Owner, Long> byOwner, List<Holder> processes) {

    /**
     * A process holding GPU memory.
     *
     * @param pid the process id nvidia-smi reported
     * @param owner who it is
     * @param bytes the memory charged to it, on all watched GPUs
     */
    public record Holder(int pid, ProcessOwners.Owner owner, long bytes) {}

    public MemoryMoment {
        byOwner = byOwner.isEmpty() ? Map.of() : Map.copyOf(new EnumMap<>(byOwner));
        processes = List.copyOf(processes);
    }

    /** The bytes an owner holds (0 when none, or when processes are not listed). */
    public long owner(ProcessOwners.Owner owner) {
        return byOwner.getOrDefault(owner, 0L);
    }

    /** Bytes in MiB, rounded to the nearest: how {@code /status}, the CSV and the logs show GPU memory. */
    public static long mib(long bytes) {
        return Math.round(bytes / 1048576.0);
    }
}
