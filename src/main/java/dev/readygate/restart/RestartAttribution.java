package dev.readygate.restart;

import dev.readygate.evidence.DaemonReadyFile;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogFindings;
import dev.readygate.evidence.LogTimeZone;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Decides an engine start's restart path from its evidence, and says why, in a pure function. In order of strength:
 * a fallback warning (the cache was asked for and not used) is {@code preload_fallback}; a {@code Mapped N tensors}
 * line is {@code preload_hit}; a {@code release.json} written for this start, or counters already non-zero at the
 * first scrape with no weight loading logged, is {@code snapshot_restore}; weights loaded from disk is {@code cold},
 * and so is an engine initialized in its own process without any weight-cache line (a loader that logs no {@code
 * Loading weights took}, such as {@code runai_streamer} or {@code tensorizer}: {@code Model loading took} or {@code
 * init engine} instead); anything else is {@code unknown}.
 *
 * <p>A start readygate did not see begin (it found the engine already answering) is not taken for a restart: its
 * counters at the first scrape count the requests it served before readygate looked, so they prove nothing; only its
 * own log lines, a {@code release.json} written for it, or the record of an earlier readygate that saw it begin say
 * its path, and without them it is {@code unknown}.
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
        if (e.firstSeen()) {
            evidence.add("first seen: readygate did not see this start begin (the engine already answered when"
                    + " readygate started), so it is kept out of readiness latency and per-path comparisons");
        }
        if (e.logNotThisStart() != null) {
            evidence.add(e.logNotThisStart());
        }
        RestartPath path = path(e, evidence);
        beyondWeights(e.log(), evidence);
        daemon(e.sources(), evidence);
        if (!e.engineLogConfigured()) {
            evidence.add("no engine log configured (readygate.evidence.engine-log): log lines not considered");
        }
        if (e.log().unreadable() != null) {
            evidence.add("log: " + e.log().unreadable());
        }
        if (e.log().otherEngine() != null) {
            evidence.add("log: " + e.log().otherEngine());
        }
        LogTimeZone zone = e.log().timeZone();
        if (zone != null && e.log().firstLineAt() != null && !(zone.known() && zone.utc())) {
            // vLLM writes local time without a zone: never read as UTC silently.
            evidence.add("log: " + zone.describe());
        }
        return new Attribution(
                path, evidence, path == RestartPath.PRELOAD_FALLBACK ? e.log().cacheFallbackReason() : null);
    }

    private static RestartPath path(StartEvidence e, List<String> evidence) {
        LogFindings log = e.log();
        EvidenceSources.Reading sources = e.sources();
        if (log.cacheFallbackReason() != null) {
            evidence.add(
                    "log: Weight cache unusable (" + log.cacheFallbackReason() + "); falling back to disk loading");
            loadedFromDisk(log, evidence);
            return RestartPath.PRELOAD_FALLBACK;
        }
        if (log.mappedTensors() != null) {
            evidence.add("log: Mapped " + log.mappedTensors() + " tensors from the weight cache daemon ("
                    + (log.mappedMode() == null ? "?" : log.mappedMode()) + " mode)");
            if (log.loadingWeightsSeconds() == null && e.engineLogConfigured()) {
                evidence.add("log: no 'Loading weights took' line: nothing read from disk");
            }
            return RestartPath.PRELOAD_HIT;
        }
        if (sources.snapshotReleasedAt() != null) {
            evidence.add("snapshot: release.json released this start at " + sources.snapshotReleasedAt());
            counters(e, evidence);
            noInitLines(e, evidence);
            return RestartPath.SNAPSHOT_RESTORE;
        }
        if (!e.firstSeen()
                && e.requestsAtFirstScrape() != null
                && e.requestsAtFirstScrape() > 0
                && log.loadingWeightsSeconds() == null
                && !e.engineInitLogged()) {
            counters(e, evidence);
            noInitLines(e, evidence);
            return RestartPath.SNAPSHOT_RESTORE;
        }
        if (log.loadingWeightsSeconds() != null) {
            loadedFromDisk(log, evidence);
            counters(e, evidence);
            return RestartPath.COLD;
        }
        if (initializedWithoutCache(log)) {
            initializedHere(log, evidence);
            counters(e, evidence);
            return RestartPath.COLD;
        }
        RestartRecord before = e.recordedBefore();
        if (before != null && before.pathEvidence().path() != RestartPath.UNKNOWN) {
            evidence.add("history: an earlier readygate saw this engine start begin (process started "
                    + before.when().engineStart() + ") and recorded it as "
                    + before.pathEvidence().path().value() + " (record "
                    + before.id() + ")");
            counters(e, evidence);
            return before.pathEvidence().path();
        }
        missing(e, evidence);
        return RestartPath.UNKNOWN;
    }

    /** Why the path is unknown: each source readygate looked at, and what it lacked. */
    private static void missing(StartEvidence e, List<String> evidence) {
        EvidenceSources.Reading sources = e.sources();
        if (e.engineLogConfigured() && e.log().header()) {
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
        if (sources.daemonHealthy() == null && sources.daemonSockets() < 0 && sources.daemonReadyAt() == null) {
            evidence.add("daemon: no preload daemon configured (readygate.evidence.daemon-health-url,"
                    + " daemon-socket-dir, daemon-log)");
        }
    }

    /**
     * The engine loaded its model and initialized in its own process (it logged {@code Model loading took} or {@code
     * init engine}), was not told to use the weight cache ({@code load_format} is not {@code ipc_cache}) and logged no
     * weight-cache line: weights from its own loader, whichever.
     */
    private static boolean initializedWithoutCache(LogFindings log) {
        return !log.weightCacheLogged()
                && !"ipc_cache".equals(log.loadFormat())
                && (log.modelLoadingSeconds() != null || log.engineInitSeconds() != null);
    }

    private static void initializedHere(LogFindings log, List<String> evidence) {
        String loader = log.loadFormat();
        evidence.add("log: no 'Loading weights took' line: "
                + (loader == null
                        ? "a loader that logs none (such as --load-format runai_streamer or tensorizer)"
                        : "load_format '" + loader + "' logs none"));
        if (log.modelLoadingSeconds() != null) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "log: Model loading took %.2f GiB memory and %.2f seconds (weights loaded by the engine)",
                    log.modelLoadingGib() == null ? 0.0 : log.modelLoadingGib(),
                    log.modelLoadingSeconds()));
        }
        if (log.engineInitSeconds() != null) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "log: init engine took %.2f seconds (a full engine initialization)",
                    log.engineInitSeconds()));
        }
        evidence.add("log: no weight-cache line (Mapped N tensors, Weights are held outside this process, Weight cache "
                + "unusable): the cache was not used");
    }

    private static void loadedFromDisk(LogFindings log, List<String> evidence) {
        if (log.loadingWeightsSeconds() != null) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "log: Loading weights took %.2f seconds (read from disk)",
                    log.loadingWeightsSeconds()));
        }
        if (log.drafterLoadingWeightsSeconds() != null) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "log: the speculative-decoding drafter's Loading weights took %.2f seconds",
                    log.drafterLoadingWeightsSeconds()));
        }
    }

    /**
     * What the start spent beyond its weights that a restart may save or repeat, whatever its path: a download (a
     * restart that downloads again is not a slow cold start) and whether torch.compile's cache served it.
     */
    private static void beyondWeights(LogFindings log, List<String> evidence) {
        if (log.downloadSeconds() != null) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "log: weights downloaded in %.2f s: a restart that downloads is not a slow cold start",
                    log.downloadSeconds()));
        }
        Boolean hit = log.compileCacheHit();
        if (Boolean.TRUE.equals(hit)) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "log: compiled graphs loaded from the torch.compile cache in %.2f s (compile cache hit)",
                    log.compileCacheLoadSeconds()));
        } else if (Boolean.FALSE.equals(hit)) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "log: graphs compiled in %.2f s (compile cache miss: nothing cached for this model, configuration"
                            + " or vLLM version)",
                    log.compileSeconds()));
        }
    }

    private static void counters(StartEvidence e, List<String> evidence) {
        Double requests = e.requestsAtFirstScrape();
        if (requests != null && requests > 0 && e.firstSeen()) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "metrics: vllm:request_success_total was %.0f at the first scrape: requests served before readygate"
                            + " looked (not proof of a snapshot restore)",
                    requests));
        } else if (requests != null && requests > 0) {
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
        if (e.engineLogConfigured() && e.log().loadingWeightsSeconds() == null && !e.engineInitLogged()) {
            evidence.add("log: no weight loading or engine init lines for this start");
        }
    }

    private static void daemon(EvidenceSources.Reading e, List<String> evidence) {
        if (e.daemonHealthy() != null) {
            evidence.add("daemon: /health " + (e.daemonHealthy() ? "200 (serving)" : "not serving"));
        }
        if (e.daemonSockets() >= 0) {
            evidence.add("daemon: " + e.daemonSockets() + " weight-cache socket(s) in the socket directory");
        }
        if (e.daemonReadyAt() != null) {
            evidence.add("daemon log: Weight cache daemon READY at " + e.daemonReadyAt());
        }
        for (DaemonReadyFile ready : e.daemonReadyFiles()) {
            evidence.add("daemon: " + ready.describe());
        }
    }
}
