package dev.readygate.memory;

import dev.readygate.gpu.ProcessOwners;
import dev.readygate.restart.CycleMemory;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What the restart cycles' memory shows, signal by signal; each part is null (or empty) when there is not enough to
 * tell.
 *
 * @param drift the growth of memory at readiness per cycle, over the latest cycles with the same configuration and path
 * @param heldAfterStop who held memory after the latest stop, expected or not
 * @param staleCache the preload daemon's memory beyond the current checkpoint's weights, after a checkpoint switch
 * @param kvCache the KV cache size over the latest cycles with the same configuration
 * @param latestMoments the moments of the latest cycles: before the start and at readiness of the last start measured
 *     at readiness, after the stop of the last start that stopped
 */
public record MemoryAssessment(
        @Nullable Drift drift,
        @Nullable HeldAfterStop heldAfterStop,
        @Nullable StaleCache staleCache,
        @Nullable KvCache kvCache,
        CycleMemory latestMoments) {

    /** Nothing known yet. */
    public static final MemoryAssessment NONE = new MemoryAssessment(null, null, null, null, CycleMemory.NONE);

    /** The signals that fire. */
    public Set<MemorySignal> active() {
        Set<MemorySignal> active = EnumSet.noneOf(MemorySignal.class);
        if (drift != null && drift.leak()) {
            active.add(MemorySignal.LEAK_ACROSS_RESTARTS);
        }
        if (heldAfterStop != null && heldAfterStop.unexpected()) {
            active.add(MemorySignal.HELD_AFTER_STOP);
        }
        if (staleCache != null && staleCache.stale()) {
            active.add(MemorySignal.STALE_CACHE);
        }
        if (kvCache != null && kvCache.shrinking()) {
            active.add(MemorySignal.KV_CACHE_SHRINKING);
        }
        return active;
    }

    /**
     * Memory at readiness over the latest cycles with one configuration and path.
     *
     * @param cycles how many cycles the fit covers
     * @param path their restart path
     * @param bytesPerCycle the least-squares growth per cycle of memory used at readiness
     * @param byOwnerBytesPerCycle the same per owner, when processes are listed: who grows
     * @param firstBytes memory at readiness in the first of these cycles
     * @param lastBytes and in the last
     * @param leak whether the growth per cycle is above {@code readygate.memory.drift-threshold} and the last cycle
     *     holds more than the first by at least that much
     */
    public record Drift(
            int cycles,
            String path,
            long bytesPerCycle,
            Map<String, Long> byOwnerBytesPerCycle,
            long firstBytes,
            long lastBytes,
            boolean leak) {}

    /**
     * Who held memory after the latest engine stop.
     *
     * @param startId the stopped start
     * @param at when it was read
     * @param holders every process still holding memory, each marked expected or not
     * @param unexplainedBytes memory used beyond what was used before the start, when processes are not listed
     * @param unexpected whether anything held is unexpected (and above the tolerance)
     */
    public record HeldAfterStop(
            String startId, Instant at, List<Holder> holders, long unexplainedBytes, boolean unexpected) {}

    /**
     * One process still holding memory after the stop.
     *
     * @param pid its process id
     * @param owner who it is
     * @param bytes what it held
     * @param expected whether that is expected: a preload daemon holding what it held before the start
     * @param unexpectedBytes what of it should have been let go (all of it for an engine process; what a daemon holds
     *     beyond what it held before the start); 0 when expected
     * @param why a short explanation
     */
    public record Holder(
            int pid, ProcessOwners.Owner owner, long bytes, boolean expected, long unexpectedBytes, String why) {}

    /**
     * The preload daemon's memory when it holds another checkpoint than the one served, or after a checkpoint switch.
     *
     * @param previousCheckpoint the checkpoint the daemon holds instead, else the one served before the switch, else
     *     {@code another checkpoint}
     * @param checkpoint the checkpoint now
     * @param daemonBytes what the daemon holds
     * @param servingBytes what of it are the current checkpoint's weights (0 when it holds another checkpoint)
     * @param overheadBytes what the daemon holds beyond any weights (its CUDA context)
     * @param staleBytes the rest: another checkpoint still resident
     * @param stale whether the rest is above {@code readygate.memory.tolerance}
     * @param daemonCheckpoint the checkpoint the engine's log shows the daemon holds, or null when it shows only that
     *     the daemon holds another than {@code checkpoint}
     * @param evidence what showed it: the preload hit or fingerprint mismatch, and when
     */
    public record StaleCache(
            String previousCheckpoint,
            String checkpoint,
            long daemonBytes,
            long servingBytes,
            long overheadBytes,
            long staleBytes,
            boolean stale,
            @Nullable String daemonCheckpoint,
            String evidence) {}

    /**
     * The KV cache over the latest cycles with one configuration.
     *
     * @param cycles how many cycles
     * @param tokens {@code kv_cache_size_tokens} of each, oldest first
     * @param shrinking whether the latest is smaller than an earlier one by more than
     *     {@code readygate.memory.kv-shrink-fraction}
     */
    public record KvCache(int cycles, List<Long> tokens, boolean shrinking) {}
}
