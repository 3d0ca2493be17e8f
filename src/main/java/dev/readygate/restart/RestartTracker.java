package dev.readygate.restart;

import dev.readygate.probe.ProbeReport;
import dev.readygate.probe.StartTrust;
import dev.readygate.readiness.EngineStateChanged;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import org.springframework.context.event.EventListener;

/**
 * Follows the current engine start: folds engine state changes and heavy probe reports into its
 * {@link RestartTimeline}, hands the verdicts to the recorder, and counts starts for restart-loop detection. Tells the
 * canary whether the start may teach it a baseline (only weights loaded from disk). Cheap and synchronous: recording
 * happens asynchronously. Every start counts toward the restart loop, those that died before serving (begun and ended
 * by the engine log) too: the loop is decided here only.
 */
public final class RestartTracker implements StartTrust {

    private final StartRecorder recorder;
    private final Clock clock;
    private RestartTimeline timeline = RestartTimeline.NONE;
    private RestartLoop loop;

    RestartTracker(StartRecorder recorder, RestartLoop loop, Clock clock) {
        this.recorder = recorder;
        this.loop = loop;
        this.clock = clock;
    }

    @EventListener
    public synchronized void onEngineStateChanged(EngineStateChanged change) {
        if (change.startBegan()) {
            // When readygate learned of it (a start the log began is dated by vLLM's clock, which may be off).
            loop = loop.started(change.cause().at());
        }
        follow(timeline.next(change));
    }

    @EventListener
    public synchronized void onProbeReport(ProbeReport report) {
        follow(timeline.next(report));
    }

    private void follow(RestartTimeline.Step step) {
        timeline = step.timeline();
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
            case PRELOAD_HIT, SNAPSHOT_RESTORE -> Trust.UNTRUSTED;
            case UNKNOWN -> Trust.UNKNOWN;
        };
    }

    /** The start in progress: its phases so far, or empty when none. */
    public Map<Phase, Instant> currentPhases() {
        return timeline().phases();
    }

    /**
     * Whether {@code loop-starts} starts happened within {@code loop-window}: starts that served and starts that died
     * before serving alike.
     */
    public synchronized boolean restartLoop() {
        return loop.looping(clock.instant());
    }

    private synchronized RestartTimeline timeline() {
        return timeline;
    }
}
