package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogEvent;
import dev.readygate.evidence.LogFindings;
import dev.readygate.evidence.LogTimeZone;
import dev.readygate.readiness.StartSource;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RestartAttributionTests {

    static final Instant T = Instant.parse("2026-11-30T12:05:41Z");

    static StartEvidence evidence(
            Double loading, Integer mapped, String fallback, boolean init, Instant released, Double requests) {
        List<LogEvent> events = new ArrayList<>();
        events.add(new LogEvent.ServerVersion(null, null, null, "0.31.0"));
        if (loading != null) {
            events.add(new LogEvent.LoadingWeights(null, null, null, loading));
        }
        if (mapped != null) {
            events.add(new LogEvent.MappedFromCache(null, null, null, mapped, "zero_copy"));
        }
        if (fallback != null) {
            events.add(new LogEvent.CacheFallback(null, null, null, fallback));
        }
        if (init) {
            events.add(new LogEvent.InitEngine(null, null, null, 25.0, null));
        }
        return new StartEvidence(
                LogFindings.of(events), requests, new EvidenceSources.Reading(released, true, 1, T.minusSeconds(60)));
    }

    @Test
    void attributeWhenWeightsWereLoadedFromDiskIsCold() {
        RestartAttribution.Attribution a = RestartAttribution.attribute(evidence(2.7, null, null, true, null, 0.0));
        assertThat(a.path()).isEqualTo(RestartPath.COLD);
        assertThat(a.evidence())
                .contains(
                        "log: Loading weights took 2.70 seconds (read from disk)", "metrics: counters started at zero");
        assertThat(a.fallbackReason()).isNull();
    }

    @Test
    void attributeWhenTensorsWereMappedIsAPreloadHit() {
        RestartAttribution.Attribution a = RestartAttribution.attribute(evidence(null, 339, null, true, null, 0.0));
        assertThat(a.path()).isEqualTo(RestartPath.PRELOAD_HIT);
        assertThat(a.evidence())
                .contains(
                        "log: Mapped 339 tensors from the weight cache daemon (zero_copy mode)",
                        "log: no 'Loading weights took' line: nothing read from disk",
                        "daemon: /health 200 (serving)",
                        "daemon log: Weight cache daemon READY at 2026-11-30T12:04:41Z");
    }

    @Test
    void attributeWhenTheCacheWasUnusableIsAFallbackWithItsReason() {
        RestartAttribution.Attribution a = RestartAttribution.attribute(
                evidence(2.5, null, "WeightCacheKey mismatch on fields: ['checkpoint']", true, null, 0.0));
        assertThat(a.path()).isEqualTo(RestartPath.PRELOAD_FALLBACK);
        assertThat(a.fallbackReason()).isEqualTo("WeightCacheKey mismatch on fields: ['checkpoint']");
    }

    @Test
    void attributeWhenReleaseJsonWasWrittenForThisStartIsASnapshotRestore() {
        RestartAttribution.Attribution a = RestartAttribution.attribute(evidence(null, null, null, false, T, 3.0));
        assertThat(a.path()).isEqualTo(RestartPath.SNAPSHOT_RESTORE);
        assertThat(a.evidence())
                .contains(
                        "snapshot: release.json released this start at 2026-11-30T12:05:41Z",
                        "log: no weight loading or engine init lines for this start");
    }

    @Test
    void attributeWhenCountersAreNonZeroAtFirstScrapeWithoutLoadingIsASnapshotRestore() {
        RestartAttribution.Attribution a = RestartAttribution.attribute(evidence(null, null, null, false, null, 3.0));
        assertThat(a.path()).isEqualTo(RestartPath.SNAPSHOT_RESTORE);
        assertThat(a.evidence()).anyMatch(line -> line.contains("was 3 at the first scrape"));
    }

    @Test
    void attributeWithoutEvidenceIsUnknownAndSaysWhatIsMissing() {
        RestartAttribution.Attribution a = RestartAttribution.attribute(StartEvidence.none());
        assertThat(a.path()).isEqualTo(RestartPath.UNKNOWN);
        assertThat(a.evidence()).anyMatch(line -> line.startsWith("no engine log configured"));
    }

    /** The same evidence, of a start readygate did not see begin. */
    static StartEvidence firstSeen(StartEvidence e, RestartRecord recordedBefore) {
        return new StartEvidence(e.log(), e.requestsAtFirstScrape(), e.sources(), true, recordedBefore, null);
    }

    static RestartRecord recorded(String id, RestartPath path, boolean firstSeen) {
        return recorded(id, T.minusSeconds(600), path, firstSeen);
    }

    static RestartRecord recorded(String id, Instant engineStart, RestartPath path, boolean firstSeen) {
        return TestRecords.record(id)
                .engineStart(engineStart)
                .engineStartSource(StartSource.PROCESS_START_TIME)
                .firstSeen(firstSeen)
                .path(path)
                .outcome(Outcome.READY)
                .probeConfigHash("hash")
                .readygateVersion("dev")
                .build();
    }

    @Test
    void attributeWhenFirstSeenWithNonZeroCountersIsUnknownNotASnapshotRestore() {
        // readygate started beside an engine that had served 41 requests: no engine log, no release.json.
        StartEvidence e = new StartEvidence(
                LogFindings.none(), 41.0, new EvidenceSources.Reading(null, null, -1, null), true, null, null);
        RestartAttribution.Attribution a = RestartAttribution.attribute(e);
        assertThat(a.path()).isEqualTo(RestartPath.UNKNOWN);
        assertThat(a.evidence())
                .anyMatch(line -> line.startsWith("first seen: readygate did not see this start begin"))
                .anyMatch(line -> line.contains("was 41 at the first scrape: requests served before readygate looked"))
                .noneMatch(line -> line.contains("restored from a snapshot"));
    }

    @Test
    void attributeWhenFirstSeenTakesItsOwnLogAndReleaseJsonAsProof() {
        assertThat(RestartAttribution.attribute(firstSeen(evidence(2.7, null, null, true, null, 41.0), null))
                        .path())
                .isEqualTo(RestartPath.COLD);
        assertThat(RestartAttribution.attribute(firstSeen(evidence(null, 339, null, true, null, 41.0), null))
                        .path())
                .isEqualTo(RestartPath.PRELOAD_HIT);
        assertThat(RestartAttribution.attribute(firstSeen(evidence(null, null, null, false, T, 41.0), null))
                        .path())
                .isEqualTo(RestartPath.SNAPSHOT_RESTORE);
        assertThat(RestartAttribution.attribute(firstSeen(evidence(null, null, null, false, null, 41.0), null))
                        .path())
                .isEqualTo(RestartPath.UNKNOWN);
    }

    @Test
    void attributeWhenFirstSeenTakesThePathAnEarlierReadygateRecordedWhenItSawTheStartBegin() {
        RestartAttribution.Attribution a = RestartAttribution.attribute(firstSeen(
                new StartEvidence(LogFindings.none(), 41.0, EvidenceSources.Reading.none()),
                recorded("earlier", RestartPath.PRELOAD_HIT, false)));
        assertThat(a.path()).isEqualTo(RestartPath.PRELOAD_HIT);
        assertThat(a.evidence())
                .anyMatch(line -> line.startsWith("history: an earlier readygate saw this engine start begin")
                        && line.contains("recorded it as preload_hit (record earlier)"));
    }

    @Test
    void evidenceOfAFirstSeenStartSetsAsideLogLinesOlderThanItsProcessAndFindsItsEarlierRecord() {
        Instant processStart = T;
        LogFindings earlierProcess = LogFindings.of(List.of(
                new LogEvent.ServerVersion(T.minusSeconds(300), "APIServer", 1, "0.31.0"),
                new LogEvent.LoadingWeights(T.minusSeconds(290), "EngineCore_DP0", 2, 2.7)));
        LogFindings thisProcess = LogFindings.of(List.of(
                new LogEvent.ServerVersion(T.minusSeconds(1), "APIServer", 1, "0.31.0"),
                new LogEvent.LoadingWeights(T.plusSeconds(10), "EngineCore_DP0", 2, 2.7)));
        RestartRecord same = recorded("earlier", processStart, RestartPath.COLD, false);
        List<RestartRecord> history = List.of(recorded("other", RestartPath.SNAPSHOT_RESTORE, false), same);

        StartEvidence restored =
                StartEvidence.of(true, processStart, earlierProcess, 3.0, EvidenceSources.Reading.none(), history);
        assertThat(restored.log().loadingWeightsSeconds()).isNull();
        assertThat(restored.log().configured()).isTrue();
        assertThat(restored.logNotThisStart()).contains("an earlier process's, set aside");
        assertThat(restored.recordedBefore()).isSameAs(same);

        StartEvidence own =
                StartEvidence.of(true, processStart, thisProcess, 3.0, EvidenceSources.Reading.none(), history);
        assertThat(own.log()).isEqualTo(thisProcess);
        assertThat(own.logNotThisStart()).isNull();

        // A start readygate saw begin keeps its window as the log evidence cut it, and its counters count.
        StartEvidence seen =
                StartEvidence.of(false, processStart, earlierProcess, 3.0, EvidenceSources.Reading.none(), history);
        assertThat(seen.firstSeen()).isFalse();
        assertThat(seen.recordedBefore()).isNull();
        assertThat(seen.log()).isEqualTo(earlierProcess);
    }

    @Test
    void firstSeenStartsLinesWholeHoursBeforeItsProcessAreItsOwnInTheEnginesZoneNotAnEarlierProcesss() {
        // vLLM writes local time: in UTC-07:00 the start's first line, read as UTC, is 7 hours before the process
        // start.
        Instant processStart = T;
        LogFindings local = LogFindings.of(List.of(
                        new LogEvent.ServerVersion(T.minusSeconds(7 * 3600 - 4), "APIServer", 1, "0.31.0"),
                        new LogEvent.LoadingWeights(T.minusSeconds(7 * 3600 - 30), "EngineCore", 2, 2.7)))
                .inZone(LogTimeZone.ASSUMED_UTC);

        StartEvidence own = StartEvidence.of(true, processStart, local, 3.0, EvidenceSources.Reading.none(), List.of());

        assertThat(own.logNotThisStart()).isNull();
        assertThat(own.log().loadingWeightsSeconds()).isEqualTo(2.7);
        assertThat(own.log().firstLineAt()).isEqualTo(T.plusSeconds(4));
        RestartAttribution.Attribution a = RestartAttribution.attribute(own);
        assertThat(a.path()).isEqualTo(RestartPath.COLD);
        assertThat(a.evidence())
                .contains("log: vLLM's log times are UTC-07:00 (learned from the start's first line against the"
                        + " engine's process start time)");

        // Lines from 7 hours and 5 minutes before: not whole quarter hours from this process, an earlier one's.
        LogFindings earlier = LogFindings.of(
                        List.of(new LogEvent.ServerVersion(T.minusSeconds(7 * 3600 + 300), "APIServer", 1, "0.31.0")))
                .inZone(LogTimeZone.ASSUMED_UTC);
        assertThat(StartEvidence.of(true, processStart, earlier, 3.0, EvidenceSources.Reading.none(), List.of())
                        .logNotThisStart())
                .contains("an earlier process's, set aside");
    }

    @Test
    void attributeWhenTheLogHasNoVllmLinesNamesEveryMissingSource() {
        // llama-server's log is configured as the engine log: none of vLLM's lines, no vllm:* counters, no daemon.
        StartEvidence llamaServer = new StartEvidence(LogFindings.of(List.of()), null, EvidenceSources.Reading.none());

        RestartAttribution.Attribution a = RestartAttribution.attribute(llamaServer);

        assertThat(a.path()).isEqualTo(RestartPath.UNKNOWN);
        assertThat(a.evidence())
                .anyMatch(line -> line.startsWith("log: no vLLM start-up header"))
                .anyMatch(line -> line.startsWith("metrics: no vllm:request_success_total"))
                .anyMatch(line -> line.startsWith("snapshot: no release.json"))
                .anyMatch(line -> line.startsWith("daemon: no preload daemon configured"));
    }

    @Test
    void fallbackWinsOverAnEarlierCacheLine() {
        assertThat(RestartAttribution.attribute(evidence(2.0, 339, "Weight cache IPC loading failed", true, null, 0.0))
                        .path())
                .isEqualTo(RestartPath.PRELOAD_FALLBACK);
    }
}
