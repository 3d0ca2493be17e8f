package dev.readygate.memory;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.restart.CycleMemory;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * GPU memory per restart cycle, keyed by engine start id. Reads the GPU {@code after-stop-delay} after an engine went
 * away (the stopped start's after-stop moment, and the before-start moment of the start that follows) and when a start
 * was recorded ready (its at-ready moment), and joins each moment to the start's record, written again with it. The
 * moments come in any order: a slow reading after a stop may come after the next start was recorded.
 */
final class CycleMemories {

    private static final Logger logger = LoggerFactory.getLogger(CycleMemories.class);

    /** The starts whose moments are kept: the current one and the few whose records may still be written. */
    private static final int KEPT = 8;

    private final MemoryMoments moments;
    private final RestartRecords records;
    private final MemoryWatch watch;
    private final Duration afterStopDelay;
    private final Scheduler timer;
    private final Map<String, Cycle> cycles = new LinkedHashMap<>();
    private @Nullable Gap gap;
    private long gaps;

    /** What is known of one start's cycle. */
    private static final class Cycle {
        /** When its engine started, once its record says. */
        @Nullable
        Instant engineStart;
        /** Whether its at-ready moment was read, or will never be (the start was not ready, or the reading failed). */
        boolean atReadySettled;

        boolean atReadyAsked;
        CycleMemory memory = CycleMemory.NONE;
    }

    /**
     * The time between a stop and the next start.
     *
     * @param number counts the gaps: a reading belongs to the gap it was taken for
     * @param stoppedId the start that stopped
     * @param nextId the start that began after it, once one did
     * @param reading the GPU after the stop, once read
     */
    private record Gap(
            long number,
            String stoppedId,
            @Nullable String nextId,
            @Nullable MemoryMoment reading) {}

    public CycleMemories(
            MemoryMoments moments,
            RestartRecords records,
            MemoryWatch watch,
            Duration afterStopDelay,
            Scheduler timer) {
        this.moments = moments;
        this.records = records;
        this.watch = watch;
        this.afterStopDelay = afterStopDelay;
        this.timer = timer;
    }

    /** A start that went away opens a gap; the start after it is the one the gap's reading may precede. */
    @EventListener
    @Order(2)
    public void onEngineStateChanged(EngineStateChanged change) {
        EngineStart stopped = change.ended();
        EngineStart begun = change.start();
        synchronized (this) {
            if (stopped != null && change.current() instanceof EngineState.Down) {
                // The engine went away, or the log's header of the next start came first (that start is loading).
                Gap opened = new Gap(++gaps, stopped.id(), begun == null ? null : begun.id(), null);
                gap = opened;
                readAfterStop(opened);
            } else if (change.startBegan() && stopped == null && begun != null) {
                Gap open = gap;
                if (open != null && open.nextId() == null) {
                    gap = new Gap(open.number(), open.stoppedId(), begun.id(), open.reading());
                }
            } else if (stopped != null) {
                // A new process nobody saw go away: no reading shows the GPU between the two.
                Gap open = gap;
                if (open != null && open.nextId() == null) {
                    gap = null;
                }
            }
        }
    }

    /** A recorded start: its record dates it; a ready one's GPU is read now. */
    @EventListener
    public void onRestartRecorded(RestartRecorded recorded) {
        RestartRecord record = recorded.record();
        boolean readNow;
        synchronized (this) {
            Cycle cycle = cycle(record.id());
            cycle.engineStart = record.when().engineStart();
            readNow = record.verdict().outcome() == Outcome.READY && !cycle.atReadyAsked;
            cycle.atReadyAsked |= readNow;
            if (record.verdict().outcome() != Outcome.READY) {
                cycle.atReadySettled = true;
            }
            matchBeforeStart(record.id());
        }
        if (readNow) {
            moments.now()
                    .onErrorResume(error -> Mono.empty())
                    .subscribe(
                            moment -> atReady(record.id(), moment),
                            error -> logger.warn("Cannot read GPU memory at readiness", error),
                            () -> settled(record.id()));
        }
        join(record.id());
    }

    private void readAfterStop(Gap opened) {
        Mono.delay(afterStopDelay, timer)
                .then(moments.now())
                .onErrorResume(error -> Mono.empty())
                .subscribe(
                        moment -> afterStop(opened, moment),
                        error -> logger.warn("Cannot read GPU memory after the engine stopped", error));
    }

    private void afterStop(Gap opened, MemoryMoment moment) {
        Set<String> changed = new HashSet<>();
        synchronized (this) {
            Cycle stopped = cycle(opened.stoppedId());
            if (stopped.memory.afterStop() == null) {
                stopped.memory = stopped.memory.withAfterStop(moment);
                changed.add(opened.stoppedId());
            }
            Gap open = gap;
            if (open != null && open.number() == opened.number()) {
                gap = new Gap(open.number(), open.stoppedId(), open.nextId(), moment);
                if (open.nextId() != null && matchBeforeStart(open.nextId())) {
                    changed.add(open.nextId());
                }
            }
        }
        changed.forEach(this::join);
    }

    private void atReady(String id, MemoryMoment moment) {
        synchronized (this) {
            Cycle cycle = cycle(id);
            cycle.memory = cycle.memory.withAtReady(moment);
            cycle.atReadySettled = true;
            matchBeforeStart(id);
        }
        join(id);
    }

    private void settled(String id) {
        boolean matched;
        synchronized (this) {
            Cycle cycle = cycle(id);
            cycle.atReadySettled = true;
            matched = matchBeforeStart(id);
        }
        if (matched) {
            join(id);
        }
    }

    /** Gives the start that followed the latest gap its before-start moment, once all it takes is known. */
    private boolean matchBeforeStart(String id) {
        Gap open = gap;
        Cycle cycle = cycle(id);
        if (open == null
                || !id.equals(open.nextId())
                || open.reading() == null
                || cycle.memory.beforeStart() != null
                || cycle.engineStart == null
                || !cycle.atReadySettled) {
            return false;
        }
        MemoryMoment before = beforeStart(open.reading(), cycle.memory.atReady(), cycle.engineStart, afterStopDelay);
        if (before == null) {
            return false;
        }
        cycle.memory = cycle.memory.withBeforeStart(before);
        return true;
    }

    /**
     * The memory read after the previous engine went away, when it shows the GPU before this engine took any: none of
     * the engine processes this start had at readiness holds memory in it. Without a process list (or without a reading
     * at readiness), it must have been read no later than {@code after-stop-delay} after this engine's process started
     * (an engine allocates its CUDA context seconds after it starts: Python imports come first).
     */
    static @Nullable MemoryMoment beforeStart(
            MemoryMoment stopped, @Nullable MemoryMoment atReady, Instant engineStart, Duration afterStopDelay) {
        if (atReady != null && !atReady.processes().isEmpty()) {
            Set<Integer> engine = new HashSet<>();
            atReady.processes().stream()
                    .filter(holder -> holder.owner() == ProcessOwners.Owner.ENGINE)
                    .forEach(holder -> engine.add(holder.pid()));
            boolean clean = stopped.processes().stream().noneMatch(holder -> engine.contains(holder.pid()));
            return clean && !stopped.at().isAfter(atReady.at()) ? stopped : null;
        }
        return stopped.at().isAfter(engineStart.plus(afterStopDelay)) ? null : stopped;
    }

    /** Writes the start's record again with its memory, when it is recorded and differs; the signals follow. */
    private void join(String id) {
        CycleMemory memory;
        synchronized (this) {
            memory = cycle(id).memory;
        }
        if (!memory.equals(CycleMemory.NONE)
                && records.update(id, record -> record.memory().equals(memory) ? record : record.withMemory(memory))) {
            watch.memoryRecorded();
        }
    }

    private Cycle cycle(String id) {
        Cycle cycle = cycles.get(id);
        if (cycle == null) {
            cycle = new Cycle();
            cycles.put(id, cycle);
            while (cycles.size() > KEPT) {
                cycles.remove(cycles.keySet().iterator().next());
            }
        }
        return cycle;
    }
}
