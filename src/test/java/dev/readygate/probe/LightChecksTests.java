package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.SlotsSample;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;

/**
 * The light checks: whose turn it is (the generation check or the canary), what a check still waiting or one put off
 * means, the trial of a suspended engine, and what readiness makes of each report.
 */
class LightChecksTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");
    static final ModelCard CARD = new ModelCard("m", "root", 4096);

    @TempDir
    Path stateDir;

    final Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
    final ScriptedEngine engine = new ScriptedEngine();
    final EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 3), T0, change -> {});
    final EngineFactsHolder facts = new EngineFactsHolder(machine);
    final ProbeHistory history = new ProbeHistory();
    final List<ProbeReport> heard = new ArrayList<>();
    final List<CompletionRequest> sent = new ArrayList<>();

    @BeforeEach
    void engineStarted() {
        machine.apply(new Observation.HealthOk(T0));
        engine.completions = request -> {
            sent.add(request);
            return ScriptedEngine.correct(request);
        };
    }

    static ReadygateProperties.Generation generation(int canaryEvery) {
        return new ReadygateProperties.Generation(true, Duration.ofSeconds(2), Duration.ofMillis(750), 2, canaryEvery);
    }

    LightChecks checks(int canaryEvery, boolean withCanary) {
        ReadygateProperties.Generation config = generation(canaryEvery);
        CanaryProbe canary = withCanary
                ? ProbeScheduleTests.canary(
                        new ReadygateProperties.Canary(
                                true, "The capital of France is", 1, 0, List.of(), null, null, 0.01, 0.1, true, true),
                        engine,
                        facts,
                        stateDir,
                        clock)
                : null;
        GenerationCheck check =
                new GenerationCheck(config, engine, facts, new SplittableRandom(5), clock, Duration.ofSeconds(30));
        return new LightChecks(config, check, canary, history, heard::add);
    }

    // Whose turn.

    static Stream<Arguments> turns() {
        return Stream.of(
                Arguments.of(2, true, 0, false),
                Arguments.of(2, true, 1, true),
                Arguments.of(2, true, 2, false),
                Arguments.of(2, true, 3, true),
                Arguments.of(3, true, 1, false),
                Arguments.of(3, true, 2, true),
                Arguments.of(1, true, 0, true),
                Arguments.of(0, true, 1, false),
                Arguments.of(2, false, 1, false));
    }

    @ParameterizedTest(name = "canary-every {0}, canary {1}, check {2}: canary {3}")
    @MethodSource("turns")
    void everyCanaryEveryThLightCheckIsTheCanary(int every, boolean withCanary, int count, boolean canaryTurn) {
        assertThat(checks(every, withCanary).canaryTurn(count)).isEqualTo(canaryTurn);
    }

    @Test
    void aTurnRunsTheCheckWhoseTurnItIsAndRecordsItsReport() {
        LightChecks checks = checks(2, true);

        Observation generation = checks.run(0, CARD, "0.31.0", null).block(Duration.ofSeconds(5));
        Observation canary = checks.run(1, CARD, "0.31.0", null).block(Duration.ofSeconds(5));

        assertThat(generation).isInstanceOf(Observation.Generated.class);
        assertThat(((Observation.Generated) generation).detail()).startsWith("generation check: ");
        assertThat(canary).isInstanceOf(Observation.Generated.class);
        assertThat(((Observation.Generated) canary).detail()).startsWith("canary (generation check): ");
        assertThat(sent).extracting(CompletionRequest::promptText).last().isEqualTo("The capital of France is");
        assertThat(heard).extracting(ProbeReport::kind).containsExactly(ProbeKind.GENERATION, ProbeKind.CANARY);
        assertThat(history.last(ProbeKind.GENERATION)).isNotNull();
        assertThat(history.last(ProbeKind.CANARY)).isNotNull();
    }

    @Test
    void aLightCheckCostsTheDearerOfItsTwoChecks() {
        assertThat(checks(0, false).tokenCost()).isEqualTo(10);
        assertThat(checks(2, true).tokenCost()).isGreaterThanOrEqualTo(10);
    }

    // A check still waiting, on an engine where readygate cannot see a taken slot.

    static Stream<Arguments> waits() {
        return Stream.of(Arguments.of(60, false), Arguments.of(300, false), Arguments.of(301, true));
    }

    @ParameterizedTest(name = "waited {0} s of heavy-interval's 300 s: failed {1}")
    @MethodSource("waits")
    void aCheckStillWaitingIsBusyUpToHeavyIntervalAndTimedOutAfter(long waited, boolean failed) {
        Observation observation = checks(0, false).waiting(Duration.ofSeconds(waited), Duration.ofSeconds(300), T0);

        if (failed) {
            assertThat(observation)
                    .isInstanceOfSatisfying(
                            Observation.CheckFailed.class,
                            f -> assertThat(f.reason()).isEqualTo(Reason.GENERATION_TIMED_OUT));
        } else {
            assertThat(observation).isInstanceOf(Observation.Busy.class);
        }
        assertThat(heard).hasSize(1);
    }

    // The trial of a suspended engine.

    @Test
    void aTrialSaysWhetherTheEngineGeneratesAgainAndIsRecorded() {
        LightChecks checks = checks(2, true);

        assertThat(checks.trial(CARD, null).block(Duration.ofSeconds(5))).isTrue();
        engine.completions = request -> Mono.just(ScriptedEngine.failure(EngineFailure.Kind.RESET, "reset"));
        assertThat(checks.trial(CARD, null).block(Duration.ofSeconds(5))).isFalse();

        assertThat(heard).extracting(ProbeReport::kind).containsExactly(ProbeKind.GENERATION, ProbeKind.GENERATION);
        assertThat(heard)
                .extracting(ProbeReport::outcome)
                .containsExactly(ProbeReport.Outcome.PASSED, ProbeReport.Outcome.FAILED);
    }

    // A check put off while every llama-server slot stays taken.

    static EngineMetricsSample llama(double running, double waiting, @Nullable Double decodeSteps) {
        return new EngineMetricsSample(
                1000.0,
                running,
                waiting,
                100.0,
                50.0,
                10.0,
                Map.of(),
                java.util.Set.of("llamacpp:"),
                decodeSteps,
                null);
    }

    static Stream<Arguments> putOffByMetrics() {
        return Stream.of(
                Arguments.of(
                        "decode steps moved", llama(1, 0, 100.0), llama(1, 1, 140.0), Observation.Busy.class, null),
                Arguments.of(
                        "no decode step",
                        llama(1, 0, 100.0),
                        llama(1, 1, 100.0),
                        Observation.CheckFailed.class,
                        Reason.GENERATION_STALLED),
                Arguments.of("no decode steps exported", llama(1, 0, null), llama(1, 1, null), null, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("putOffByMetrics")
    void aCheckPutOffIsJudgedByTheDecodeStepsSinceTheOneBefore(
            String name,
            EngineMetricsSample since,
            EngineMetricsSample now,
            @Nullable Class<? extends Observation> type,
            @Nullable Reason reason) {
        Observation observation = checks(0, false).putOff(since, now, Duration.ofSeconds(10), T0);

        if (type == null) {
            assertThat(observation).isNull();
            assertThat(heard).isEmpty();
            return;
        }
        assertThat(observation).isInstanceOf(type);
        if (observation instanceof Observation.CheckFailed failed) {
            assertThat(failed.check()).isEqualTo(Check.GENERATION);
            assertThat(failed.reason()).isEqualTo(reason);
        }
        assertThat(heard).hasSize(1);
    }

    static SlotsSample slot(long task, long decoded) {
        return new SlotsSample(List.of(new SlotsSample.Slot(0, task, true, decoded)));
    }

    static Stream<Arguments> putOffBySlots() {
        return Stream.of(
                Arguments.of("its request generated", slot(1, 5), slot(1, 9), Observation.Busy.class, null),
                Arguments.of(
                        "its request ended, another took the slot",
                        slot(1, 5),
                        slot(2, 1),
                        Observation.Busy.class,
                        null),
                Arguments.of(
                        "its request advances no more",
                        slot(1, 5),
                        slot(1, 5),
                        Observation.CheckFailed.class,
                        Reason.GENERATION_STALLED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("putOffBySlots")
    void aCheckPutOffIsJudgedBySlotsWithoutMetrics(
            String name,
            SlotsSample since,
            SlotsSample now,
            Class<? extends Observation> type,
            @Nullable Reason reason) {
        Observation observation = checks(0, false).putOff(since, now, Duration.ofSeconds(10), T0);

        assertThat(observation).isInstanceOf(type);
        if (observation instanceof Observation.CheckFailed failed) {
            assertThat(failed.reason()).isEqualTo(reason);
        }
        assertThat(heard).hasSize(1);
    }

    // What readiness makes of a light check's report.

    static Stream<Arguments> observations() {
        return Stream.of(
                Arguments.of(
                        ProbeReport.busy(ProbeKind.GENERATION, T0, "d"),
                        new Observation.Busy(T0, "generation check: d")),
                Arguments.of(
                        ProbeReport.failed(ProbeKind.GENERATION, T0, Reason.ENGINE_DOWN, "d"),
                        new Observation.Unreachable(T0, Reason.ENGINE_DOWN, "generation check: d")),
                Arguments.of(
                        ProbeReport.failed(ProbeKind.CANARY, T0, Reason.CANARY_MISMATCH, "d")
                                .latch(),
                        new Observation.VerificationFailed(
                                T0, Reason.CANARY_MISMATCH, "canary (generation check): d", true)),
                Arguments.of(
                        ProbeReport.failed(ProbeKind.GENERATION, T0, Reason.GENERATION_STALLED, "d"),
                        failed(Reason.GENERATION_STALLED, "generation check: d")),
                Arguments.of(
                        ProbeReport.failed(ProbeKind.GENERATION, T0, Reason.OVERLONG_STREAM, "d"),
                        failed(Reason.OVERLONG_STREAM, "generation check: d")),
                Arguments.of(
                        ProbeReport.failed(ProbeKind.CANARY, T0, Reason.TIMED_OUT, "d"),
                        failed(Reason.GENERATION_TIMED_OUT, "canary (generation check): d")),
                Arguments.of(
                        ProbeReport.failed(ProbeKind.CANARY, T0, Reason.STALLED, "d"),
                        failed(Reason.GENERATION_STALLED, "canary (generation check): d")),
                Arguments.of(
                        ProbeReport.failed(ProbeKind.CANARY, T0, Reason.HTTP_STATUS, "d"),
                        failed(Reason.GENERATION_FAILED, "canary (generation check): http_status: d")));
    }

    static Observation failed(Reason reason, String detail) {
        return new Observation.CheckFailed(T0, Check.GENERATION, reason, detail);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("observations")
    void aLightChecksReportIsAGenerationCheckFailureUnlessTheEngineIsGoneOrTheCanaryMismatched(
            ProbeReport report, Observation expected) {
        assertThat(LightChecks.observation(report)).isEqualTo(expected);
    }
}
