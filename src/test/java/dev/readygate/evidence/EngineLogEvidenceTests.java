package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import dev.readygate.readiness.StartSource;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Schedulers;

/** Which log lines belong to which engine start, as the engine goes away and comes back. */
class EngineLogEvidenceTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    @TempDir
    Path dir;

    EngineLogEvidence evidence(Instant now, Duration lag) {
        return new EngineLogEvidence(
                new LogTail(
                        dir.resolve("engine.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                new VllmLogParser(Clock.fixed(now, ZoneOffset.UTC)),
                Clock.fixed(now, ZoneOffset.UTC),
                lag);
    }

    static LogEvent.CacheFallback fallback(Instant at) {
        return new LogEvent.CacheFallback(at, "EngineCore_DP0", 4243, "daemon unavailable");
    }

    static final EngineStart S1 = new EngineStart("s1", T0, StartSource.FIRST_OBSERVED, true);
    static final EngineStart S2 = new EngineStart("s2", T0.plusSeconds(2), StartSource.PROCESS_START_TIME, false);

    static EngineStateChanged wentAway(EngineStart ended) {
        return new EngineStateChanged(
                new EngineState.Ready(T0, "m"),
                new EngineState.Down(T0.plusSeconds(1), Reason.ENGINE_DOWN, "refused"),
                new Observation.Unreachable(T0.plusSeconds(1), Reason.ENGINE_DOWN, "refused"),
                ended,
                null);
    }

    static EngineStateChanged verified(EngineStart start, Instant at) {
        return new EngineStateChanged(
                new EngineState.ModelListed(T0, "m", Reason.NOT_VERIFIED),
                new EngineState.Ready(at, "m"),
                new Observation.Verified(at, "ok"),
                start,
                start);
    }

    static EngineStateChanged restarted(EngineStart ended, EngineStart begun) {
        return new EngineStateChanged(
                new EngineState.Ready(T0, "m"),
                new EngineState.Healthy(
                        T0.plusSeconds(3), Reason.ENGINE_RESTARTED, "process_start_time_seconds changed"),
                new Observation.Restarted(T0.plusSeconds(3), "process_start_time_seconds changed", begun.since()),
                ended,
                begun);
    }

    @Test
    void theEngineGoingAwayKeepsLinesReadWithinTheLagAsTheNextStarts() {
        EngineLogEvidence log = evidence(T0.plusMillis(1000), Duration.ofMillis(700));
        log.accept(fallback(T0), T0.plusMillis(500));
        log.onEngineStateChanged(wentAway(S1));
        assertThat(log.current().cacheFallbackReason()).isEqualTo("daemon unavailable");
    }

    @Test
    void readygatesFirstLookFindingNothingListeningKeepsWhatTheLoadingEngineLoggedSoFar() {
        // readygate starts while the engine loads: its header was read before readygate first saw the port refused.
        EngineLogEvidence log = evidence(T0.plusSeconds(5), Duration.ofMillis(700));
        log.accept(
                new LogEvent.NonDefaultArgs(T0, "APIServer", 4242, "{'model': 'm', 'revision': 'r1'}"),
                T0.plusMillis(100));
        log.onEngineStateChanged(new EngineStateChanged(
                new EngineState.Starting(T0),
                new EngineState.Down(T0.plusSeconds(5), Reason.ENGINE_DOWN, "refused"),
                new Observation.Unreachable(T0.plusSeconds(5), Reason.ENGINE_DOWN, "refused")));

        assertThat(log.current().engineArgs()).isEqualTo("{'model': 'm', 'revision': 'r1'}");
    }

    @Test
    void theEngineGoingAwayDropsLinesReadBeforeThePreviousStartWasVerified() {
        EngineLogEvidence log = evidence(T0.plusMillis(1000), Duration.ofMillis(700));
        log.accept(fallback(T0), T0.plusMillis(500));
        log.onEngineStateChanged(verified(S1, T0.plusMillis(600)));
        log.onEngineStateChanged(wentAway(S1));
        assertThat(log.current().cacheFallbackReason()).isNull();
    }

    @Test
    void anEndedStartKeepsItsFindingsAsTheyStoodWhenItEnded() {
        EngineLogEvidence log = evidence(T0.plusSeconds(10), Duration.ofMillis(700));
        log.accept(fallback(T0), T0.plusMillis(500));
        log.onEngineStateChanged(wentAway(S1));
        log.accept(new LogEvent.LoadingWeights(T0.plusSeconds(9), "EngineCore_DP0", 4300, 12.5), T0.plusSeconds(9));

        assertThat(log.findings("s1").cacheFallbackReason()).isEqualTo("daemon unavailable");
        assertThat(log.findings("s1").loadingWeightsSeconds()).isNull();
        assertThat(log.findings("s2").loadingWeightsSeconds()).isEqualTo(12.5);
    }

    /**
     * The next process's header can be read before readygate sees the engine go (a latched failure is checked every
     * not-ready-interval): it closes the window, and the start that ends is the one whose window it closed. Its
     * findings used to be the new window's (a header alone), which turned the demo's cache hit with wrong weights
     * into {@code unknown}, written when the start ended (seen in the demo scenario's test).
     */
    @Test
    void aStartWhoseWindowTheNextHeaderClosedKeepsItsFindingsWhenItEnds() {
        EngineLogEvidence log = evidence(T0.plusSeconds(10), Duration.ofMillis(700));
        log.accept(new LogEvent.ServerVersion(T0, "APIServer", 4242, "0.31.0"), T0);
        log.accept(new LogEvent.MappedFromCache(T0, "EngineCore_DP0", 4243, 339, "zero_copy"), T0.plusMillis(300));
        log.accept(new LogEvent.ServerVersion(T0.plusSeconds(9), "APIServer", 4252, "0.31.0"), T0.plusMillis(9500));
        log.onEngineStateChanged(wentAway(S1));

        assertThat(log.findings("s1").mappedTensors()).isEqualTo(339);
        assertThat(log.findings("s2").mappedTensors()).isNull();
        assertThat(log.findings("s2").header()).isTrue();
    }

    @Test
    void aRestartNobodySawDropsLinesReadBeforeTheNewProcessStarted() {
        EngineLogEvidence log = evidence(T0.plusSeconds(10), Duration.ofMillis(700));
        log.accept(fallback(T0), T0.plusSeconds(1));
        log.accept(new LogEvent.LoadingWeights(T0.plusSeconds(3), "EngineCore_DP0", 4300, 12.5), T0.plusSeconds(3));
        log.onEngineStateChanged(restarted(S1, S2));

        assertThat(log.findings("s1").cacheFallbackReason()).isEqualTo("daemon unavailable");
        assertThat(log.findings("s2").cacheFallbackReason()).isNull();
        assertThat(log.findings("s2").loadingWeightsSeconds()).isEqualTo(12.5);
    }
}
