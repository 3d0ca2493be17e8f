package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.SlotsSample;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.Reason;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What the probe loop runs now, as tables: the cheap check, the pause, and what a cycle starts. */
class DueNowTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");
    static final String MODEL = "m";
    static final ModelCard CARD = new ModelCard(MODEL, "root", 4096, "vllm");

    /**
     * Not-ready 100 ms, down 10 ms, health 200 ms, ready 1 s, heavy 60 s, heavy retry 1 s, light checks every 2 s; a
     * light check waits 5 s on a scrape, 30 s without one.
     */
    static final DueNow.Cadence CADENCE = cadence((before, speed) -> Duration.ofSeconds(before == null ? 30 : 5));

    static final DueNow.Cadence NO_LIGHT_CHECKS = cadence(null);

    /** A light check waits 1 s, less than the light checks' interval. */
    static final DueNow.Cadence SHORT_BUDGET = cadence((before, speed) -> Duration.ofSeconds(1));

    static final DueNow.Loop NOTHING_RUNS = new DueNow.Loop(false, false, false, false, null);
    static final DueNow.Loop HEAVY_RUNS = new DueNow.Loop(true, false, false, false, null);
    static final DueNow.Loop LIGHT_RUNS = new DueNow.Loop(false, true, false, false, null);
    /** The heavy probes started this cycle and still run. */
    static final DueNow.Loop HEAVY_STARTED = new DueNow.Loop(true, false, true, false, null);
    /** The heavy probes started this cycle and ended at once (suspended, or over the token budget). */
    static final DueNow.Loop HEAVY_ENDED_AT_ONCE = new DueNow.Loop(false, false, true, false, null);

    static final DueNow.Loop SUSPENDED = new DueNow.Loop(false, false, false, true, null);

    static DueNow.Cadence cadence(DueNow.@Nullable LightBudget budget) {
        return new DueNow.Cadence(
                Duration.ofMillis(100),
                Duration.ofMillis(10),
                Duration.ofMillis(200),
                Duration.ofSeconds(1),
                Duration.ofSeconds(60),
                Duration.ofSeconds(1),
                Duration.ofSeconds(2),
                budget);
    }

    static Instant t(double seconds) {
        return T0.plusMillis((long) (seconds * 1000));
    }

    static DueNow.Loop suspendedSinceTrialAt(double seconds) {
        return new DueNow.Loop(false, false, false, true, t(seconds));
    }

    // States.

    static final EngineState STARTING = new EngineState.Starting(T0);
    static final EngineState DOWN = new EngineState.Down(T0, Reason.ENGINE_DOWN, "refused");
    static final EngineState RESET = new EngineState.Down(T0, Reason.CONNECTION_RESET, "reset");
    static final EngineState HEALTHY = new EngineState.Healthy(T0, Reason.NOT_VERIFIED, "ok");
    static final EngineState LISTED = new EngineState.ModelListed(T0, MODEL, Reason.NOT_VERIFIED);
    static final EngineState VERIFYING = new EngineState.Verifying(T0, MODEL, 1, Reason.NOT_VERIFIED);
    static final EngineState READY = new EngineState.Ready(T0, MODEL);

    static EngineState failed(boolean latched) {
        return new EngineState.VerificationFailed(T0, MODEL, Reason.TIMED_OUT, "x", latched, 1);
    }

    static EngineState notReady(Reason cause, boolean latched) {
        return new EngineState.NotReady(T0, MODEL, 0, cause, "x", latched);
    }

    static EngineState degraded(Check check) {
        return new EngineState.Degraded(T0, MODEL, check, Reason.TIMED_OUT, "x");
    }

    static EngineState heldUntil(double seconds) {
        return new EngineState.Held(T0, MODEL, t(seconds), "restart loop");
    }

    // Facts: each a change of the facts of a start whose model is listed, applied in order.

    @SafeVarargs
    static EngineFacts facts(UnaryOperator<EngineFacts>... changes) {
        EngineFacts facts = EngineFacts.fresh("s1").withCard(CARD);
        for (UnaryOperator<EngineFacts> change : changes) {
            facts = change.apply(facts);
        }
        return facts;
    }

    static UnaryOperator<EngineFacts> heavyAt(double seconds) {
        return f -> f.withLastHeavy(t(seconds));
    }

    static UnaryOperator<EngineFacts> lightAt(double seconds) {
        return f -> f.withLightCheck(t(seconds));
    }

    /** A scrape with {@code running} requests running, {@code waiting} waiting, {@code successes} succeeded. */
    static UnaryOperator<EngineFacts> scraped(double running, double waiting, double successes) {
        return f -> f.scraped(sample(running, waiting, successes), T0);
    }

    /** The heavy probes ran when {@code successes} requests had succeeded. */
    static UnaryOperator<EngineFacts> successesAtHeavy(double successes) {
        return f -> f.withSuccessesAtLastHeavy(successes);
    }

    static final UnaryOperator<EngineFacts> METRICS_LOST = f -> f.scrapeFailed("timed out", T0);

    static final UnaryOperator<EngineFacts> NO_METRICS =
            f -> f.withCapabilities(f.capabilities().withoutMetrics());

    /** vLLM: an idle connection costs it no thread. */
    static final UnaryOperator<EngineFacts> VLLM = surface(EngineDialect.VLLM, null);

    /** llama-server with one slot: each connection costs it a thread. */
    static final UnaryOperator<EngineFacts> LLAMA = surface(EngineDialect.LLAMA_CPP, 1);

    static UnaryOperator<EngineFacts> surface(EngineDialect dialect, @Nullable Integer slots) {
        EngineSurface surface =
                new EngineSurface(dialect, "test", Map.of(), 4096, "test", "1", "test", Set.of(), List.of(), slots);
        return f -> f.withCapabilities(new EngineCapabilities(
                true,
                true,
                f.capabilities().metrics(),
                surface,
                null,
                EngineCapabilities.Generation.COMPLETIONS,
                null));
    }

    /** {@code /slots} of this cycle: {@code processing} of {@code total} slots taken. */
    static UnaryOperator<EngineFacts> slots(int processing, int total) {
        return f -> f.withSlots(slotsSample(processing, total));
    }

    /** Gateway mode: client requests served whole proved the engine generates up to {@code seconds}. */
    static UnaryOperator<EngineFacts> servedAt(double seconds) {
        return f -> f.withServed(t(seconds));
    }

    static UnaryOperator<EngineFacts> putOffByMetricsAt(double seconds) {
        return f -> f.withLightCheckPutOff(t(seconds), sample(1, 0, 0));
    }

    static UnaryOperator<EngineFacts> putOffBySlotsAt(double seconds) {
        return f -> f.withLightCheckPutOff(t(seconds), slotsSample(1, 1));
    }

    static EngineMetricsSample sample(double running, double waiting, double successes) {
        return new EngineMetricsSample(1000.0, running, waiting, 100.0, 50.0, successes, Map.of());
    }

    static SlotsSample slotsSample(int processing, int total) {
        return new SlotsSample(IntStream.range(0, total)
                .mapToObj(i -> new SlotsSample.Slot(i, i, i < processing, 10))
                .toList());
    }

    // The cheap check.

    static Stream<Arguments> cheapChecks() {
        return Stream.of(
                Arguments.of("ready, never a full check", READY, null, 0.5, DueNow.CheapCheck.FULL),
                Arguments.of("ready, within ready-interval", READY, 0.0, 0.5, DueNow.CheapCheck.HEALTH_ONLY),
                Arguments.of("ready, ready-interval over", READY, 0.0, 1.0, DueNow.CheapCheck.FULL),
                Arguments.of(
                        "degraded (serves), within ready-interval",
                        degraded(Check.HEALTH),
                        0.0,
                        0.5,
                        DueNow.CheapCheck.HEALTH_ONLY),
                Arguments.of("verifying (does not serve)", VERIFYING, 0.0, 0.5, DueNow.CheapCheck.FULL),
                Arguments.of("down", DOWN, 0.0, 0.1, DueNow.CheapCheck.FULL));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cheapChecks")
    void cheapCheckIsFullEveryReadyIntervalOnAnEngineThatServesAndEveryCycleOtherwise(
            String name, EngineState state, @Nullable Double lastFull, double now, DueNow.CheapCheck expected) {
        assertThat(DueNow.cheapCheck(state, lastFull == null ? null : t(lastFull), t(now), CADENCE))
                .isEqualTo(expected);
    }

    // The pause.

    static Stream<Arguments> pauses() {
        return Stream.of(
                Arguments.of("ready: health-interval", READY, null, 200),
                Arguments.of("ready vLLM: health-interval", READY, EngineDialect.VLLM, 200),
                Arguments.of("ready llama.cpp: health-interval", READY, EngineDialect.LLAMA_CPP, 200),
                Arguments.of("ready SGLang (/health generates): ready-interval", READY, EngineDialect.SGLANG, 1000),
                Arguments.of("degraded: health-interval", degraded(Check.GENERATION), null, 200),
                Arguments.of("degraded SGLang: ready-interval", degraded(Check.GENERATION), EngineDialect.SGLANG, 1000),
                Arguments.of("port refused: down-interval", DOWN, null, 10),
                Arguments.of("port refused SGLang: down-interval", DOWN, EngineDialect.SGLANG, 10),
                Arguments.of("connection reset: not-ready-interval", RESET, null, 100),
                Arguments.of("starting: not-ready-interval", STARTING, null, 100),
                Arguments.of("verifying: not-ready-interval", VERIFYING, null, 100),
                Arguments.of("not ready: not-ready-interval", notReady(Reason.TIMED_OUT, false), null, 100));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pauses")
    void pauseFollowsTheStateAndWhatTheEnginesHealthCosts(
            String name, EngineState state, @Nullable EngineDialect dialect, long millis) {
        assertThat(DueNow.pause(state, dialect, CADENCE)).isEqualTo(Duration.ofMillis(millis));
    }

    // What a cycle starts: the heavy probes.

    static Stream<Arguments> heavy() {
        return Stream.of(
                Arguments.of("model listed", LISTED, facts(), 0, NOTHING_RUNS, DueNow.Start.HEAVY),
                Arguments.of(
                        "model listed, card not learned",
                        LISTED,
                        EngineFacts.fresh("s1"),
                        0,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of("starting", STARTING, facts(), 0, NOTHING_RUNS, DueNow.Start.NOTHING),
                Arguments.of("healthy", HEALTHY, facts(), 0, NOTHING_RUNS, DueNow.Start.NOTHING),
                Arguments.of("verifying, just ran", VERIFYING, facts(heavyAt(0)), 0, NOTHING_RUNS, DueNow.Start.HEAVY),
                Arguments.of("verifying, running", VERIFYING, facts(), 0, HEAVY_RUNS, DueNow.Start.NOTHING),
                Arguments.of("verifying, a light check runs", VERIFYING, facts(), 0, LIGHT_RUNS, DueNow.Start.NOTHING),
                Arguments.of(
                        "verifying, started this cycle and ended at once",
                        VERIFYING,
                        facts(),
                        0,
                        HEAVY_ENDED_AT_ONCE,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "failed, within heavy-retry-interval",
                        failed(false),
                        facts(heavyAt(0)),
                        0.5,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "failed, heavy-retry-interval over",
                        failed(false),
                        facts(heavyAt(0)),
                        1,
                        NOTHING_RUNS,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "failed, latched", failed(true), facts(heavyAt(0)), 100, NOTHING_RUNS, DueNow.Start.NOTHING),
                Arguments.of(
                        "not ready, heavy-retry-interval over",
                        notReady(Reason.TIMED_OUT, false),
                        facts(heavyAt(0)),
                        1,
                        NOTHING_RUNS,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "not ready, latched",
                        notReady(Reason.CANARY_MISMATCH, true),
                        facts(heavyAt(0)),
                        100,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "degraded by a verification, heavy-retry-interval over",
                        degraded(Check.VERIFICATION),
                        facts(heavyAt(0), lightAt(1)),
                        1,
                        NOTHING_RUNS,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "degraded by a verification, within heavy-retry-interval",
                        degraded(Check.VERIFICATION),
                        facts(heavyAt(0), lightAt(0)),
                        0.5,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "degraded by /health: no retry",
                        degraded(Check.HEALTH),
                        facts(heavyAt(0), lightAt(1)),
                        1,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "held, before its end",
                        heldUntil(10),
                        facts(heavyAt(0)),
                        9,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "held, at its end", heldUntil(10), facts(heavyAt(0)), 10, NOTHING_RUNS, DueNow.Start.HEAVY),
                Arguments.of(
                        "held, at its end, within heavy-retry-interval",
                        heldUntil(10),
                        facts(heavyAt(9.5)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("heavy")
    void heavyProbesRunWhenTheStateAsksAndNothingRuns(
            String name, EngineState state, EngineFacts facts, double now, DueNow.Loop loop, DueNow.Start expected) {
        assertThat(DueNow.decide(state, facts, t(now), NO_LIGHT_CHECKS, loop)).isEqualTo(expected);
    }

    // What a cycle starts: the heavy probes of a ready engine, whose light checks ran just now.

    static Stream<Arguments> readyHeavy() {
        return Stream.of(
                Arguments.of(
                        "idle, within heavy-interval",
                        facts(VLLM, scraped(0, 0, 10), heavyAt(0)),
                        59,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "idle, heavy-interval over",
                        facts(VLLM, scraped(0, 0, 10), heavyAt(0)),
                        60,
                        DueNow.Start.HEAVY),
                Arguments.of("never ran", facts(VLLM, scraped(1, 0, 10)), 60, DueNow.Start.HEAVY),
                Arguments.of(
                        "busy (running): deferred",
                        facts(VLLM, scraped(1, 0, 10), heavyAt(0)),
                        60,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "busy (waiting): deferred",
                        facts(VLLM, scraped(0, 1, 10), heavyAt(0)),
                        60,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "busy, deferred by at most another interval",
                        facts(VLLM, scraped(1, 0, 10), heavyAt(0)),
                        120,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "a stale sample says nothing of now: idle",
                        facts(VLLM, scraped(1, 0, 10), METRICS_LOST, heavyAt(0)),
                        60,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "traffic succeeded since (3 > 2 of our own): deferred",
                        facts(VLLM, scraped(0, 0, 10), heavyAt(0), successesAtHeavy(7)),
                        60,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "traffic succeeded, deferred by at most another interval",
                        facts(VLLM, scraped(0, 0, 10), heavyAt(0), successesAtHeavy(7)),
                        120,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "only our own verification succeeded since (2)",
                        facts(VLLM, scraped(0, 0, 10), heavyAt(0), successesAtHeavy(8)),
                        60,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "only our own verification and light checks succeeded since (2 + 2)",
                        facts(VLLM, heavyAt(0), successesAtHeavy(6), lightAt(30), lightAt(59), scraped(0, 0, 10)),
                        60,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "no /metrics, a slot held: deferred",
                        facts(LLAMA, NO_METRICS, slots(1, 2), heavyAt(0)),
                        60,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "no /metrics, no slot held",
                        facts(LLAMA, NO_METRICS, slots(0, 2), heavyAt(0)),
                        60,
                        DueNow.Start.HEAVY),
                Arguments.of(
                        "no /metrics, no /slots: idle", facts(LLAMA, NO_METRICS, heavyAt(0)), 60, DueNow.Start.HEAVY));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("readyHeavy")
    void heavyProbesOfAReadyEngineRunEveryHeavyIntervalDeferredWhileBusyOrTrafficSucceeds(
            String name, EngineFacts facts, double now, DueNow.Start expected) {
        assertThat(DueNow.decide(READY, facts, t(now), NO_LIGHT_CHECKS, NOTHING_RUNS))
                .isEqualTo(expected);
    }

    // What a cycle starts: the trial of a suspended engine before its heavy probes.

    static Stream<Arguments> trials() {
        EngineState outByLight = notReady(Reason.GENERATION_FAILED, false);
        EngineFacts ran = facts(heavyAt(0));
        return Stream.of(
                        Arguments.of(
                                "out by a light check, suspended",
                                outByLight,
                                CADENCE,
                                SUSPENDED,
                                DueNow.Start.TRIAL_THEN_HEAVY),
                        Arguments.of(
                                "out by a timed-out light check, suspended",
                                notReady(Reason.GENERATION_TIMED_OUT, false),
                                CADENCE,
                                SUSPENDED,
                                DueNow.Start.TRIAL_THEN_HEAVY),
                        Arguments.of(
                                "out by a stalled light check, suspended",
                                notReady(Reason.GENERATION_STALLED, false),
                                CADENCE,
                                SUSPENDED,
                                DueNow.Start.TRIAL_THEN_HEAVY),
                        Arguments.of(
                                "out by a light check, not suspended",
                                outByLight,
                                CADENCE,
                                NOTHING_RUNS,
                                DueNow.Start.HEAVY),
                        Arguments.of(
                                "trial within generation.interval",
                                outByLight,
                                CADENCE,
                                suspendedSinceTrialAt(9),
                                DueNow.Start.HEAVY),
                        Arguments.of(
                                "trial generation.interval ago",
                                outByLight,
                                CADENCE,
                                suspendedSinceTrialAt(8),
                                DueNow.Start.TRIAL_THEN_HEAVY),
                        Arguments.of("no light checks", outByLight, NO_LIGHT_CHECKS, SUSPENDED, DueNow.Start.HEAVY),
                        Arguments.of(
                                "out by the heavy probes",
                                notReady(Reason.TIMED_OUT, false),
                                CADENCE,
                                SUSPENDED,
                                DueNow.Start.HEAVY),
                        Arguments.of(
                                "out by a light check, latched",
                                notReady(Reason.GENERATION_FAILED, true),
                                CADENCE,
                                SUSPENDED,
                                DueNow.Start.NOTHING))
                .map(arguments -> {
                    Object[] a = arguments.get();
                    return Arguments.of(a[0], a[1], ran, a[2], a[3], a[4]);
                });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("trials")
    void aSuspendedEngineOutByItsLightChecksIsTriedBeforeItsHeavyProbesEveryGenerationInterval(
            String name,
            EngineState state,
            EngineFacts facts,
            DueNow.Cadence cadence,
            DueNow.Loop loop,
            DueNow.Start expected) {
        assertThat(DueNow.decide(state, facts, t(10), cadence, loop)).isEqualTo(expected);
    }

    // What a cycle starts: the light checks (the heavy probes ran at 0, not due again before 60).

    static Stream<Arguments> light() {
        return Stream.of(
                Arguments.of(
                        "ready, none ran",
                        READY,
                        CADENCE,
                        facts(VLLM, heavyAt(0)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "ready, one within generation.interval",
                        READY,
                        CADENCE,
                        facts(VLLM, heavyAt(0), lightAt(9)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "ready, generation.interval over",
                        READY,
                        CADENCE,
                        facts(VLLM, heavyAt(0), lightAt(8)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "degraded by one: confirmed at once",
                        degraded(Check.GENERATION),
                        CADENCE,
                        facts(VLLM, heavyAt(0), lightAt(9.9)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "degraded by /health: at its interval",
                        degraded(Check.HEALTH),
                        CADENCE,
                        facts(VLLM, heavyAt(0), lightAt(9.9)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "no light checks",
                        READY,
                        NO_LIGHT_CHECKS,
                        facts(VLLM, heavyAt(0)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "not serving",
                        notReady(Reason.TIMED_OUT, false),
                        CADENCE,
                        facts(VLLM, heavyAt(0)),
                        0.5,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "model not learned",
                        READY,
                        CADENCE,
                        EngineFacts.fresh("s1").withLastHeavy(T0),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of("one runs", READY, CADENCE, facts(VLLM, heavyAt(0)), 10, LIGHT_RUNS, DueNow.Start.NOTHING),
                Arguments.of(
                        "the heavy probes run",
                        READY,
                        CADENCE,
                        facts(VLLM, heavyAt(0)),
                        10,
                        HEAVY_RUNS,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "the heavy probes started this cycle and run",
                        READY,
                        CADENCE,
                        facts(VLLM, heavyAt(10)),
                        10,
                        HEAVY_STARTED,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "the heavy probes started this cycle and ended at once",
                        READY,
                        CADENCE,
                        facts(VLLM, heavyAt(10)),
                        10,
                        HEAVY_ENDED_AT_ONCE,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "vLLM with requests waiting: sent",
                        READY,
                        CADENCE,
                        facts(VLLM, scraped(8, 3, 10), heavyAt(0)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "llama-server, a slot free",
                        READY,
                        CADENCE,
                        facts(LLAMA, scraped(0, 0, 10), heavyAt(0)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "llama-server, no /metrics, a slot free",
                        READY,
                        CADENCE,
                        facts(LLAMA, NO_METRICS, slots(1, 2), heavyAt(0)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "llama-server, neither /metrics nor /slots: waited for",
                        READY,
                        CADENCE,
                        facts(LLAMA, NO_METRICS, heavyAt(0)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT_WAITED_FOR),
                Arguments.of(
                        "llama-server, metrics lost, no /slots: waited for",
                        READY,
                        CADENCE,
                        facts(LLAMA, scraped(0, 0, 10), METRICS_LOST, heavyAt(0)),
                        10,
                        NOTHING_RUNS,
                        DueNow.Start.LIGHT_WAITED_FOR),
                Arguments.of(
                        "llama-server, blind, one runs",
                        READY,
                        CADENCE,
                        facts(LLAMA, NO_METRICS, heavyAt(0)),
                        10,
                        LIGHT_RUNS,
                        DueNow.Start.NOTHING));
    }

    // Gateway mode: client traffic served whole is the proof a light check would give.

    static Stream<Arguments> served() {
        return Stream.of(
                Arguments.of(
                        "ready, a client request served 1 s ago: put off",
                        READY,
                        facts(VLLM, heavyAt(0), lightAt(5), servedAt(9)),
                        10,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "ready, served longer than generation.interval ago: the light check runs",
                        READY,
                        facts(VLLM, heavyAt(0), lightAt(5), servedAt(7)),
                        10,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "ready, served, then a request failed (no proof since): the light check runs",
                        READY,
                        facts(VLLM, heavyAt(0), lightAt(5), servedAt(9), f -> f.withServed(null)),
                        10,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "degraded by client requests: the light check runs whatever was served",
                        degraded(Check.TRAFFIC),
                        facts(VLLM, heavyAt(0), lightAt(5), servedAt(9)),
                        10,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "degraded by a light check: confirmed at once, traffic or not",
                        degraded(Check.GENERATION),
                        facts(VLLM, heavyAt(0), lightAt(9), servedAt(9.5)),
                        10,
                        DueNow.Start.LIGHT),
                Arguments.of(
                        "ready, served 1 s ago, heavy probes due: they run (traffic never stands in for them)",
                        READY,
                        facts(VLLM, heavyAt(0), lightAt(5), servedAt(69)),
                        70,
                        DueNow.Start.HEAVY));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("served")
    void clientRequestsServedWholeStandInForTheLightChecksNeverForTheHeavyProbes(
            String name, EngineState state, EngineFacts facts, double now, DueNow.Start expected) {
        assertThat(DueNow.decide(state, facts, t(now), CADENCE, NOTHING_RUNS)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("light")
    void aLightCheckRunsEveryGenerationIntervalOnAnEngineThatServesNeverBesideTheHeavyProbes(
            String name,
            EngineState state,
            DueNow.Cadence cadence,
            EngineFacts facts,
            double now,
            DueNow.Loop loop,
            DueNow.Start expected) {
        assertThat(DueNow.decide(state, facts, t(now), cadence, loop)).isEqualTo(expected);
    }

    // What a cycle starts: a light check put off while every llama-server slot stays taken.

    static Stream<Arguments> putOff() {
        return Stream.of(
                Arguments.of(
                        "every slot running",
                        CADENCE,
                        facts(LLAMA, scraped(1, 0, 10), heavyAt(0)),
                        10,
                        DueNow.Start.PUT_OFF_BY_METRICS),
                Arguments.of(
                        "a request waiting",
                        CADENCE,
                        facts(LLAMA, scraped(0, 1, 10), heavyAt(0)),
                        10,
                        DueNow.Start.PUT_OFF_BY_METRICS),
                Arguments.of(
                        "put off before, within the budget (5 s)",
                        CADENCE,
                        facts(LLAMA, scraped(1, 0, 10), heavyAt(0), putOffByMetricsAt(6)),
                        10,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "put off before, the budget (5 s) over: judged",
                        CADENCE,
                        facts(LLAMA, scraped(1, 0, 10), heavyAt(0), putOffByMetricsAt(5)),
                        10,
                        DueNow.Start.JUDGED_BY_METRICS),
                Arguments.of(
                        "put off before, a budget (1 s) under generation.interval: not before it",
                        SHORT_BUDGET,
                        facts(LLAMA, scraped(1, 0, 10), heavyAt(0), putOffByMetricsAt(8.5)),
                        10,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "put off before, a budget (1 s) under generation.interval: judged after it",
                        SHORT_BUDGET,
                        facts(LLAMA, scraped(1, 0, 10), heavyAt(0), putOffByMetricsAt(8)),
                        10,
                        DueNow.Start.JUDGED_BY_METRICS),
                Arguments.of(
                        "a light check ran since the last put off",
                        CADENCE,
                        facts(LLAMA, scraped(1, 0, 10), heavyAt(0), putOffByMetricsAt(1), lightAt(2)),
                        10,
                        DueNow.Start.PUT_OFF_BY_METRICS),
                Arguments.of(
                        "no /metrics, every slot processing",
                        CADENCE,
                        facts(LLAMA, NO_METRICS, slots(2, 2), heavyAt(0)),
                        10,
                        DueNow.Start.PUT_OFF_BY_SLOTS),
                Arguments.of(
                        "no /metrics, put off before, within the budget (30 s without a scrape)",
                        CADENCE,
                        facts(LLAMA, NO_METRICS, slots(2, 2), heavyAt(0), putOffBySlotsAt(0)),
                        29,
                        DueNow.Start.NOTHING),
                Arguments.of(
                        "no /metrics, put off before, the budget over: judged",
                        CADENCE,
                        facts(LLAMA, NO_METRICS, slots(2, 2), heavyAt(0), putOffBySlotsAt(0)),
                        30,
                        DueNow.Start.JUDGED_BY_SLOTS),
                Arguments.of(
                        "no /metrics, put off before, a slot free now",
                        CADENCE,
                        facts(LLAMA, NO_METRICS, slots(1, 2), heavyAt(0), putOffBySlotsAt(0)),
                        30,
                        DueNow.Start.LIGHT));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("putOff")
    void aLightCheckThatWouldWaitHoldingAServerThreadIsPutOffAndJudgedFromTheEnginesEvidence(
            String name, DueNow.Cadence cadence, EngineFacts facts, double now, DueNow.Start expected) {
        assertThat(DueNow.decide(READY, facts, t(now), cadence, NOTHING_RUNS)).isEqualTo(expected);
    }

    // Whether readygate can see a taken slot (the timeout verdict reads it too).

    static Stream<Arguments> blind() {
        return Stream.of(
                Arguments.of("before discovery", facts(NO_METRICS), false),
                Arguments.of("vLLM without /metrics", facts(VLLM, NO_METRICS), false),
                Arguments.of("llama-server with /metrics", facts(LLAMA, scraped(0, 0, 0)), false),
                Arguments.of("llama-server with /slots", facts(LLAMA, NO_METRICS, slots(0, 1)), false),
                Arguments.of("llama-server with neither", facts(LLAMA, NO_METRICS), true),
                Arguments.of(
                        "llama-server whose /metrics was lost", facts(LLAMA, scraped(0, 0, 0), METRICS_LOST), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("blind")
    void blindOnlyOnAnEngineWhoseConnectionsCostAThreadWithNeitherMetricsNorSlots(
            String name, EngineFacts facts, boolean expected) {
        assertThat(DueNow.blind(facts)).isEqualTo(expected);
    }
}
