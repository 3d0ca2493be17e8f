package dev.readygate.restart;

import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineStateChanged;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/** Feeds engine state changes to the restart tracker. */
@Component
class RestartEvents {

    private final RestartTracker tracker;

    RestartEvents(RestartTracker tracker) {
        this.tracker = tracker;
    }

    @EventListener
    void onEngineStateChanged(EngineStateChanged change) {
        tracker.onEngineStateChanged(change);
    }

    @EventListener
    void onProbeReport(ProbeReport report) {
        tracker.probed(report);
    }
}
