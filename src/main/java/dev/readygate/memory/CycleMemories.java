package dev.readygate.memory;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.StartLedger;
import dev.readygate.restart.CycleMemory;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * GPU memory per restart cycle. Reads the GPU {@code after-stop-delay} after an engine went away (the stopped start's
 * after-stop moment, and the before-start moment of the start that follows) and when a start was recorded ready (its
 * at-ready moment), and joins each moment to the start's record, written again with it. The moments come in any order:
 * a slow reading after a stop may come after the next start was recorded. What is known of each start's cycle is in
 * its sheet of the {@link StartLedger} ({@link #CYCLE}); this class writes that slot, under its own lock.
 */
final class CycleMemories {

    private static final Logger logger = LoggerFactory.getLogger(CycleMemories.class);

    /** What is known of a start's memory cycle. */
    static final StartLedger.Slot<Cycle> CYCLE = StartLedger.Slot.of("GPU memory cycle", id -> Cycle.NONE);

    private final MemoryMoments moments;
    private final RestartRecords records;
    private final MemoryWatch watch;
    private final Duration afterStopDelay;
    private final Scheduler timer;
    private final StartLedger ledger;
    private @Nullable Gap gap;
    private long gaps;

    /**
     * What is known of one start's cycle.
     *
     * @param engineStart when its engine started, once its record says
     * @param atReadyAsked whether its at-ready moment was asked for
     * @param atReadySettled whether its at-ready moment was read, or will never be (the start was not ready, or the
     *     reading failed)
     * @param memory its moments so far
     */
    record Cycle(@Nullable Instant engineStart, boolean atReadyAsked, boolean atReadySettled, CycleMemory memory) {

        static final Cycle NONE = new Cycle(null, false, false, CycleMemory.NONE);

        Cycle withEngineStart(Instant at) {
            return new Cycle(at, atReadyAsked, atReadySettled, memory);
        }

        Cycle asked() {
            return new Cycle(engineStart, true, atReadySettled, memory);
        }

        Cycle settled() {
            return new Cycle(engineStart, atReadyAsked, true, memory);
        }

        Cycle withMemory(CycleMemory changed) {
            return new Cycle(engineStart, atReadyAsked, atReadySettled, changed);
        }
    }

    /**
     * The time between a stop and the next start.
     *
     * @param number counts the gaps: a reading belongs to the gap it was taken for
     * @param stoppedId the start that stopped
     * @param nextId the start that began after it, once one did
     * @param reading the GPU after the stop, once read
     * @param asleep whether the start stopped by falling asleep: the reading shows its engine asleep, before its wake
     */
    private record Gap(
            long number,
            String stoppedId,
            @Nullable String nextId,
            @Nullable MemoryMoment reading,
            boolean asleep) {}

    public CycleMemories(
            MemoryMoments moments,
            RestartRecords records,
            MemoryWatch watch,
            Duration afterStopDelay,
            Scheduler timer,
            StartLedger ledger) {
        this.moments = moments;
        this.ledger = ledger;
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
            if (stopped != null
                    && (change.current() instanceof EngineState.Down
                            || change.current() instanceof EngineState.Sleeping)) {
                // The engine went away, or the log's header of the next start came first (that start is loading); or
                // it fell asleep: the reading shows what sleep freed, and is the wake's before-start moment.
                Gap opened = new Gap(
                        ++gaps,
                        stopped.id(),
                        begun == null ? null : begun.id(),
                        null,
                        change.current() instanceof EngineState.Sleeping);
                gap = opened;
                readAfterStop(opened);
            } else if (change.startBegan() && stopped == null && begun != null) {
                Gap open = gap;
                if (open != null && open.nextId() == null) {
                    gap = new Gap(open.number(), open.stoppedId(), begun.id(), open.reading(), open.asleep());
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
            boolean ready = record.verdict().outcome() == Outcome.READY;
            readNow = ready && !cycle(record.id()).atReadyAsked();
            change(record.id(), cycle -> {
                Cycle dated = cycle.withEngineStart(record.when().engineStart());
                return ready ? dated.asked() : dated.settled();
            });
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
            if (cycle(opened.stoppedId()).memory().afterStop() == null) {
                change(
                        opened.stoppedId(),
                        stopped -> stopped.withMemory(stopped.memory().withAfterStop(moment)));
                changed.add(opened.stoppedId());
            }
            Gap open = gap;
            if (open != null && open.number() == opened.number()) {
                gap = new Gap(open.number(), open.stoppedId(), open.nextId(), moment, open.asleep());
                if (open.nextId() != null && matchBeforeStart(open.nextId())) {
                    changed.add(open.nextId());
                }
            }
        }
        changed.forEach(this::join);
    }

    private void atReady(String id, MemoryMoment moment) {
        synchronized (this) {
            change(
                    id,
                    cycle ->
                            cycle.withMemory(cycle.memory().withAtReady(moment)).settled());
            matchBeforeStart(id);
        }
        join(id);
    }

    private void settled(String id) {
        boolean matched;
        synchronized (this) {
            change(id, Cycle::settled);
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
                || cycle.memory().beforeStart() != null
                || cycle.engineStart() == null
                || !cycle.atReadySettled()) {
            return false;
        }
        MemoryMoment before = open.asleep()
                ? asleep(open.reading(), cycle.engineStart())
                : beforeStart(open.reading(), cycle.memory().atReady(), cycle.engineStart(), afterStopDelay);
        if (before == null) {
            return false;
        }
        change(id, known -> known.withMemory(known.memory().withBeforeStart(before)));
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

    /**
     * The memory read after the engine fell asleep, as its wake's before-start moment: when read before the wake (its
     * engine holds memory asleep, by design, so no process list says more).
     */
    private static @Nullable MemoryMoment asleep(MemoryMoment slept, Instant wake) {
        return slept.at().isAfter(wake) ? null : slept;
    }

    /** Writes the start's record again with its memory, when it is recorded and differs; the signals follow. */
    private void join(String id) {
        CycleMemory memory;
        synchronized (this) {
            memory = cycle(id).memory();
        }
        if (!memory.equals(CycleMemory.NONE)
                && records.update(id, record -> record.memory().equals(memory) ? record : record.withMemory(memory))) {
            watch.memoryRecorded();
        }
    }

    private Cycle cycle(String id) {
        return ledger.get(id, CYCLE);
    }

    /** Changes a start's cycle (only ever under this object's lock: this class is the slot's one writer). */
    private void change(String id, UnaryOperator<Cycle> change) {
        ledger.update(id, CYCLE, change);
    }
}
