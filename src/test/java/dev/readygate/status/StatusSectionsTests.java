package dev.readygate.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.memory.MemoryAssessment;
import dev.readygate.memory.MemorySignal;
import dev.readygate.probe.MetricsEvidence;
import dev.readygate.restart.Stop;
import dev.readygate.secret.SecretRedaction;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The pure decisions of {@code /status}'s sections, each as a table. */
class StatusSectionsTests {

    final Instant t0 = Instant.parse("2026-12-03T10:00:00Z");

    @ParameterizedTest
    @CsvSource({
        "CLOSED, closed",
        "HALF_OPEN, half-open",
        "OPEN, suspended after repeated failures",
        "FORCED_OPEN, forced-open",
        "DISABLED, disabled",
        "METRICS_ONLY, metrics-only"
    })
    void heavyProbesSayWhetherTheyRunFromTheirCircuitBreaker(CircuitBreaker.State state, String shown) {
        assertThat(ProbesSection.heavyProbes(state)).isEqualTo(shown);
    }

    @Test
    void noReportIsShownAsNull() {
        assertThat(ProbesSection.report(null)).isNull();
    }

    @Test
    void endpointsAndCapabilitiesAreShownAsDescribedWhileMetricsAreNotLost() {
        Map<String, String> endpoints = Map.of("metrics", "usable: reachable");
        Map<String, String> capabilities = Map.of("busyDetection", "yes", "restartDetection", "process start time");

        EngineSection.Seen seen = EngineSection.seen(endpoints, capabilities, null);

        assertThat(seen.endpoints()).isEqualTo(endpoints);
        assertThat(seen.capabilities()).isEqualTo(capabilities);
    }

