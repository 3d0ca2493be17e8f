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
import java.util.ArrayList;
import java.util.List;
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

    // ---- what the log tells readiness of starts

    static final String OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.";

    static LogEvent.ServerVersion banner(Instant at) {
        return new LogEvent.ServerVersion(at, "APIServer", 1, "0.31.0");
    }

    static LogEvent.NonDefaultArgs args(Instant at) {
        return new LogEvent.NonDefaultArgs(at, "APIServer", 1, "{'model': 'Qwen/Qwen3-8B'}");
    }

    static LogEvent.LoadingWeights loaded(Instant at) {
        return new LogEvent.LoadingWeights(at, "EngineCore_DP0", 94, 4.88);
    }

    static LogEvent.ApplicationStartup serving(Instant at) {
        return new LogEvent.ApplicationStartup(at, "APIServer", 1);
    }

    /** Readiness's change as a start begins (from {@code previous}), with no start before. */
    static EngineStateChanged began(EngineStart start, EngineState previous, EngineState current) {
        return new EngineStateChanged(previous, current, new Observation.HealthOk(current.since()), null, start);
    }

    static final EngineState DOWN = new EngineState.Down(T0, Reason.ENGINE_DOWN, "refused");

    /** Evidence whose news goes to {@code told}. */
    EngineLogEvidence telling(Instant now, List<Observation> told) {
        return new EngineLogEvidence(
                new LogTail(
                        dir.resolve("engine.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                new VllmLogParser(Clock.fixed(now, ZoneOffset.UTC)),
                Clock.fixed(now, ZoneOffset.UTC),
                Duration.ofMillis(700),
                told::add);
    }

    /** Evidence whose news goes to {@code told}, past the lines the file held at start. */
    EngineLogEvidence live(Instant now, List<Observation> told) {
        EngineLogEvidence log = telling(now, told);
        log.backlogRead();
        return log;
    }

    @Test
    void headerWhileNoStartIsKnownTellsANewStartDatedByItsLine() {
        List<Observation> told = new ArrayList<>();
        EngineLogEvidence log = live(T0.plusSeconds(10), told);

        Observation news = log.accept(banner(T0.plusSeconds(9)), T0.plusSeconds(10));

        assertThat(news).isInstanceOfSatisfying(Observation.ProcessStarted.class, started -> {
            assertThat(started.at()).isEqualTo(T0.plusSeconds(10));
            assertThat(started.loggedAt()).isEqualTo(T0.plusSeconds(9));
            assertThat(started.follows()).isNull();
            assertThat(started.inProgress()).isFalse();
        });
        // The rest of the header block is the same process.
        assertThat(log.accept(args(T0.plusSeconds(9)), T0.plusSeconds(10))).isNull();
    }

    @Test
    void headerAfterAStartThatServedEndsItKeepingItsFindingsAndTellsTheNext() {
        List<Observation> told = new ArrayList<>();
        EngineLogEvidence log = live(T0.plusSeconds(20), told);
        log.onEngineStateChanged(began(S1, DOWN, new EngineState.Healthy(T0, Reason.MODEL_NOT_LISTED, "")));
        log.accept(banner(T0), T0);
        log.accept(loaded(T0.plusSeconds(5)), T0.plusSeconds(5));
        log.accept(serving(T0.plusSeconds(8)), T0.plusSeconds(8));

        Observation news = log.accept(banner(T0.plusSeconds(19)), T0.plusSeconds(20));
        // Readiness ends s1 and begins s2 (the findings of s1 stay those before the new header).
        log.onEngineStateChanged(new EngineStateChanged(
                new EngineState.Ready(T0.plusSeconds(9), "m"),
                new EngineState.Down(T0.plusSeconds(20), Reason.ENGINE_DOWN, "new process"),
                news,
                S1,
                S2));

        assertThat(news)
                .isInstanceOfSatisfying(
                        Observation.ProcessStarted.class,
                        started -> assertThat(started.follows()).isEqualTo("s1"));
        assertThat(log.findings("s1").loadingWeightsSeconds()).isEqualTo(4.88);
        assertThat(log.findings("s2").header()).isTrue();
        assertThat(log.findings("s2").loadingWeightsSeconds()).isNull();
    }

    @Test
    void headerOfTheStartWhosePortOpenedBeforeTheLineWasReadIsThatStartsOwn() {
        List<Observation> told = new ArrayList<>();
        EngineLogEvidence log = live(T0.plusSeconds(10), told);
        // The probes saw the new engine answer first; the old one's last lines were read before.
        log.accept(new LogEvent.EngineFatal(T0, "APIServer", 1, "VLLM Engine failed, terminating server."), T0);
        log.onEngineStateChanged(
                began(S2, DOWN, new EngineState.Healthy(T0.plusSeconds(9), Reason.MODEL_NOT_LISTED, "")));

        assertThat(log.accept(banner(T0.plusSeconds(9)), T0.plusSeconds(10))).isNull();
        assertThat(log.findings("s2").header()).isTrue();
    }

    @Test
    void headersOfAnEngineCoreOrAnotherApiServerProcessAreTheStartsOwn() {
        List<Observation> told = new ArrayList<>();
        EngineLogEvidence log = live(T0.plusSeconds(60), told);
        log.accept(banner(T0), T0);
        log.onEngineStateChanged(new EngineStateChanged(
                DOWN,
                DOWN,
                new Observation.ProcessStarted(T0, T0, null, false, "header"),
                null,
                new EngineStart("s1", T0, StartSource.LOG, false)));
        log.accept(loaded(T0.plusSeconds(20)), T0.plusSeconds(20));

        // A data-parallel core's late header, and an API server process of --api-server-count 2 (should it log one).
        assertThat(log.accept(new LogEvent.ServerVersion(T0.plusSeconds(35), "EngineCore_DP1", 121, "0.31.0"), T0))
                .isNull();
        assertThat(log.accept(new LogEvent.ServerVersion(T0.plusSeconds(50), "ApiServer_1", 151, "0.31.0"), T0))
                .isNull();
        assertThat(log.findings("s1").loadingWeightsSeconds()).isEqualTo(4.88);
    }

    @Test
    void engineCoreInitializationFailedTellsTheStartFailedWithTheRootExceptionOnce() {
        List<Observation> told = new ArrayList<>();
        EngineLogEvidence log = live(T0.plusSeconds(10), told);
        EngineStart loading = new EngineStart("s1", T0, StartSource.LOG, false);
        log.onEngineStateChanged(new EngineStateChanged(
                DOWN, DOWN, new Observation.ProcessStarted(T0, T0, null, false, "header"), null, loading));
        log.accept(banner(T0), T0);
        log.accept(new LogEvent.CoreStartFailed(T0.plusSeconds(7), "EngineCore_DP0", 94), T0.plusSeconds(7));
        log.accept(new LogEvent.ExceptionRaised(T0.plusSeconds(7), "EngineCore_DP0", 94, OOM), T0.plusSeconds(7));
        String gaveUp =
                "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}";

        Observation news = log.accept(
                new LogEvent.InitializationFailed(T0.plusSeconds(8), "APIServer", 1, gaveUp), T0.plusSeconds(8));

        assertThat(news).isEqualTo(new Observation.StartFailed(T0.plusSeconds(8), "s1", OOM));
        assertThat(log.accept(
                        new LogEvent.InitializationFailed(T0.plusSeconds(8), "APIServer", 1, gaveUp),
                        T0.plusSeconds(8)))
                .isNull();
    }

    @Test
    void linesReadBeforeTheBacklogEndedTellNothingButALoadingStartIsToldOnceTheyWere() {
        List<Observation> told = new ArrayList<>();
        EngineLogEvidence log = telling(T0.plusSeconds(30), told);
        // An earlier start that served, then the one in progress, loading.
        assertThat(log.accept(banner(T0), T0.plusSeconds(30))).isNull();
        log.accept(serving(T0.plusSeconds(5)), T0.plusSeconds(30));
        assertThat(log.accept(banner(T0.plusSeconds(20)), T0.plusSeconds(30))).isNull();
        log.accept(loaded(T0.plusSeconds(25)), T0.plusSeconds(30));

        log.backlogRead();

        assertThat(told)
                .singleElement()
                .isEqualTo(new Observation.ProcessStarted(
                        T0.plusSeconds(30),
                        T0.plusSeconds(20),
                        null,
                        true,
                        "engine log: a new engine process started (its header is dated " + T0.plusSeconds(20)
                                + "); vLLM opens its port once initialized"));
    }

    /**
     * The probes may begin the start in progress before the lines already in the file are read: a header in those
     * lines closes an earlier process's window, not this start's, so the start keeps the last window when it ends.
     */
    @Test
    void aWindowClosedInTheBacklogIsAnEarlierProcesssNotTheStartInProgress() {
        EngineLogEvidence log = telling(T0.plusSeconds(30), new ArrayList<>());
        log.onEngineStateChanged(
                began(S1, new EngineState.Starting(T0), new EngineState.Healthy(T0, Reason.MODEL_NOT_LISTED, "")));
        log.accept(banner(T0), T0.plusSeconds(30));
        log.accept(serving(T0.plusSeconds(5)), T0.plusSeconds(30));
        log.accept(banner(T0.plusSeconds(20)), T0.plusSeconds(30));
        log.accept(loaded(T0.plusSeconds(25)), T0.plusSeconds(30));
        log.backlogRead();

        log.onEngineStateChanged(wentAway(S1));

        assertThat(log.findings("s1").loadingWeightsSeconds()).isEqualTo(4.88);
        assertThat(log.findings("s1").firstLineAt()).isEqualTo(T0.plusSeconds(20));
    }

    /** A start that begins while none is current was not the one a header closed a window of meanwhile. */
    @Test
    void aWindowClosedWhileNoStartWasCurrentIsNotTheNextStarts() {
        EngineLogEvidence log = telling(T0.plusSeconds(30), new ArrayList<>());
        log.accept(banner(T0), T0.plusSeconds(30));
        log.accept(serving(T0.plusSeconds(5)), T0.plusSeconds(30));
        log.accept(banner(T0.plusSeconds(20)), T0.plusSeconds(30));
        log.onEngineStateChanged(began(S1, DOWN, new EngineState.Healthy(T0, Reason.MODEL_NOT_LISTED, "")));
        log.accept(loaded(T0.plusSeconds(25)), T0.plusSeconds(30));

        log.onEngineStateChanged(wentAway(S1));

        assertThat(log.findings("s1").loadingWeightsSeconds()).isEqualTo(4.88);
    }

    @Test
    void backlogThatEndsServingOrFailedTellsNothing() {
        for (LogEvent last : List.of(
                serving(T0.plusSeconds(5)),
                new LogEvent.InitializationFailed(
                        T0.plusSeconds(5), "APIServer", 1, "RuntimeError: Engine core initialization failed."))) {
            List<Observation> told = new ArrayList<>();
            EngineLogEvidence log = telling(T0.plusSeconds(30), told);
            log.accept(banner(T0), T0.plusSeconds(30));
            log.accept(last, T0.plusSeconds(30));
            log.backlogRead();
            assertThat(told).as("after %s", last).isEmpty();
        }
    }
}
