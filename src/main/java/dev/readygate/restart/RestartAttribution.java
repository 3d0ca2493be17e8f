package dev.readygate.restart;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Decides an engine start's restart path from its evidence, and says why, in a pure function. In order of strength:
 * a fallback warning (the cache was asked for and not used) is {@code preload_fallback}; a {@code Mapped N tensors}
 * line is {@code preload_hit}; a {@code release.json} written for this start, or counters already non-zero at the
 * first scrape with no weight loading logged, is {@code snapshot_restore}; weights loaded from disk is {@code cold};
 * anything else is {@code unknown}.
 */
public final class RestartAttribution {

    private RestartAttribution() {}

    /**
     * The verdict.
     *
     * @param path the restart path
     * @param evidence what it was concluded from (and what was missing), one line each
     * @param fallbackReason vLLM's fallback reason, for {@code preload_fallback}
     */
    public record Attribution(
            RestartPath path,
            List<String> evidence,
            @Nullable String fallbackReason) {

        public Attribution {
            evidence = List.copyOf(evidence);
        }
    }

    public static Attribution attribute(StartEvidence e) {
        List<String> evidence = new ArrayList<>();
        RestartPath path = path(e, evidence);
        daemon(e, evidence);
        if (!e.engineLogConfigured()) {
            evidence.add("no engine log configured (readygate.evidence.engine-log): log lines not considered");
        }
        return new Attribution(path, evidence, path == RestartPath.PRELOAD_FALLBACK ? e.cacheFallbackReason() : null);
    }

    private static RestartPath path(StartEvidence e, List<String> evidence) {
        if (e.cacheFallbackReason() != null) {
            evidence.add("log: Weight cache unusable (" + e.cacheFallbackReason() + "); falling back to disk loading");
            loadedFromDisk(e, evidence);
            return RestartPath.PRELOAD_FALLBACK;
        }
        if (e.mappedTensors() != null) {
            evidence.add("log: Mapped " + e.mappedTensors() + " tensors from the weight cache daemon ("
                    + (e.mappedMode() == null ? "?" : e.mappedMode()) + " mode)");
            if (e.loadingWeightsSeconds() == null && e.engineLogConfigured()) {
                evidence.add("log: no 'Loading weights took' line: nothing read from disk");
            }
            return RestartPath.PRELOAD_HIT;
        }
        if (e.snapshotReleasedAt() != null) {
            evidence.add("snapshot: release.json released this start at " + e.snapshotReleasedAt());
            counters(e, evidence);
            noInitLines(e, evidence);
            return RestartPath.SNAPSHOT_RESTORE;
        }
        if (e.requestsAtFirstScrape() != null
                && e.requestsAtFirstScrape() > 0
                && e.loadingWeightsSeconds() == null
                && !e.engineInitLogged()) {
            counters(e, evidence);
            noInitLines(e, evidence);
            return RestartPath.SNAPSHOT_RESTORE;
        }
        if (e.loadingWeightsSeconds() != null) {
            loadedFromDisk(e, evidence);
            counters(e, evidence);
            return RestartPath.COLD;
        }
        missing(e, evidence);
        return RestartPath.UNKNOWN;
    }

    /** Why the path is unknown: each source readygate looked at, and what it lacked. */
    private static void missing(StartEvidence e, List<String> evidence) {
        if (e.engineLogConfigured() && e.headerLogged()) {
            evidence.add("log: start-up header seen but neither weight loading nor a cache hit");
        } else if (e.engineLogConfigured()) {
            evidence.add("log: no vLLM start-up header, 'Loading weights took' or 'Mapped N tensors' line for this"
                    + " start (not vLLM's log, or nothing written for it yet)");
        }
        if (e.requestsAtFirstScrape() == null) {
            evidence.add("metrics: no vllm:request_success_total at the first scrape, so a snapshot restore cannot be"
                    + " told by its counters");
        } else {
            counters(e, evidence);
        }
        evidence.add("snapshot: no release.json written for this start (or no readygate.evidence.snapshot-dir)");
        if (e.daemonHealthy() == null && e.daemonSockets() < 0 && e.daemonReadyAt() == null) {
            evidence.add("daemon: no preload daemon configured (readygate.evidence.daemon-health-url,"
                    + " daemon-socket-dir, daemon-log)");
        }
    }

    private static void loadedFromDisk(StartEvidence e, List<String> evidence) {
        if (e.loadingWeightsSeconds() != null) {
            evidence.add(String.format(
                    Locale.ROOT, "log: Loading weights took %.2f seconds (read from disk)", e.loadingWeightsSeconds()));
        }
    }

    private static void counters(StartEvidence e, List<String> evidence) {
        Double requests = e.requestsAtFirstScrape();
        if (requests != null && requests > 0) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "metrics: vllm:request_success_total was %.0f at the first "
                            + "scrape (counters restored from a snapshot image)",
                    requests));
        } else if (requests != null) {
            evidence.add("metrics: counters started at zero");
        }
    }

    private static void noInitLines(StartEvidence e, List<String> evidence) {
        if (e.engineLogConfigured() && e.loadingWeightsSeconds() == null && !e.engineInitLogged()) {
            evidence.add("log: no weight loading or engine init lines for this start");
        }
    }

    private static void daemon(StartEvidence e, List<String> evidence) {
        if (e.daemonHealthy() != null) {
            evidence.add("daemon: /health " + (e.daemonHealthy() ? "200 (serving)" : "not serving"));
        }
        if (e.daemonSockets() >= 0) {
            evidence.add("daemon: " + e.daemonSockets() + " weight-cache socket(s) in the socket directory");
        }
        if (e.daemonReadyAt() != null) {
            evidence.add("daemon log: Weight cache daemon READY at " + e.daemonReadyAt());
        }
    }
}
