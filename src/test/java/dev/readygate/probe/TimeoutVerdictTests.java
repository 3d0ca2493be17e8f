package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.SlotsSample;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a probe that got no answer in time means, as tables: judged by the engine's metrics read again, by
 * llama-server's {@code /slots} read again without them, and without either.
 */
class TimeoutVerdictTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");
    static final EngineLoad.OwnTokens OWN = new EngineLoad.OwnTokens(8, 16);
    static final EngineFailure TIMED_OUT = EngineFailure.of(EngineFailure.Kind.TIMED_OUT, "no event in 2000 ms");
    static final EngineFailure STALLED = EngineFailure.of(EngineFailure.Kind.STALLED, "the stream went quiet");
    static final TimeoutVerdict.Reasons HEAVY = TimeoutVerdict.Reasons.HEAVY;
    static final TimeoutVerdict.Reasons GENERATION = TimeoutVerdict.Reasons.GENERATION;

    final Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
    final ScriptedEngine engine = new ScriptedEngine();
    final EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 3), T0, change -> {});
    final EngineFactsHolder facts = new EngineFactsHolder(machine);
    final TimeoutVerdict verdict = new TimeoutVerdict(engine, facts, clock);

    /** An engine start in progress, in service (ready) when asked. */
    void started(boolean inService) {
        machine.apply(new Observation.HealthOk(T0));
        if (inService) {
            machine.apply(new Observation.ModelListed(T0, "m"));
            machine.apply(new Observation.Verified(T0, "ok"));
            assertThat(machine.current().acceptsTraffic()).isTrue();
        }
    }

    /** The start's engine speaks {@code dialect}, with one slot. */
    void speaks(EngineDialect dialect) {
        facts.learn(DueNowTests.surface(dialect, 1));
    }

    ProbeReport judge(EngineFailure timeout, @Nullable EngineMetricsSample before, TimeoutVerdict.Reasons reasons) {
        ProbeKind kind = reasons == HEAVY ? ProbeKind.REPRESENTATIVE : ProbeKind.GENERATION;
        ProbeReport report = verdict.judge(kind, timeout, before, OWN, reasons).block(Duration.ofSeconds(5));
        assertThat(report).isNotNull();
        assertThat(report.kind()).isEqualTo(kind);
        return report;
    }

    /** vLLM's metrics: requests running and waiting, tokens generated, preemptions (null: not exported). */
    static EngineMetricsSample vllm(double running, double waiting, double generated, @Nullable Double preemptions) {
        return new EngineMetricsSample(
                1000.0, running, waiting, generated, 500.0, 10.0, Map.of(), Set.of("vllm:"), null, preemptions);
    }

    // Judged by the metrics read again.

    /** vLLM's metrics of an idle engine that sleeps at {@code level}. */
    static EngineMetricsSample asleep(int level) {
        return new EngineMetricsSample(
                1000.0, 1.0, 0.0, 100.0, 500.0, 10.0, Map.of(), Set.of("vllm:"), null, 0.0, level);
    }

    static Stream<Arguments> byMetrics() {
        return Stream.of(
                // Issue 29: vLLM queues a request to a sleeping engine until it wakes; no progress is no fault.
                Arguments.of(
                        "asleep, a light check",
                        TIMED_OUT,
                        vllm(0, 0, 100, 0.0),
                        asleep(1),
                        GENERATION,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "asleep at level 2, a heavy probe",
                        TIMED_OUT,
                        vllm(0, 0, 100, 0.0),
                        asleep(2),
                        HEAVY,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "others progressed",
                        TIMED_OUT,
                        vllm(2, 0, 100, 0.0),
                        vllm(2, 0, 150, 0.0),
                        HEAVY,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "others progressed, a light check",
                        TIMED_OUT,
                        vllm(2, 0, 100, 0.0),
                        vllm(2, 0, 150, 0.0),
                        GENERATION,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "requests running, no progress",
                        TIMED_OUT,
                        vllm(2, 0, 100, 0.0),
                        vllm(2, 0, 100, 0.0),
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.STALLED),
                Arguments.of(
                        "requests running, no progress, a light check",
                        TIMED_OUT,
                        vllm(2, 0, 100, 0.0),
                        vllm(2, 0, 100, 0.0),
                        GENERATION,
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_STALLED),
                Arguments.of(
                        "own stream stopped while others advanced, no preemption",
                        STALLED,
                        vllm(2, 0, 100, 0.0),
                        vllm(3, 0, 150, 0.0),
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.STALLED),
                Arguments.of(
                        "own stream stopped while others advanced, preempted",
                        STALLED,
                        vllm(2, 0, 100, 0.0),
                        vllm(3, 0, 150, 1.0),
                        HEAVY,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "idle engine: the probe's own timeout",
                        TIMED_OUT,
                        vllm(0, 0, 100, 0.0),
                        vllm(1, 0, 100, 0.0),
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.TIMED_OUT),
                Arguments.of(
                        "idle engine, a light check",
                        TIMED_OUT,
                        vllm(0, 0, 100, 0.0),
                        vllm(1, 0, 100, 0.0),
                        GENERATION,
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_TIMED_OUT),
                Arguments.of(
                        "idle engine, own stream stopped",
                        STALLED,
                        vllm(0, 0, 100, 0.0),
                        vllm(1, 0, 100, 0.0),
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.STALLED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("byMetrics")
    void withMetricsTheEnginesOtherWorkDecides(
            String name,
            EngineFailure timeout,
            EngineMetricsSample before,
            EngineMetricsSample after,
            TimeoutVerdict.Reasons reasons,
            ProbeReport.Outcome outcome,
            @Nullable Reason reason) {
        started(true);
        speaks(EngineDialect.VLLM);
        engine.metricsAnswer = ScriptedEngine.ok(after);

        ProbeReport report = judge(timeout, before, reasons);

        assertThat(report.outcome()).isEqualTo(outcome);
        assertThat(report.reason()).isEqualTo(reason);
        assertThat(report.detail()).startsWith(timeout.detail());
    }

    @Test
    void withMetricsThatFailToAnswerAgainTheTimeoutIsTheProbesOwn() {
        started(true);
        speaks(EngineDialect.VLLM);
        engine.metricsAnswer = ScriptedEngine.failure(EngineFailure.Kind.TIMED_OUT, "no answer");

        assertThat(judge(TIMED_OUT, vllm(2, 0, 100, 0.0), HEAVY).reason()).isEqualTo(Reason.TIMED_OUT);
        assertThat(judge(STALLED, vllm(2, 0, 100, 0.0), GENERATION).reason()).isEqualTo(Reason.GENERATION_STALLED);
    }

    @Test
    void aSampleFromBeforeOnAStartWithoutUsableMetricsIsNotReadAgain() {
        started(true);
        speaks(EngineDialect.VLLM);
        facts.learn(f -> f.withCapabilities(f.capabilities().withoutMetrics()));
        engine.metricsAnswer = ScriptedEngine.ok(vllm(2, 0, 150, 0.0));

        ProbeReport report = judge(TIMED_OUT, vllm(2, 0, 100, 0.0), HEAVY);

        assertThat(report.reason()).isEqualTo(Reason.TIMED_OUT);
        assertThat(engine.metricsCalls).hasValue(0);
    }

    // Without metrics: llama-server's /slots read again.

    static SlotsSample slots(long... decoded) {
        return new SlotsSample(java.util.stream.IntStream.range(0, decoded.length)
                .mapToObj(i -> new SlotsSample.Slot(i, 100 + i, decoded[i] >= 0, Math.max(0, decoded[i])))
                .toList());
    }

    static Stream<Arguments> bySlots() {
        return Stream.of(
                Arguments.of(
                        "every slot taken, none read before", null, slots(5), HEAVY, ProbeReport.Outcome.BUSY, null),
                Arguments.of(
                        "every slot taken, its request advanced",
                        slots(5),
                        slots(9),
                        HEAVY,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "every slot taken, a slot taken since",
                        slots(-1),
                        slots(0),
                        GENERATION,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "every slot taken, its request advances no more",
                        slots(5),
                        slots(5),
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.STALLED),
                Arguments.of(
                        "every slot taken, advancing no more, a light check",
                        slots(5),
                        slots(5),
                        GENERATION,
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_STALLED),
                Arguments.of(
                        "a slot free: the probe's own timeout",
                        slots(5, 5),
                        slots(5, -1),
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.TIMED_OUT),
                Arguments.of(
                        "a slot free, a light check",
                        null,
                        slots(-1),
                        GENERATION,
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_TIMED_OUT),
                Arguments.of(
                        "/slots does not answer again",
                        null,
                        null,
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.TIMED_OUT));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bySlots")
    void withoutMetricsLlamaServersSlotsReadAgainDecide(
            String name,
            @Nullable SlotsSample latest,
            @Nullable SlotsSample after,
            TimeoutVerdict.Reasons reasons,
            ProbeReport.Outcome outcome,
            @Nullable Reason reason) {
        started(true);
        speaks(EngineDialect.LLAMA_CPP);
        facts.learn(f -> f.withSlots(latest));
        engine.slotsAnswer = after;

        ProbeReport report = judge(TIMED_OUT, null, reasons);

        assertThat(report.outcome()).isEqualTo(outcome);
        assertThat(report.reason()).isEqualTo(reason);
        assertThat(engine.slotsCalls).hasValue(1);
    }

    @Test
    void aStreamThatStoppedIsNotJudgedBySlots() {
        started(true);
        speaks(EngineDialect.LLAMA_CPP);
        engine.slotsAnswer = slots(5);

        assertThat(judge(STALLED, null, HEAVY).reason()).isEqualTo(Reason.STALLED);
        assertThat(engine.slotsCalls).hasValue(0);
    }

    // Without either.

    static Stream<Arguments> blind() {
        return Stream.of(
                Arguments.of(
                        "heavy probe of an engine in service: taken as queued behind a client",
                        EngineDialect.LLAMA_CPP,
                        true,
                        TIMED_OUT,
                        HEAVY,
                        ProbeReport.Outcome.BUSY,
                        null),
                Arguments.of(
                        "heavy probe of an engine not in service",
                        EngineDialect.LLAMA_CPP,
                        false,
                        TIMED_OUT,
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.TIMED_OUT),
                Arguments.of(
                        "heavy probe whose stream stopped",
                        EngineDialect.LLAMA_CPP,
                        true,
                        STALLED,
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.STALLED),
                Arguments.of(
                        "light check (waited for to its end instead)",
                        EngineDialect.LLAMA_CPP,
                        true,
                        TIMED_OUT,
                        GENERATION,
                        ProbeReport.Outcome.FAILED,
                        Reason.GENERATION_TIMED_OUT),
                Arguments.of(
                        "vLLM (an idle connection costs it no thread)",
                        EngineDialect.VLLM,
                        true,
                        TIMED_OUT,
                        HEAVY,
                        ProbeReport.Outcome.FAILED,
                        Reason.TIMED_OUT));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("blind")
    void withNeitherMetricsNorSlotsOnlyAHeavyProbeOfABlindEngineInServiceIsBusy(
            String name,
            EngineDialect dialect,
            boolean inService,
            EngineFailure timeout,
            TimeoutVerdict.Reasons reasons,
            ProbeReport.Outcome outcome,
            @Nullable Reason reason) {
        started(inService);
        speaks(dialect);
        facts.learn(EngineFacts::withoutSlots);

        ProbeReport report = judge(timeout, null, reasons);

        assertThat(report.outcome()).isEqualTo(outcome);
        assertThat(report.reason()).isEqualTo(reason);
        assertThat(engine.metricsCalls).hasValue(0);
        assertThat(engine.slotsCalls).hasValue(0);
    }
}
