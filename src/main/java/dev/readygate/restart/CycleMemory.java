package dev.readygate.restart;

import dev.readygate.gpu.MemoryMoment;
import org.jspecify.annotations.Nullable;

/**
 * GPU memory over one restart cycle: before the engine started, at verified readiness, and after it stopped. A
 * moment is null when it could not be read (no GPU source, a failed reading, readygate started after the engine, the
 * engine restarted without its port going away, or it has not stopped yet).
 *
 * @param beforeStart read after the previous engine went away, before this one started
 * @param atReady read when this start was verified ready
 * @param afterStop read {@code readygate.memory.after-stop-delay} after this engine went away
 */
public record CycleMemory(
        @Nullable MemoryMoment beforeStart,
        @Nullable MemoryMoment atReady,
        @Nullable MemoryMoment afterStop) {

    /** Nothing read. */
    public static final CycleMemory NONE = new CycleMemory(null, null, null);

    /** This cycle with its before-start moment. */
    public CycleMemory withBeforeStart(MemoryMoment moment) {
        return new CycleMemory(moment, atReady, afterStop);
    }

    /** This cycle with its at-ready moment. */
    public CycleMemory withAtReady(MemoryMoment moment) {
        return new CycleMemory(beforeStart, moment, afterStop);
    }

    /** This cycle with its after-stop moment. */
    public CycleMemory withAfterStop(MemoryMoment moment) {
        return new CycleMemory(beforeStart, atReady, moment);
    }
}