    @Test
    void lostMetricsAreSaidInTheEndpointAndInWhatReadygateCanSeeFromThem() {
        MetricsEvidence.Loss lost = new MetricsEvidence.Loss(t0, "no vllm:* series");

        EngineSection.Seen seen = EngineSection.seen(
                Map.of("metrics", "usable: reachable", "version", "usable"),
                Map.of("busyDetection", "yes", "restartDetection", "process start time", "other", "kept"),
                lost);

        String since = "lost since 2026-12-03T10:00:00Z: no vllm:* series";
        assertThat(seen.endpoints()).containsExactlyInAnyOrderEntriesOf(Map.of("metrics", since, "version", "usable"));
        assertThat(seen.capabilities())
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        "busyDetection",
                        "no, for now: /metrics " + since,
                        "restartDetection",
                        "nothing from /metrics for now (" + since + "); otherwise process start time",
                        "other",
                        "kept"));
    }

    @Test
    void lostMetricsChangeNothingWhenTheEngineHasNoMetricsEndpoint() {
        Map<String, String> capabilities = Map.of("busyDetection", "no");
        EngineSection.Seen seen =
                EngineSection.seen(Map.of(), capabilities, new MetricsEvidence.Loss(t0, "unreachable"));
        assertThat(seen.endpoints()).isEmpty();
        assertThat(seen.capabilities()).isEqualTo(capabilities);
    }

    @ParameterizedTest
    @CsvSource(
            nullValues = "null",
            value = {
                "false, null, writer",
                "false, pod-a, writer",
                "true, null, 'read_only: another readygate holds the lock'",
                "true, pod-a, 'read_only: another readygate holds the lock (pod-a)'"
            })
    void theStateDirectorysModeSaysWhoHoldsTheLock(boolean readOnly, String holder, String mode) {
        assertThat(StateDirSection.mode(readOnly, holder)).isEqualTo(mode);
    }

    @Test
    void aSignalWithNothingToShowSaysWhatItWaitsFor() {
        Map<String, Object> memory = MemorySection.of(MemoryAssessment.NONE, 4);

        assertThat(memory)
                .containsExactly(
                        entry("signals", List.of()),
                        entry(
                                MemorySignal.LEAK_ACROSS_RESTARTS.value(),
                                "fewer than 4 measured ready cycles with the same configuration and path"),
                        entry(
                                MemorySignal.HELD_AFTER_STOP.value(),
                                "no stop measured yet, or the latest stop was a sleep (its engine lives on)"),
                        entry(
                                MemorySignal.STALE_CACHE.value(),
                                "nothing shows the preload daemon holds another checkpoint than the one served (no"
                                        + " preload hit or fingerprint mismatch since readygate started or the daemon"
                                        + " last changed)"),
                        entry(
                                MemorySignal.KV_CACHE_SHRINKING.value(),
                                "fewer than 2 ready cycles with the same configuration and a known KV cache size"));
    }

    @Test
    void noGpuReadingYet() {
        assertThat(GpuSection.of(null)).containsExactly(entry("state", "not read yet"));
    }

    @Test
    void noStopYetIsSaidBesideWhatNoRestartPathResumes() {
        assertThat(RestartsSection.workLost(null))
                .containsExactly(
                        entry("resumesInFlight", false),
                        entry("statement", RestartsSection.RESUMES_NOTHING),
                        entry("lastStop", null));
    }

    @Test
    void theLatestStopSaysWhatWasInFlight() {
        Stop stop = new Stop(t0, Stop.How.WENT_AWAY, 3.0, null, t0.minusSeconds(1));

        Map<String, Object> workLost = RestartsSection.workLost(new RestartsSection.LastStop("s1", "cold", stop));

        assertThat(workLost.get("lastStop"))
                .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.map(String.class, Object.class))
                .containsExactly(
                        entry("start", "s1"),
                        entry("path", "cold"),
                        entry("at", "2026-12-03T10:00:00Z"),
                        entry("how", "went_away"),
                        entry("requestsRunning", 3.0),
                        entry("requestsWaiting", null),
                        entry("observedAt", "2026-12-03T09:59:59Z"),
                        entry("traffic", null));
    }

    @Test
    void theLatestStopSaysTheGatewaysOwnCountOfItsRequests() {
        Stop stop = new Stop(t0, Stop.How.POD_STOPPED, 4.0, 0.0, t0, new Stop.Traffic(4, 3, 1, 57));

        Map<String, Object> workLost = RestartsSection.workLost(new RestartsSection.LastStop("s1", "cold", stop));

        assertThat(workLost.get("lastStop"))
                .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.map(String.class, Object.class))
                .containsEntry("how", "pod_stopped")
                .extractingByKey("traffic")
                .isEqualTo(Map.of("inFlight", 4, "finished", 3, "cut", 1, "cutTokens", 57L));
    }

    @Test
    void evidenceSourcesNotConfiguredSaySoAndWhatTheyWouldSayIsLeftOut() {
        Map<String, Object> evidence = EvidenceSection.of(evidence(null, null, null), EvidenceSources.Reading.none());

        assertThat(evidence)
                .containsExactly(
                        entry("engineLog", "not configured"),
                        entry("daemonHealthUrl", "not configured"),
                        entry("daemonSocketDir", "not configured"),
                        entry("snapshotDir", "not configured"));
    }

    @Test
    void configuredSourcesSayWhatTheySayNowWithoutSecrets(@TempDir Path dir) throws Exception {
        Path log = java.nio.file.Files.createFile(dir.resolve("daemon.log"));
        Map<String, Object> evidence = EvidenceSection.of(
                evidence(dir, URI.create("http://ops:pw1234@127.0.0.1:8001/health"), log),
                new EvidenceSources.Reading(null, true, 2, t0, null));

        assertThat(evidence)
                .containsEntry("snapshotDir", dir.toString())
                .containsEntry("daemonNow", "serving (/health 200)")
                .containsEntry("daemonSocketsNow", 2)
                .containsEntry("daemonReadyLoggedAt", "2026-12-03T10:00:00Z")
                .containsEntry("snapshotReleasedAt", "never (no release.json)");
        assertThat(evidence.get("daemonHealthUrl").toString()).doesNotContain("pw1234");
    }

    @Test
    void anEngineLogReadygateCannotReadIsANamedGapNotJustItsPath(@TempDir Path dir) {
        ReadygateProperties.Evidence settings = new ReadygateProperties.Evidence(
                null,
                dir.resolve("vllm.log"),
                Duration.ofMillis(250),
                null,
                null,
                null,
                Duration.ofSeconds(1),
                null,
                null);
        String gap =
                "engine log unreadable: 40 lines read since 2026-12-03T10:00:00Z, none in a format readygate reads";

        assertThat(EvidenceSection.of(settings, EvidenceSources.Reading.none(), gap))
                .containsEntry("engineLog", dir.resolve("vllm.log").toString())
                .containsEntry("engineLogNow", gap);
        assertThat(EvidenceSection.of(settings, EvidenceSources.Reading.none(), null))
                .containsEntry("engineLogNow", "read");
    }

    @Test
    void settingsAreShownInKebabCaseWithSecretNamesRedacted() {
        record Settings(String baseUrl, String apiKey, Map<String, String> headers, List<Integer> sizes) {}

        Object shown = ConfigurationSection.of(
                new Settings("http://u:pw5678@engine:8000", "sk-x", Map.of("X-Api-Key", "k1"), List.of(1, 2)));

        assertThat(shown)
                .isEqualTo(Map.of(
                        "base-url",
                        SecretRedaction.redact("http://u:pw5678@engine:8000"),
                        "api-key",
                        SecretRedaction.REDACTED,
                        "headers",
                        Map.of("X-Api-Key", SecretRedaction.REDACTED),
                        "sizes",
                        List.of(1, 2)));
        assertThat(shown.toString()).doesNotContain("pw5678", "sk-x", "k1");
    }

    private static ReadygateProperties.Evidence evidence(Path snapshotDir, URI daemonHealthUrl, Path daemonLog) {
        return new ReadygateProperties.Evidence(
                snapshotDir,
                null,
                Duration.ofMillis(250),
                daemonHealthUrl,
                null,
                daemonLog,
                Duration.ofSeconds(1),
                null,
                null);
    }
}
