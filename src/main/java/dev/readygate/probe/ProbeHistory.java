package dev.readygate.probe;

import java.util.EnumMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The last report and the last failure of each probe ({@link ProbeKind}: the two heavy probes and the generation
 * check), and why the last due verification was skipped, for {@code /status}. Thread-safe.
 */
public final class ProbeHistory {

    private final Map<ProbeKind, ProbeReport> last = new EnumMap<>(ProbeKind.class);
    private final Map<ProbeKind, ProbeReport> lastFailure = new EnumMap<>(ProbeKind.class);
    private @Nullable String skipped;

    synchronized void record(ProbeReport report) {
        last.put(report.kind(), report);
        if (report.outcome() == ProbeReport.Outcome.FAILED) {
            lastFailure.put(report.kind(), report);
        }
    }

    synchronized void skipped(String why) {
        skipped = why;
    }

    /** A due verification ran: why an earlier one was skipped is past. */
    synchronized void ran() {
        skipped = null;
    }

    public synchronized @Nullable ProbeReport last(ProbeKind kind) {
        return last.get(kind);
    }

    public synchronized @Nullable ProbeReport lastFailure(ProbeKind kind) {
        return lastFailure.get(kind);
    }

    /**
     * Why the last due heavy probe did not run (suspended, rate-limited), or null once a verification ran after it (or
     * none was skipped): never a skip that is no longer true.
     */
    public synchronized @Nullable String lastSkipped() {
        return skipped;
    }
}
