package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogEvent;
import dev.readygate.evidence.LogFindings;
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
            events.add(new LogEvent.InitEngine(null, null, null, 25.0));
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
