package dev.readygate.restart;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * GPU memory at one moment of a restart cycle: in all, per owner and per process, on the GPUs readygate watches.
 *
 * @param at when it was read
 * @param usedBytes memory used on the watched GPUs together
 * @param byOwner bytes per owner ({@code engine}, {@code preload_daemon}, {@code other}); empty when the source lists no
 *     processes (the DCGM exporter)
 * @param processes the processes holding memory, each with its owner
 */
public record MemoryMoment(Instant at, long usedBytes, Map<String, Long> byOwner, List<Holder> processes) {

    /**
     * A process holding GPU memory.
     *
     * @param pid the process id nvidia-smi reported
     * @param owner {@code engine}, {@code preload_daemon} or {@code other}
     * @param bytes the memory charged to it, on all watched GPUs
     */
    public record Holder(int pid, String owner, long bytes) {}

    public MemoryMoment {
        byOwner = Map.copyOf(byOwner);
        processes = List.copyOf(processes);
    }

    /** The bytes an owner holds (0 when none, or when processes are not listed). */
    public long owner(String owner) {
        return byOwner.getOrDefault(owner, 0L);
    }
}
