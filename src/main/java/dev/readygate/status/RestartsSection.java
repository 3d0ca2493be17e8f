package dev.readygate.status;

import dev.readygate.evidence.EvidenceSources;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.RestartComparison;
import dev.readygate.restart.RestartHistory;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecordView;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.RestartTracker;
import dev.readygate.restart.Stop;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * {@code /status}'s {@code restarts} section: the current start's provisional path and phases, the restart loop, the
 * latest recorded starts (the exports hold them all), their comparison, what the latest stop lost, the snapshot
 * directory ({@link SnapshotSection}) and the restart evidence's sources ({@link EvidenceSection}).
 */
@Component
final class RestartsSection {

    /** What {@code /status} and the docs say of requests in flight when an engine goes away. */
    static final String RESUMES_NOTHING = "No restart path resumes requests in flight: a preload hit maps weights and a"
            + " snapshot restores an initialized engine (weights, KV cache, compiled graphs), never the requests the"
            + " engine was serving when it went away. Clients must retry them; each stop records how many were running"
            + " and waiting at readygate's last look, and with gateway mode on the gateway's own count (traffic): in"
            + " flight at the stop, finished after it, cut, and the tokens the cut ones had streamed.";

    /** How many of the latest starts {@code /status} shows; the exports hold them all. */
    static final int HISTORY_SHOWN = 100;

    /**
     * The latest stop, as {@code /status} shows it: the one place this section reads a record's stop.
     *
     * @param start the id of the start that stopped
     * @param path its restart path
     * @param stop how and when it stopped, and what was in flight
     */
    record LastStop(String start, String path, Stop stop) {

        /** The latest recorded start that has a stop, if any; {@code latestFirst} is the history, latest first. */
        static @Nullable LastStop of(List<RestartRecord> latestFirst) {
            return latestFirst.stream()
                    .filter(record -> record.stop() != null)
                    .findFirst()
                    .map(record -> new LastStop(
                            record.id(), record.pathEvidence().path().value(), record.stop()))
                    .orElse(null);
        }

        Map<String, Object> status() {
            Map<String, Object> last = new LinkedHashMap<>();
            last.put("start", start);
            last.put("path", path);
            last.put("at", stop.at().toString());
            last.put("how", stop.how().value());
            last.put("requestsRunning", stop.requestsRunning());
            last.put("requestsWaiting", stop.requestsWaiting());
            last.put(
                    "observedAt",
                    stop.observedAt() == null ? null : stop.observedAt().toString());
            last.put("traffic", RestartRecordView.statusTraffic(stop.traffic()));
            return last;
        }
    }

    private final EngineStateMachine machine;
    private final RestartTracker restarts;
    private final RestartRecords records;
    private final RestartHistory restartHistory;
    private final SnapshotSection snapshot;
    private final EvidenceSection evidence;

    RestartsSection(
            EngineStateMachine machine,
            RestartTracker restarts,
            RestartRecords records,
            RestartHistory restartHistory,
            SnapshotSection snapshot,
            EvidenceSection evidence) {
        this.machine = machine;
        this.restarts = restarts;
        this.records = records;
        this.restartHistory = restartHistory;
        this.snapshot = snapshot;
        this.evidence = evidence;
    }

    Map<String, Object> of(EvidenceSources.Reading now) {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> current = new LinkedHashMap<>();
        current.put("provisionalPath", restarts.provisionalPath().value());
        Map<String, String> phases = new LinkedHashMap<>();
        restarts.currentPhases().entrySet().stream()
                .sorted(Map.Entry.comparingByValue())
                .forEach(phase ->
                        phases.put(phase.getKey().value(), phase.getValue().toString()));
        current.put("phases", phases);
        out.put("current", current);
        out.put("restartLoop", restarts.restartLoop());
        List<RestartRecord> latest = records.history().reversed();
        EngineStart running = machine.start();
        List<Map<String, Object>> shown = latest.stream()
                .limit(HISTORY_SHOWN)
                .map(record -> new RestartRecordView(record)
                        .status(running != null && running.id().equals(record.id())))
                .toList();
        out.put("history", shown);
        // The whole history is in the exports; this page shows the latest only, and says how many it leaves out.
        long kept = Math.max(restartHistory.count(), latest.size());
        out.put("historyShown", shown.size());
        out.put("historyOmitted", Math.max(0, kept - shown.size()));
        out.put("historyExport", Map.of("json", StatusController.RESTARTS_JSON, "csv", StatusController.RESTARTS_CSV));
        out.put("comparison", comparison());
        out.put("workLost", workLost(LastStop.of(records.history().reversed())));
        out.put("snapshot", snapshot.of(now));
        out.put("evidence", evidence.of(now));
        return out;
    }

    /** Restarts side by side, over the starts kept at hand; the CSV export has the whole history. */
    private Map<String, Object> comparison() {
        List<RestartRecord> kept = records.history();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("over", "the last " + kept.size() + " recorded starts (the CSV export compares the whole history)");
        out.put("csv", StatusController.COMPARISON_CSV);
        out.putAll(RestartComparison.of(kept).status());
        return out;
    }

    /** What no restart path does, and what the latest stop lost. */
    static Map<String, Object> workLost(@Nullable LastStop last) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("resumesInFlight", false);
        out.put("statement", RESUMES_NOTHING);
        out.put("lastStop", last == null ? null : last.status());
        return out;
    }
}
