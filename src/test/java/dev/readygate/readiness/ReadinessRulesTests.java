package dev.readygate.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineState.Kind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReadinessRulesTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final String MODEL = "Qwen/Qwen3-0.6B";

    final ReadinessRules rules = new ReadinessRules(2, 3);

    static Instant t(int seconds) {
        return T0.plusSeconds(seconds);
    }

    static Observation ok(int s) {
        return new Observation.HealthOk(t(s));
    }

    static Observation listed(int s) {
        return new Observation.ModelListed(t(s), MODEL);
    }

    static Observation verified(int s) {
        return new Observation.Verified(t(s), "ok");
    }

    static Observation failed(int s, Reason reason) {
        return new Observation.VerificationFailed(t(s), reason, "x", false);
    }

    static Observation latched(int s, Reason reason) {
        return new Observation.VerificationFailed(t(s), reason, "x", true);
    }

    EngineState run(Observation... observations) {
        EngineState state = new EngineState.Starting(T0);
        for (Observation observation : observations) {
            state = rules.next(state, observation);
        }
        return state;
    }

    List<Kind> kinds(Observation... observations) {
        List<Kind> kinds = new ArrayList<>();
        EngineState state = new EngineState.Starting(T0);
        for (Observation observation : observations) {
            state = rules.next(state, observation);
            kinds.add(state.kind());
        }
        return kinds;
    }

    @Test
    void startingIsNotReady() {
        EngineState starting = new EngineState.Starting(T0);
        assertThat(starting.acceptsTraffic()).isFalse();
        assertThat(starting.reason()).isEqualTo(Reason.STARTING);
    }

    @Test
    void phasesFromEngineStartToReadyNeedTheSuccessThreshold() {
        assertThat(kinds(
                        new Observation.Unreachable(t(0), Reason.ENGINE_DOWN, "refused"),
                        new Observation.CheckFailed(t(1), Reason.HEALTH_FAILED, "timed out"),
                        ok(2),
                        listed(3),
                        verified(4),
                        verified(5)))
                .containsExactly(
                        Kind.DOWN, Kind.LISTENING, Kind.HEALTHY, Kind.MODEL_LISTED, Kind.VERIFYING, Kind.READY);
        EngineState ready = run(ok(2), listed(3), verified(4), verified(5));
        assertThat(ready).isEqualTo(new EngineState.Ready(t(5), MODEL));
        assertThat(ready.acceptsTraffic()).isTrue();
        assertThat(ready.reason()).isNull();
    }

    static Observation asleep(int s, int level) {
        return new Observation.Asleep(t(s), level, "vllm:engine_sleep_state");
    }

    @Test
    void aSleepingEngineIsNotReadyWithItsOwnReasonAndNothingCountsUntilItWakes() {
        EngineState asleep = run(ok(2), listed(3), verified(4), verified(5), asleep(10, 1));
        assertThat(asleep).isEqualTo(new EngineState.Sleeping(t(10), MODEL, 1, "vllm:engine_sleep_state"));
        assertThat(asleep.acceptsTraffic()).isFalse();
        assertThat(asleep.reason()).isEqualTo(Reason.SLEEPING);
        // Issue 29 item 1: no probe's result counts while it sleeps, passed or failed; a cheap check changes nothing.
        for (Observation probe : List.of(
                new Observation.CheckFailed(t(11), Check.GENERATION, Reason.GENERATION_TIMED_OUT, "x"),
                new Observation.CheckFailed(t(11), Check.HEALTH, Reason.HEALTH_FAILED, "x"),
                failed(11, Reason.TIMED_OUT),
                latched(11, Reason.CANARY_MISMATCH),
                verified(11),
                new Observation.Generated(t(11), "x"))) {
            ReadinessRules.Step step = rules.step(asleep, probe, null);
            assertThat(step.state()).as(probe.toString()).isSameAs(asleep);
            assertThat(step.ignored()).as(probe.toString()).isEqualTo(ReadinessRules.Ignored.ASLEEP);
        }
        assertThat(rules.step(asleep, ok(11), null)).isEqualTo(new ReadinessRules.Step(asleep, null));
        assertThat(rules.next(asleep, asleep(12, 1))).isSameAs(asleep);
        // A deeper sleep keeps since when it slept.
        assertThat(rules.next(asleep, asleep(12, 2)))
                .isEqualTo(new EngineState.Sleeping(t(10), MODEL, 2, "vllm:engine_sleep_state"));
    }

    @Test
    void aWakeIsVerifiedAsAStartIsTheCanaryIncluded() {
        EngineState asleep = run(ok(2), listed(3), verified(4), verified(5), asleep(10, 2));
        assertThat(rules.next(asleep, new Observation.Awake(t(20), "awake")))
                .isEqualTo(new EngineState.ModelListed(t(20), MODEL, Reason.NOT_VERIFIED));
        // Issue 29 item 2: ready only after the success threshold of verifications, a mismatching canary latched.
        assertThat(kinds(
                        ok(2),
                        listed(3),
                        verified(4),
                        verified(5),
                        asleep(10, 1),
                        new Observation.Awake(t(20), "awake"),
                        verified(21),
                        verified(22)))
                .containsExactly(
                        Kind.HEALTHY,
                        Kind.MODEL_LISTED,
                        Kind.VERIFYING,
                        Kind.READY,
                        Kind.SLEEPING,
                        Kind.MODEL_LISTED,
                        Kind.VERIFYING,
                        Kind.READY);
        EngineState corrupted = run(
                ok(2),
                listed(3),
                verified(4),
                verified(5),
                asleep(10, 1),
                new Observation.Awake(t(20), "awake"),
                latched(21, Reason.CANARY_MISMATCH));
        assertThat(corrupted.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(corrupted.acceptsTraffic()).isFalse();
    }

    @Test
    void aSleepingEngineThatGoesAwayOrRestartsIsSeenSo() {
        EngineState asleep = run(ok(2), listed(3), verified(4), verified(5), asleep(10, 1));
        assertThat(rules.next(asleep, new Observation.Unreachable(t(11), Reason.ENGINE_DOWN, "refused"))
                        .kind())
                .isEqualTo(Kind.DOWN);
        assertThat(rules.next(asleep, new Observation.Restarted(t(11), "new process", null))
                        .kind())
                .isEqualTo(Kind.HEALTHY);
        // Awake without having slept is nothing to wake from.
        EngineState ready = run(ok(2), listed(3), verified(4), verified(5));
        assertThat(rules.step(ready, new Observation.Awake(t(11), "awake"), null))
                .isEqualTo(new ReadinessRules.Step(ready, ReadinessRules.Ignored.STALE));
    }

    static Stream<Arguments> immediateDrops() {
        return Stream.of(
                Arguments.of(new Observation.Unreachable(t(10), Reason.ENGINE_DOWN, "refused"), Reason.ENGINE_DOWN),
                Arguments.of(
                        new Observation.Unreachable(t(10), Reason.CONNECTION_RESET, "reset"), Reason.CONNECTION_RESET),
                Arguments.of(new Observation.EngineDead(t(10), "503"), Reason.ENGINE_DEAD));
    }

    @ParameterizedTest
    @MethodSource("immediateDrops")
    void nextWhenEngineUnreachableOrDeadDropsReadinessAtOnce(Observation drop, Reason reason) {
        EngineState state = run(ok(1), listed(2), verified(3), verified(4), drop);
        assertThat(state.kind()).isEqualTo(Kind.DOWN);
        assertThat(state.reason()).isEqualTo(reason);
        assertThat(state.since()).isEqualTo(t(10));
        assertThat(state.acceptsTraffic()).isFalse();
    }

    @Test
    void nextWhileTheModelLoadsIsListeningFromTheFirstAnswerAndThenHealthy() {
        // llama-server: the port answers 503 "Loading model" from the start; that is listening, not a dead engine.
        EngineState down = run(new Observation.Unreachable(t(0), Reason.ENGINE_DOWN, "refused"));
        EngineState loading = rules.next(down, new Observation.Loading(t(1), "/health: 503 Loading model"));
        EngineState stillLoading = rules.next(loading, new Observation.Loading(t(2), "/health: 503 Loading model"));

        assertThat(stillLoading)
                .isEqualTo(new EngineState.Listening(t(1), Reason.ENGINE_LOADING, "/health: 503 Loading model"));
        assertThat(rules.next(stillLoading, ok(3)).kind()).isEqualTo(Kind.HEALTHY);
    }

    @Test
    void nextWhenAReadyEngineSaysItIsLoadingDropsReadinessAtOnce() {
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));

        EngineState loading = rules.next(ready, new Observation.Loading(t(5), "/health: 503 Loading model"));

        assertThat(loading.kind()).isEqualTo(Kind.LISTENING);
        assertThat(loading.reason()).isEqualTo(Reason.ENGINE_LOADING);
        assertThat(loading.acceptsTraffic()).isFalse();
    }

    @Test
    void nextWhenReadyEngineFailsNeedsTheFailureThresholdAndDegradesMeanwhile() {
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));
        EngineState once = rules.next(ready, failed(5, Reason.TIMED_OUT));
        assertThat(once).isEqualTo(new EngineState.Degraded(t(5), MODEL, Check.VERIFICATION, Reason.TIMED_OUT, "x"));
        assertThat(once.acceptsTraffic()).isTrue();
        EngineState twice = rules.next(once, new Observation.CheckFailed(t(6), Reason.HEALTH_FAILED, "500"));
        assertThat(twice.kind()).isEqualTo(Kind.DEGRADED);
        EngineState thrice = rules.next(twice, failed(7, Reason.HTTP_STATUS));
        assertThat(thrice.kind()).isEqualTo(Kind.NOT_READY);
        assertThat(thrice.reason()).isEqualTo(Reason.HTTP_STATUS);
        assertThat(thrice.acceptsTraffic()).isFalse();
    }

    @Test
    void nextWhenDegradedAndVerifiedAgainIsReadyAgain() {
        EngineState degraded = run(ok(1), listed(2), verified(3), verified(4), failed(5, Reason.SLOW));
        assertThat(rules.next(degraded, verified(6)).kind()).isEqualTo(Kind.READY);
    }

    @Test
    void nextWhenDegradedByCheapChecksRecoversOnAPassingCheapCheck() {
        EngineState degraded = run(
                ok(1),
                listed(2),
                verified(3),
                verified(4),
                new Observation.CheckFailed(t(5), Reason.HEALTH_FAILED, "timeout"));
        assertThat(rules.next(degraded, ok(6)).kind()).isEqualTo(Kind.READY);
        EngineState probeDegraded = run(ok(1), listed(2), verified(3), verified(4), failed(5, Reason.SLOW));
        assertThat(rules.next(probeDegraded, ok(6)).kind()).isEqualTo(Kind.DEGRADED);
    }

    @Test
    void nextWhenNotReadyRecoveryNeedsTheSuccessThreshold() {
        EngineState notReady = run(
                ok(1),
                listed(2),
                verified(3),
                verified(4),
                failed(5, Reason.TIMED_OUT),
                failed(6, Reason.TIMED_OUT),
                failed(7, Reason.TIMED_OUT));
        EngineState once = rules.next(notReady, verified(8));
        assertThat(once.kind()).isEqualTo(Kind.NOT_READY);
        assertThat(rules.next(once, verified(9))).isEqualTo(new EngineState.Ready(t(9), MODEL));
        EngineState interrupted = rules.next(once, failed(9, Reason.TIMED_OUT));
        assertThat(rules.next(interrupted, verified(10)).kind()).isEqualTo(Kind.NOT_READY);
    }

    static Stream<Arguments> oneFaultOneWord() {
        return Stream.of(
                // The light checks took it out; the heavy probes then meet the same fault: their word stays.
                Arguments.of(Reason.GENERATION_FAILED, Reason.ERROR_EVENT, Reason.GENERATION_FAILED),
                Arguments.of(Reason.GENERATION_FAILED, Reason.HTTP_STATUS, Reason.GENERATION_FAILED),
                Arguments.of(Reason.GENERATION_FAILED, Reason.TRUNCATED_STREAM, Reason.GENERATION_FAILED),
                Arguments.of(Reason.GENERATION_TIMED_OUT, Reason.TIMED_OUT, Reason.GENERATION_TIMED_OUT),
                Arguments.of(Reason.GENERATION_STALLED, Reason.STALLED, Reason.GENERATION_STALLED),
                // Another fault says its own word.
                Arguments.of(Reason.GENERATION_FAILED, Reason.TIMED_OUT, Reason.TIMED_OUT),
                Arguments.of(Reason.GENERATION_TIMED_OUT, Reason.ERROR_EVENT, Reason.ERROR_EVENT),
                Arguments.of(Reason.GENERATION_FAILED, Reason.SLOW, Reason.SLOW),
                Arguments.of(Reason.GENERATION_FAILED, Reason.PROMPT_TOKENS_MISMATCH, Reason.PROMPT_TOKENS_MISMATCH),
                // Out for a heavy probe's failure: the heavy probes' words as before.
                Arguments.of(Reason.TIMED_OUT, Reason.ERROR_EVENT, Reason.ERROR_EVENT),
                Arguments.of(Reason.HEALTH_FAILED, Reason.ERROR_EVENT, Reason.ERROR_EVENT));
    }

    @ParameterizedTest(name = "out for {0}, a heavy probe fails with {1}: {2}")
    @MethodSource
    void oneFaultOneWord(Reason out, Reason heavy, Reason expected) {
        EngineState notReady = new EngineState.NotReady(t(1), MODEL, 0, out, "light");
        EngineState next = rules.next(notReady, failed(2, heavy));
        assertThat(next.kind()).isEqualTo(Kind.NOT_READY);
        assertThat(next.reason()).isEqualTo(expected);
        assertThat(ReadinessRules.sameFault(out, heavy)).isEqualTo(expected);
    }

    @Test
    void nextWhenVerificationFailsBeforeReadinessIsVerificationFailedWithTheReason() {
        EngineState state = run(ok(1), listed(2), failed(3, Reason.PROMPT_TOKENS_MISMATCH));
        assertThat(state)
                .isEqualTo(
                        new EngineState.VerificationFailed(t(3), MODEL, Reason.PROMPT_TOKENS_MISMATCH, "x", false, 1));
        EngineState again = rules.next(state, failed(4, Reason.PROMPT_TOKENS_MISMATCH));
        assertThat(again.since()).isEqualTo(t(3));
        assertThat(((EngineState.VerificationFailed) again).failures()).isEqualTo(2);
        assertThat(rules.next(again, verified(5)).kind()).isEqualTo(Kind.VERIFYING);
    }

    @Test
    void latchedCanaryMismatchHoldsUntilTheEngineRestarts() {
        EngineState mismatch = run(ok(1), listed(2), latched(3, Reason.CANARY_MISMATCH));
        assertThat(mismatch.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        EngineState stillLatched = rules.next(rules.next(mismatch, verified(4)), verified(5));
        assertThat(stillLatched.kind()).isEqualTo(Kind.VERIFICATION_FAILED);
        assertThat(rules.next(stillLatched, ok(6))).isEqualTo(stillLatched);
        EngineState restarted = rules.next(stillLatched, new Observation.Restarted(t(7), "new process"));
        assertThat(restarted).isEqualTo(new EngineState.Healthy(t(7), Reason.ENGINE_RESTARTED, "new process"));
        EngineState wentDown = rules.next(stillLatched, new Observation.Unreachable(t(7), Reason.ENGINE_DOWN, "x"));
        assertThat(rules.next(wentDown, ok(8)).kind()).isEqualTo(Kind.HEALTHY);
    }

    /** Where a latched failure finds the start, and what the state must then say: was it ever ready? */
    static Stream<Arguments> latchedFailures() {
        ReadinessRules rules = new ReadinessRules(2, 3);
        EngineState modelListed = replay(rules, ok(1), listed(2));
        EngineState verifying = replay(rules, ok(1), listed(2), verified(3));
        EngineState failedBefore = replay(rules, ok(1), listed(2), failed(3, Reason.TIMED_OUT));
        EngineState ready = replay(rules, ok(1), listed(2), verified(3), verified(4));
        EngineState degraded = rules.next(ready, failed(5, Reason.SLOW));
        EngineState notReady = replay(
                rules,
                ok(1),
                listed(2),
                verified(3),
                verified(4),
                failed(5, Reason.TIMED_OUT),
                failed(6, Reason.TIMED_OUT),
                failed(7, Reason.TIMED_OUT));
        return Stream.of(
                Arguments.of("model listed, never verified", modelListed, Kind.VERIFICATION_FAILED),
                Arguments.of("verifying, never ready", verifying, Kind.VERIFICATION_FAILED),
                Arguments.of("failed before ever ready", failedBefore, Kind.VERIFICATION_FAILED),
                Arguments.of("ready", ready, Kind.NOT_READY),
                Arguments.of("degraded (was ready)", degraded, Kind.NOT_READY),
                Arguments.of("not ready after failures (was ready)", notReady, Kind.NOT_READY));
    }

    static EngineState replay(ReadinessRules rules, Observation... observations) {
        EngineState state = new EngineState.Starting(T0);
        for (Observation observation : observations) {
            state = rules.next(state, observation);
        }
        return state;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("latchedFailures")
    void nextWhenLatchedFailureSaysWhetherTheStartHadBeenReady(String where, EngineState before, Kind expected) {
        EngineState latched = rules.next(before, latched(20, Reason.CANARY_MISMATCH));
        assertThat(latched.kind()).as(where).isEqualTo(expected);
        assertThat(latched.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(latched.since()).isEqualTo(t(20));
        assertThat(latched.acceptsTraffic()).isFalse();
        boolean isLatched = switch (latched) {
            case EngineState.NotReady n -> n.latched();
            case EngineState.VerificationFailed f -> f.latched();
            default -> false;
        };
        assertThat(isLatched).as("latched").isTrue();
        // Held until the engine restarts: verifications, cheap checks and other failures change nothing.
        EngineState held = rules.next(
                rules.next(
                        rules.next(rules.next(latched, verified(21)), verified(22)),
                        new Observation.CheckFailed(t(23), Reason.HEALTH_FAILED, "500")),
                failed(24, Reason.TIMED_OUT));
        assertThat(held).isEqualTo(latched);
        assertThat(rules.next(held, ok(25))).isEqualTo(latched);
        assertThat(rules.next(held, new Observation.Restarted(t(26), "new process")))
                .isEqualTo(new EngineState.Healthy(t(26), Reason.ENGINE_RESTARTED, "new process"));
        assertThat(rules.next(held, new Observation.Unreachable(t(26), Reason.ENGINE_DOWN, "refused"))
                        .kind())
                .isEqualTo(Kind.DOWN);
    }

    @Test
    void nextWhenAReadyStartLatchesTheStateIsNotVerificationFailed() {
        // The finding: a wrong-weights start that had been ready read "verification_failed" (before ever ready).
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));
        assertThat(rules.next(ready, latched(5, Reason.CANARY_MISMATCH)))
                .isEqualTo(new EngineState.NotReady(t(5), MODEL, 0, Reason.CANARY_MISMATCH, "x", true));
    }

    @Test
    void latchedFailureTakesAReadyEngineOutAtOnce() {
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));
        assertThat(rules.next(ready, latched(5, Reason.CANARY_MISMATCH)).acceptsTraffic())
                .isFalse();
    }

    @Test
    void busyChangesNothing() {
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));
        assertThat(rules.next(ready, new Observation.Busy(t(5), "running 8"))).isEqualTo(ready);
    }

    @Test
    void staleVerificationBeforeTheModelIsListedChangesNothing() {
        EngineState healthy = run(ok(1));
        assertThat(rules.next(healthy, verified(2))).isEqualTo(healthy);
        assertThat(rules.next(healthy, failed(2, Reason.TIMED_OUT))).isEqualTo(healthy);
    }

    @Test
    void cheapCheckFailureDuringVerificationGoesBackToListening() {
        EngineState verifying = run(ok(1), listed(2), verified(3));
        assertThat(rules.next(verifying, new Observation.CheckFailed(t(4), Reason.HEALTH_FAILED, "500"))
                        .kind())
                .isEqualTo(Kind.LISTENING);
    }

    @Test
    void modelNotListedKeepsTheEngineHealthyWithThatReason() {
        EngineState healthy = run(ok(1), new Observation.CheckFailed(t(2), Reason.MODEL_NOT_LISTED, "empty list"));
        assertThat(healthy.kind()).isEqualTo(Kind.HEALTHY);
        assertThat(healthy.reason()).isEqualTo(Reason.MODEL_NOT_LISTED);
    }

    @Test
    void shutdownIsFinal() {
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));
        EngineState down = rules.next(ready, new Observation.ShutdownRequested(t(5)));
        assertThat(down.kind()).isEqualTo(Kind.SHUTTING_DOWN);
        assertThat(rules.next(down, verified(6))).isEqualTo(down);
        assertThat(rules.next(down, ok(6))).isEqualTo(down);
    }

    @Test
    void downKeepsItsSinceWhileTheReasonStaysTheSame() {
        EngineState down = run(
                new Observation.Unreachable(t(1), Reason.ENGINE_DOWN, "a"),
                new Observation.Unreachable(t(2), Reason.ENGINE_DOWN, "b"));
        assertThat(down.since()).isEqualTo(t(1));
    }

    @Test
    void newEngineProcessInTheLogIsDownUntilItListensWhateverCameBefore() {
        Observation header = new Observation.ProcessStarted(t(5), t(4), "s1", false, "engine log: a new process");
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));

        EngineState loading = rules.next(ready, header);

        assertThat(loading).isEqualTo(new EngineState.Down(t(5), Reason.ENGINE_DOWN, "engine log: a new process"));
        assertThat(rules.next(loading, ok(9)).kind()).isEqualTo(Kind.HEALTHY);
        assertThat(rules.next(new EngineState.Starting(T0), header)).isEqualTo(loading);
    }

    @Test
    void startThatFailedIsDownWithVllmsReasonWhileThePortStaysClosed() {
        String oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.";
        EngineState loading = run(new Observation.ProcessStarted(t(1), t(1), null, false, "header"));

        EngineState failed = rules.next(loading, new Observation.StartFailed(t(7), "s1", oom));
        EngineState stillFailed =
                rules.next(failed, new Observation.Unreachable(t(8), Reason.ENGINE_DOWN, "/health: refused"));

        assertThat(failed).isEqualTo(new EngineState.Down(t(7), Reason.START_FAILED, oom));
        assertThat(stillFailed).isEqualTo(failed);
        // The next start clears it; so does a port that answers.
        assertThat(rules.next(failed, new Observation.ProcessStarted(t(9), t(9), null, false, "header"))
                        .reason())
                .isEqualTo(Reason.ENGINE_DOWN);
        assertThat(rules.next(failed, ok(9)).kind()).isEqualTo(Kind.HEALTHY);
        assertThat(rules.next(failed, new Observation.EngineDead(t(9), "503")).reason())
                .isEqualTo(Reason.ENGINE_DEAD);
    }

    @Test
    void thresholdsMustBePositive() {
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException().isThrownBy(() -> new ReadinessRules(0, 1));
    }

    @Test
    void everyChangeOfKindTheRulesMakeIsAListedTransition() {
        List<EngineState> states = List.of(
                new EngineState.Starting(T0),
                new EngineState.Down(T0, Reason.ENGINE_DOWN, "refused"),
                new EngineState.Down(T0, Reason.START_FAILED, "torch.OutOfMemoryError: CUDA out of memory."),
                new EngineState.Listening(T0, Reason.HEALTH_FAILED, "503"),
                new EngineState.Healthy(T0, Reason.MODEL_NOT_LISTED, ""),
                new EngineState.ModelListed(T0, MODEL, Reason.NOT_VERIFIED),
                new EngineState.Verifying(T0, MODEL, 1, Reason.NOT_VERIFIED),
                new EngineState.Ready(T0, MODEL),
                new EngineState.Degraded(T0, MODEL, Check.HEALTH, Reason.HEALTH_FAILED, "x"),
                new EngineState.Degraded(T0, MODEL, Check.MODEL, Reason.MODEL_NOT_LISTED, "x"),
                new EngineState.Degraded(T0, MODEL, Check.VERIFICATION, Reason.SLOW, "x"),
                new EngineState.Degraded(T0, MODEL, Check.GENERATION, Reason.GENERATION_FAILED, "x"),
                new EngineState.Degraded(T0, MODEL, Check.TRAFFIC, Reason.ERROR_EVENT, "x"),
                new EngineState.Degraded(
                        T0,
                        MODEL,
                        java.util.Map.of(
                                Check.HEALTH,
                                new EngineState.Degraded.Failing(1, Reason.CONNECTION_RESET, "x", T0),
                                Check.VERIFICATION,
                                new EngineState.Degraded.Failing(1, Reason.TIMED_OUT, "x", T0))),
                new EngineState.Held(T0, MODEL, t(30), "loop"),
                new EngineState.NotReady(T0, MODEL, 0, Reason.SLOW, "x"),
                new EngineState.VerificationFailed(T0, MODEL, Reason.SLOW, "x", false, 1),
                new EngineState.VerificationFailed(T0, MODEL, Reason.CANARY_MISMATCH, "x", true, 1),
                new EngineState.ShuttingDown(T0));
        List<Observation> observations = List.of(
                new Observation.Unreachable(t(1), Reason.ENGINE_DOWN, "refused"),
                new Observation.EngineDead(t(1), "503"),
                new Observation.CheckFailed(t(1), Reason.HEALTH_FAILED, "x"),
                new Observation.CheckFailed(t(1), Reason.MODEL_NOT_LISTED, "x"),
                new Observation.CheckFailed(t(1), Reason.CONNECTION_RESET, "x"),
                new Observation.CheckFailed(t(1), Check.GENERATION, Reason.GENERATION_TIMED_OUT, "x"),
                new Observation.Generated(t(1), "x"),
                new Observation.CheckFailed(t(1), Check.TRAFFIC, Reason.ERROR_EVENT, "x"),
                new Observation.Served(t(1), "x"),
                ok(1),
                listed(1),
                new Observation.Restarted(t(1), "x"),
                verified(1),
                failed(1, Reason.SLOW),
                latched(1, Reason.CANARY_MISMATCH),
                new Observation.Busy(t(1), "x"),
                new Observation.ProcessStarted(t(1), t(0), null, false, "header"),
                new Observation.StartFailed(t(1), "s1", "torch.OutOfMemoryError: CUDA out of memory."),
                new Observation.ShutdownRequested(t(1)));
        for (ReadinessRules thresholds : List.of(new ReadinessRules(1, 1), new ReadinessRules(2, 3))) {
            for (Instant heldUntil : java.util.Arrays.asList(null, t(30))) {
                for (EngineState state : states) {
                    for (Observation observation : observations) {
                        Kind next = thresholds
                                .step(state, observation, heldUntil)
                                .state()
                                .kind();
                        if (next != state.kind()) {
                            assertThat(ReadinessRules.TRANSITIONS.get(state.kind()))
                                    .as("%s after %s", state, observation)
                                    .contains(next);
                        }
                    }
                }
            }
        }
    }

    /** Every reason each check fails a ready engine with, and the observation that is that check passing. */
    static Stream<Arguments> failuresAndPasses() {
        List<Arguments> cases = new ArrayList<>();
        for (Reason reason : List.of(Reason.HEALTH_FAILED, Reason.CONNECTION_RESET)) {
            cases.add(Arguments.of(Check.HEALTH, reason, new Observation.HealthOk(T0)));
        }
        cases.add(Arguments.of(Check.MODEL, Reason.MODEL_NOT_LISTED, new Observation.ModelListed(T0, MODEL)));
        for (Reason reason :
                List.of(Reason.GENERATION_FAILED, Reason.GENERATION_TIMED_OUT, Reason.GENERATION_STALLED)) {
            cases.add(Arguments.of(Check.GENERATION, reason, new Observation.Generated(T0, "ok")));
        }
        // Gateway mode: a client request the engine failed, as a probe failing the same way is named; one served whole.
        for (Reason reason : List.of(
                Reason.CONNECTION_RESET,
                Reason.TIMED_OUT,
                Reason.STALLED,
                Reason.HTTP_STATUS,
                Reason.TRUNCATED_STREAM,
                Reason.ERROR_EVENT)) {
            cases.add(Arguments.of(Check.TRAFFIC, reason, new Observation.Served(T0, "ok")));
        }
        for (Reason reason : List.of(
                Reason.CONNECTION_RESET,
                Reason.TIMED_OUT,
                Reason.STALLED,
                Reason.HTTP_STATUS,
                Reason.MALFORMED_RESPONSE,
                Reason.TRUNCATED_STREAM,
                Reason.ERROR_EVENT,
                Reason.RESPONSE_TOO_LARGE,
                Reason.PROMPT_TOKENS_MISMATCH,
                Reason.COMPLETION_TOKENS_MISMATCH,
                Reason.UNEXPECTED_FINISH_REASON,
                Reason.SLOW,
                Reason.IO_ERROR)) {
            cases.add(Arguments.of(Check.VERIFICATION, reason, new Observation.Verified(T0, "ok")));
        }
        return cases.stream();
    }

    static Observation failure(Check check, Reason reason, int s) {
        return check == Check.VERIFICATION
                ? new Observation.VerificationFailed(t(s), reason, "x", false)
                : new Observation.CheckFailed(t(s), check, reason, "x");
    }

    static Observation at(Observation pass, int s) {
        return switch (pass) {
            case Observation.HealthOk o -> ok(s);
            case Observation.ModelListed o -> listed(s);
            case Observation.Generated o -> new Observation.Generated(t(s), "ok");
            case Observation.Served o -> new Observation.Served(t(s), "ok");
            case Observation.Verified o -> verified(s);
            default -> throw new IllegalArgumentException(pass.toString());
        };
    }

    @ParameterizedTest
    @MethodSource("failuresAndPasses")
    void failuresSeparatedByPassesOfTheSameCheckNeverAddUp(Check check, Reason reason, Observation pass) {
        EngineState state = run(ok(1), listed(2), verified(3), verified(4));
        for (int round = 0; round < 10; round++) {
            state = rules.next(state, failure(check, reason, 10 + 2 * round));
            assertThat(state).as("after failure %d", round + 1).isInstanceOf(EngineState.Degraded.class);
            assertThat(((EngineState.Degraded) state).failures()).isEqualTo(1);
            assertThat(state.reason()).isEqualTo(reason);
            state = rules.next(state, at(pass, 11 + 2 * round));
            assertThat(state).as("after pass %d", round + 1).isEqualTo(new EngineState.Ready(t(11 + 2 * round), MODEL));
        }
    }

    @ParameterizedTest
    @MethodSource("failuresAndPasses")
    void consecutiveFailuresOfOneCheckTakeTheEngineOutAtTheThreshold(Check check, Reason reason, Observation pass) {
        EngineState state = run(ok(1), listed(2), verified(3), verified(4));
        state = rules.next(state, failure(check, reason, 10));
        state = rules.next(state, failure(check, reason, 11));
        assertThat(state.kind()).isEqualTo(Kind.DEGRADED);
        state = rules.next(state, failure(check, reason, 12));
        assertThat(state.kind()).isEqualTo(Kind.NOT_READY);
        assertThat(state.reason()).isEqualTo(reason);
    }

    @ParameterizedTest
    @MethodSource("failuresAndPasses")
    void passesOfAnotherCheckDoNotEndAFailingRun(Check check, Reason reason, Observation pass) {
        Observation other = check == Check.HEALTH ? listed(0) : ok(0);
        EngineState state = run(ok(1), listed(2), verified(3), verified(4));
        state = rules.next(state, failure(check, reason, 10));
        state = rules.next(state, at(other, 11));
        state = rules.next(state, failure(check, reason, 12));
        state = rules.next(state, at(other, 13));
        assertThat(state.kind()).isEqualTo(Kind.DEGRADED);
        assertThat(rules.next(state, failure(check, reason, 14)).kind()).isEqualTo(Kind.NOT_READY);
    }

    @Test
    void aPassingHealthCheckEndsOnlyTheHealthFailuresNotAFailingVerification() {
        EngineState state = run(
                ok(1),
                listed(2),
                verified(3),
                verified(4),
                new Observation.CheckFailed(t(5), Reason.CONNECTION_RESET, "reset"),
                failed(6, Reason.ERROR_EVENT));
        assertThat(((EngineState.Degraded) state).failures()).isEqualTo(2);
        state = rules.next(state, ok(7));
        assertThat(state).isInstanceOf(EngineState.Degraded.class);
        assertThat(((EngineState.Degraded) state).failing()).containsOnlyKeys(Check.VERIFICATION);
        assertThat(state.reason()).isEqualTo(Reason.ERROR_EVENT);
        assertThat(state.since()).isEqualTo(t(5));
        assertThat(rules.next(state, verified(8)).kind()).isEqualTo(Kind.READY);
    }

    static Stream<Arguments> ignoredObservations() {
        EngineState healthy = new EngineState.Healthy(T0, Reason.MODEL_NOT_LISTED, "");
        EngineState latched = new EngineState.VerificationFailed(T0, MODEL, Reason.CANARY_MISMATCH, "x", true, 1);
        EngineState notReady = new EngineState.NotReady(T0, MODEL, 0, Reason.TIMED_OUT, "x");
        return Stream.of(
                Arguments.of(healthy, verified(1), ReadinessRules.Ignored.STALE),
                Arguments.of(healthy, failed(1, Reason.TIMED_OUT), ReadinessRules.Ignored.STALE),
                Arguments.of(
                        new EngineState.Down(T0, Reason.ENGINE_DOWN, "x"), listed(1), ReadinessRules.Ignored.STALE),
                Arguments.of(notReady, new Observation.Generated(t(1), "ok"), ReadinessRules.Ignored.STALE),
                // A client's request that ended after the engine stopped serving says nothing of it now.
                Arguments.of(notReady, new Observation.Served(t(1), "ok"), ReadinessRules.Ignored.STALE),
                Arguments.of(
                        notReady,
                        new Observation.CheckFailed(t(1), Check.TRAFFIC, Reason.ERROR_EVENT, "x"),
                        ReadinessRules.Ignored.STALE),
                Arguments.of(
                        notReady,
                        new Observation.CheckFailed(t(1), Check.GENERATION, Reason.GENERATION_FAILED, "x"),
                        ReadinessRules.Ignored.STALE),
                Arguments.of(latched, verified(1), ReadinessRules.Ignored.LATCHED),
                Arguments.of(latched, failed(1, Reason.TIMED_OUT), ReadinessRules.Ignored.LATCHED),
                Arguments.of(
                        latched,
                        new Observation.CheckFailed(t(1), Reason.HEALTH_FAILED, "x"),
                        ReadinessRules.Ignored.LATCHED),
                Arguments.of(new EngineState.ShuttingDown(T0), ok(1), ReadinessRules.Ignored.SHUT_DOWN));
    }

    @ParameterizedTest
    @MethodSource("ignoredObservations")
    void anObservationTheRulesCannotUseIsSaidToBeIgnored(
            EngineState state, Observation observation, ReadinessRules.Ignored why) {
        ReadinessRules.Step step = rules.step(state, observation, null);
        assertThat(step.state()).isEqualTo(state);
        assertThat(step.ignored()).isEqualTo(why);
    }

    @Test
    void confirmationsAreUsedNotIgnored() {
        EngineState ready = run(ok(1), listed(2), verified(3), verified(4));
        for (Observation confirmation : List.of(
                ok(5),
                listed(5),
                verified(5),
                new Observation.Generated(t(5), "ok"),
                new Observation.Served(t(5), "ok"))) {
            assertThat(rules.step(ready, confirmation, null)).isEqualTo(new ReadinessRules.Step(ready, null));
        }
    }

    @Test
    void aStartOfARestartLoopIsHeldUntilItHasStayedUpThenVerifiedAgain() {
        ReadinessRules once = new ReadinessRules(1, 3);
        EngineState listedState = new EngineState.ModelListed(t(1), MODEL, Reason.NOT_VERIFIED);
        ReadinessRules.Step held = once.step(listedState, verified(2), t(60));
        assertThat(held.state()).isInstanceOf(EngineState.Held.class);
        assertThat(held.state().acceptsTraffic()).isFalse();
        assertThat(held.state().reason()).isEqualTo(Reason.RESTART_LOOP);
        assertThat(((EngineState.Held) held.state()).until()).isEqualTo(t(60));
        // Verified again before the hold ends: still held, since unchanged.
        EngineState stillHeld = once.step(held.state(), verified(30), t(60)).state();
        assertThat(stillHeld).isEqualTo(held.state());
        // After it: ready.
        assertThat(once.step(stillHeld, verified(60), t(60)).state()).isEqualTo(new EngineState.Ready(t(60), MODEL));
        // A failing /health while held: listening, like any engine not yet ready.
        assertThat(once.step(stillHeld, new Observation.CheckFailed(t(31), Reason.HEALTH_FAILED, "x"), t(60))
                        .state()
                        .kind())
                .isEqualTo(Kind.LISTENING);
        // No hold outside a loop.
        assertThat(once.step(listedState, verified(2), null).state().kind()).isEqualTo(Kind.READY);
    }

    @Test
    void aServingEngineIsNeverHeld() {
        EngineState degraded = new EngineState.Degraded(t(1), MODEL, Check.VERIFICATION, Reason.TIMED_OUT, "x");
        assertThat(rules.step(degraded, verified(2), t(60)).state().kind()).isEqualTo(Kind.READY);
    }
}
