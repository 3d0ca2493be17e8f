package dev.readygate.restart;

import dev.readygate.probe.ProbeReport;
import dev.readygate.probe.StartTrust;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;

/**
 * Follows the current engine start: folds engine state changes and heavy probe reports into its
 * {@link RestartTimeline} and hands the verdicts to the recorder; the restart loop is readiness's (the state machine
 * counts the starts, and holds a start that began in a loop out of service). Tells the
 * canary whether the start may teach it a baseline (only weights loaded from disk). Cheap and synchronous: recording
 * happens asynchronously. Every start counts toward the restart loop, those that died before serving (begun and ended
 * by the engine log) too.
 */
public final class RestartTracker implements StartTrust {

    private final StartRecorder recorder;
    private final Clock clock;
    private final EngineStateMachine machine;
    private RestartTimeline timeline = RestartTimeline.NONE;
    private @Nullable EngineStart shutDownIn;

    RestartTracker(StartRecorder recorder, EngineStateMachine machine, Clock clock) {
        this.recorder = recorder;
        this.machine = machine;
        this.clock = clock;
    }

    @EventListener
    @Order(4)
    public synchronized void onEngineStateChanged(EngineStateChanged change) {
        follow(timeline.next(change));
        if (change.current() instanceof EngineState.ShuttingDown) {
            // readygate stopping ends the start it watched (the state machine keeps none): the drain's stop is its.
            shutDownIn = change.ended();
        }
        if (change.start() != null) {
            recorder.dateIfKnown(change.start());
        }
        if (change.start() == null && change.current() instanceof EngineState.Down down) {
            // No start until the new engine answers (without a log header: a whole vLLM load); readygate saw it begin.
            recorder.awaited(down.since(), EngineStateMachine.RANDOM_IDS.get());
        }
    }

    /**
     * readygate was told to stop (SIGTERM: the pod stopping) with gateway mode on: the current start's stop is recorded
     * as the gateway's drain begins, so that the drain's count joins it. Nothing while no start is under way.
     */
    public synchronized void podStopping(Instant at) {
        EngineStart current = machine.start();
        EngineStart start = current != null ? current : shutDownIn;
        if (start != null) {
            recorder.record(new RestartTimeline.Verdict.Stopped(start, at, Stop.How.POD_STOPPED));
        }
    }

    @EventListener
    public synchronized void onProbeReport(ProbeReport report) {
        follow(timeline.next(report));
    }

    private void follow(RestartTimeline.Step step) {
        EngineStart before = timeline.start();
        timeline = step.timeline();
        EngineStart now = timeline.start();
        if (now != null && !now.wake() && (before == null || !before.id().equals(now.id()))) {
            // Journaled before any verdict of it: a start readygate dies during is recorded after its restart. Not a
            // wake: a restarted readygate finds its process as a start first seen, and the journal keeps processes.
            recorder.begun(now);
        }
        step.verdicts().forEach(recorder::record);
    }

    /** The path of the start in progress from what is known without I/O (its log so far and its metrics). */
    public RestartPath provisionalPath() {
        return recorder.provisionalPath(timeline().start());
    }

    /** Whether the current start may teach the canary its expected answer: only weights loaded from disk. */
    @Override
    public Trust current() {
        return switch (provisionalPath()) {
            case COLD, PRELOAD_FALLBACK -> Trust.TRUSTED;
            // A wake may serve weights sleep corrupted (reported in public): it verifies the canary, never teaches it.
            case PRELOAD_HIT, SNAPSHOT_RESTORE, WAKE -> Trust.UNTRUSTED;
            case UNKNOWN -> Trust.UNKNOWN;
        };
    }

    /** The start in progress: its phases so far, or empty when none. */
    public Map<Phase, Instant> currentPhases() {
        return timeline().phases();
    }

    /**
     * Whether {@code loop-starts} starts happened within {@code loop-window}: starts that served and starts that died
     * before serving alike (the state machine counts every start it begins, those the engine log began too).
     */
    public boolean restartLoop() {
        return machine.restartLoop().looping(clock.instant());
    }

    private synchronized RestartTimeline timeline() {
        return timeline;
    }
}
