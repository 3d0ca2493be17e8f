package dev.readygate.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineState.Degraded;
import dev.readygate.readiness.EngineState.Down;
import dev.readygate.readiness.EngineState.Healthy;
import dev.readygate.readiness.EngineState.Listening;
import dev.readygate.readiness.EngineState.ModelListed;
import dev.readygate.readiness.EngineState.Ready;
import dev.readygate.readiness.EngineState.ShuttingDown;
import dev.readygate.readiness.EngineState.Sleeping;
import dev.readygate.readiness.EngineState.Starting;
import dev.readygate.readiness.EngineState.VerificationFailed;
import java.time.Instant;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Where engine starts begin and end: one row per kind of state change. */
class StartRulesTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final String MODEL = "Qwen/Qwen3-0.6B";
    static final EngineStart RUNNING = new EngineStart("s1", T0, StartSource.FIRST_OBSERVED, true);
    /** A start the engine log began, its port not open yet. */
    static final EngineStart LOADING = new EngineStart("s1", T0, StartSource.LOG, false);

    static final String OOM = "torch.OutOfMemoryError: CUDA out of memory.";

    static Observation header(int seconds, @Nullable String follows) {
        return new Observation.ProcessStarted(t(seconds + 1), t(seconds), follows, false, "engine log: new process");
    }

    static EngineState loading(int seconds) {
        return new Down(t(seconds), Reason.ENGINE_DOWN, "engine log: new process");
    }

    static Instant t(int seconds) {
        return T0.plusSeconds(seconds);
    }

    static Observation ok(int seconds) {
        return new Observation.HealthOk(t(seconds));
    }

    /** A start the rules stamp now: always the id {@code s2}. */
    static EngineStart began(Instant since, StartSource source, boolean firstSeen) {
        return new EngineStart("s2", since, source, firstSeen);
    }

    static Stream<Arguments> changes() {
        return Stream.of(
                // The first state that answers begins the first start readygate sees, dated when it was seen.
                Arguments.of(
                        null,
                        new Starting(T0),
                        new Healthy(t(1), Reason.MODEL_NOT_LISTED, ""),
                        ok(1),
                        began(t(1), StartSource.FIRST_OBSERVED, true)),
                Arguments.of(
                        null,
                        new Starting(T0),
                        new Listening(t(1), Reason.HEALTH_FAILED, "503"),
                        new Observation.CheckFailed(t(1), Reason.HEALTH_FAILED, "503"),
                        began(t(1), StartSource.FIRST_OBSERVED, true)),
                // An engine loading its model at readygate's first look (llama.cpp's 503) had not served: readygate
                // sees
                // this start before it is ready, so it is no first-seen start (vLLM refuses the port while loading).
                Arguments.of(
                        null,
                        new Starting(T0),
                        new Listening(t(1), Reason.ENGINE_LOADING, "503 Loading model"),
                        new Observation.Loading(t(1), "503 Loading model"),
                        began(t(1), StartSource.FIRST_OBSERVED, false)),
                // Nothing answers: no start yet.
                Arguments.of(
                        null,
                        new Starting(T0),
                        new Down(t(1), Reason.ENGINE_DOWN, "refused"),
                        new Observation.Unreachable(t(1), Reason.ENGINE_DOWN, "refused"),
                        null),
                // After the engine went away, a start is dated by when that was seen: it started at or after it.
                Arguments.of(
                        null,
                        new Down(t(5), Reason.ENGINE_DOWN, "refused"),
                        new Healthy(t(9), Reason.MODEL_NOT_LISTED, ""),
                        ok(9),
                        began(t(5), StartSource.OBSERVED_DOWN, false)),
                Arguments.of(
                        null,
                        new Down(t(5), Reason.ENGINE_DEAD, "503"),
                        new Listening(t(9), Reason.HEALTH_FAILED, "timed out"),
                        new Observation.CheckFailed(t(9), Reason.HEALTH_FAILED, "timed out"),
                        began(t(5), StartSource.OBSERVED_DOWN, false)),
                // Going away, or readygate stopping, ends the start.
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new Down(t(9), Reason.ENGINE_DOWN, "refused"),
                        new Observation.Unreachable(t(9), Reason.ENGINE_DOWN, "refused"),
                        null),
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new Down(t(9), Reason.ENGINE_DEAD, "503"),
                        new Observation.EngineDead(t(9), "503"),
                        null),
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new ShuttingDown(t(9)),
                        new Observation.ShutdownRequested(t(9)),
                        null),
                // A new process nobody saw go away: a new start, at its process start time when the metrics say.
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new Healthy(t(9), Reason.ENGINE_RESTARTED, "process_start_time_seconds changed"),
                        new Observation.Restarted(t(9), "process_start_time_seconds changed", t(7)),
                        began(t(7), StartSource.PROCESS_START_TIME, false)),
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new Healthy(t(9), Reason.ENGINE_RESTARTED, "vLLM version changed from 0.31.0 to 0.32.0"),
                        new Observation.Restarted(t(9), "vLLM version changed from 0.31.0 to 0.32.0"),
                        began(t(9), StartSource.FIRST_OBSERVED, false)),
                // A new server process's header in the log begins a start before its port opens, dated by the header.
                Arguments.of(
                        null,
                        new Down(t(5), Reason.ENGINE_DOWN, "refused"),
                        loading(9),
                        header(8, null),
                        began(t(8), StartSource.LOG, false)),
                Arguments.of(
                        null,
                        new Starting(T0),
                        loading(9),
                        new Observation.ProcessStarted(t(9), t(2), null, true, "engine log: new process"),
                        began(t(2), StartSource.LOG, true)),
                Arguments.of(
                        null,
                        new Down(t(5), Reason.START_FAILED, OOM),
                        loading(9),
                        new Observation.ProcessStarted(t(9), null, null, false, "engine log: new process"),
                        began(t(9), StartSource.FIRST_OBSERVED, false)),
                // A header after a start that ran ends it and begins the next (the port's gap went unseen).
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        loading(9),
                        header(8, "s1"),
                        began(t(8), StartSource.LOG, false)),
                // A header after a start the log began that never listened: that one is over (killed, or it died
                // without saying), this one begins.
                Arguments.of(LOADING, loading(5), loading(9), header(8, "s1"), began(t(8), StartSource.LOG, false)),
                // The start the log began is loading: a closed port keeps it, its port opening keeps it.
                Arguments.of(
                        LOADING,
                        loading(5),
                        new Down(t(5), Reason.ENGINE_DOWN, "/health: refused"),
                        new Observation.Unreachable(t(6), Reason.ENGINE_DOWN, "/health: refused"),
                        LOADING),
                Arguments.of(LOADING, loading(5), new Healthy(t(9), Reason.MODEL_NOT_LISTED, ""), ok(9), LOADING),
                // vLLM says it failed: the start is over.
                Arguments.of(
                        LOADING,
                        loading(5),
                        new Down(t(9), Reason.START_FAILED, OOM),
                        new Observation.StartFailed(t(9), "s1", OOM),
                        null),
                // Once it listened, going away ends it as any start.
                Arguments.of(
                        LOADING,
                        new Healthy(t(6), Reason.MODEL_NOT_LISTED, ""),
                        new Down(t(9), Reason.ENGINE_DOWN, "refused"),
                        new Observation.Unreachable(t(9), Reason.ENGINE_DOWN, "refused"),
                        null),
                // llama.cpp's port answers 503 "Loading model" from its first moment: that begins the start.
                Arguments.of(
                        null,
                        new Down(t(5), Reason.ENGINE_DOWN, "refused"),
                        new Listening(t(6), Reason.ENGINE_LOADING, "503 Loading model"),
                        new Observation.Loading(t(6), "503 Loading model"),
                        began(t(5), StartSource.OBSERVED_DOWN, false)),
                // Loading again after /health had passed: a new process nobody saw go away.
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new Listening(t(9), Reason.ENGINE_LOADING, "503 Loading model"),
                        new Observation.Loading(t(9), "503 Loading model"),
                        began(t(9), StartSource.FIRST_OBSERVED, false)),
                // Still loading is the same start.
                Arguments.of(
                        RUNNING,
                        new Listening(t(3), Reason.ENGINE_LOADING, "503 Loading model"),
                        new Listening(t(3), Reason.ENGINE_LOADING, "503 Loading model"),
                        new Observation.Loading(t(9), "503 Loading model"),
                        RUNNING),
                // Anything else, however bad, is the same start.
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new Degraded(t(9), MODEL, Check.VERIFICATION, Reason.TIMED_OUT, "30s"),
                        new Observation.VerificationFailed(t(9), Reason.TIMED_OUT, "30s", false),
                        RUNNING),
                Arguments.of(
                        RUNNING,
                        new ModelListed(t(3), MODEL, Reason.NOT_VERIFIED),
                        new VerificationFailed(t(9), MODEL, Reason.CANARY_MISMATCH, "wrong", true, 1),
                        new Observation.VerificationFailed(t(9), Reason.CANARY_MISMATCH, "wrong", true),
                        RUNNING),
                Arguments.of(
                        RUNNING,
                        new Healthy(t(3), Reason.MODEL_NOT_LISTED, ""),
                        new Listening(t(9), Reason.HEALTH_FAILED, "timed out"),
                        new Observation.CheckFailed(t(9), Reason.HEALTH_FAILED, "timed out"),
                        RUNNING),
                // Falling asleep ends the start that served; nothing starts while the engine sleeps, at any level.
                Arguments.of(
                        RUNNING,
                        new Ready(t(3), MODEL),
                        new Sleeping(t(9), MODEL, 1, "weights_offloaded"),
                        new Observation.Asleep(t(9), 1, "weights_offloaded"),
                        null),
                Arguments.of(
                        null,
                        new Sleeping(t(9), MODEL, 1, "weights_offloaded"),
                        new Sleeping(t(9), MODEL, 2, "discard_all"),
                        new Observation.Asleep(t(12), 2, "discard_all"),
                        null),
                // Its wake begins a start: the same process, dated when the engine said it is awake, with its sleep.
                Arguments.of(
                        null,
                        new Sleeping(t(9), MODEL, 2, "discard_all"),
                        new ModelListed(t(40), MODEL, Reason.NOT_VERIFIED),
                        new Observation.Awake(t(40), "awake"),
                        new EngineStart("s2", t(40), StartSource.WAKE, false, new EngineStart.Slept(2, t(9), t(40)))),
                // A new process while it slept is a restart as any other.
                Arguments.of(
                        null,
                        new Sleeping(t(9), MODEL, 1, "weights_offloaded"),
                        new Healthy(t(12), Reason.ENGINE_RESTARTED, "process_start_time_seconds changed"),
                        new Observation.Restarted(t(12), "process_start_time_seconds changed", t(10)),
                        began(t(10), StartSource.PROCESS_START_TIME, false)));
    }

    @ParameterizedTest
    @MethodSource("changes")
    void nextDecidesWhereAStartBeginsAndEnds(
            @Nullable EngineStart start,
            EngineState previous,
            EngineState current,
            Observation cause,
            @Nullable EngineStart expected) {
        assertThat(StartRules.next(start, previous, current, cause, () -> "s2")).isEqualTo(expected);
    }

    static Stream<Arguments> news() {
        return Stream.of(
                // A header after start s1 while s1 is current, or after none while none is: it is news.
                Arguments.of(RUNNING, header(8, "s1"), true),
                Arguments.of(null, header(8, null), true),
                Arguments.of(null, header(8, "s1"), true),
                // A start began meanwhile (the probes saw its port before the log tail read its header): the header is
                // that start's own.
                Arguments.of(RUNNING, header(8, null), false),
                Arguments.of(RUNNING, header(8, "s0"), false),
                // vLLM's failure of the current start, and of another one.
                Arguments.of(LOADING, new Observation.StartFailed(t(9), "s1", OOM), true),
                Arguments.of(LOADING, new Observation.StartFailed(t(9), "s0", OOM), false),
                Arguments.of(null, new Observation.StartFailed(t(9), "s1", OOM), false),
                // Every probe observation concerns the current start.
                Arguments.of(RUNNING, ok(9), true),
                Arguments.of(null, ok(9), true));
    }

    @ParameterizedTest
    @MethodSource("news")
    void concernsWhenTheLogNamesAnotherStartThanTheCurrentOneIsFalse(
            @Nullable EngineStart start, Observation observation, boolean expected) {
        assertThat(StartRules.concerns(start, observation)).isEqualTo(expected);
    }
}
