package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gateway.AdmissionRules.Decision;
import dev.readygate.gateway.AdmissionRules.Situation;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.Reason;
import dev.readygate.restart.RestartPath;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link AdmissionRules#decide} as a table: one row per rule and per kind of engine state. */
class AdmissionRulesTests {

    static final Instant NOW = Instant.parse("2026-12-03T12:00:00Z");
    static final Duration HOLD_FOR = Duration.ofSeconds(30);
    static final RetryAfter FOUR_SECONDS = new RetryAfter(Duration.ofSeconds(4), RetryAfter.Basis.MEDIAN);
    static final RetryAfter TWO_MINUTES = new RetryAfter(Duration.ofMinutes(2), RetryAfter.Basis.MEDIAN);
    static final RetryAfter UNRECORDED = new RetryAfter(RetryAfter.NO_HISTORY, RetryAfter.Basis.NO_HISTORY);

    static final EngineState READY = new EngineState.Ready(NOW, "m");
    static final EngineState DEGRADED =
            new EngineState.Degraded(NOW, "m", Check.GENERATION, Reason.GENERATION_FAILED, "x");
    static final EngineState DOWN = new EngineState.Down(NOW, Reason.ENGINE_DOWN, "refused");
    static final EngineState LISTENING = new EngineState.Listening(NOW, Reason.HEALTH_FAILED, "503");
    static final EngineState VERIFYING = new EngineState.Verifying(NOW, "m", 1, Reason.NOT_VERIFIED);
    static final EngineState START_FAILED = new EngineState.Down(NOW, Reason.START_FAILED, "OOM");
    static final EngineState LATCHED = new EngineState.NotReady(NOW, "m", 0, Reason.CANARY_MISMATCH, "differs", true);
    static final EngineState NOT_READY = new EngineState.NotReady(NOW, "m", 0, Reason.TIMED_OUT, "3 timeouts");
    static final EngineState HELD = new EngineState.Held(NOW, "m", NOW.plusSeconds(25), "loop");

    /** A situation: {@code inFlight} of 4 streams, {@code queued} of 2 held, hold on. */
    static Situation at(EngineState state, int inFlight, int queued, RestartPath path, RetryAfter wait) {
        return new Situation(state, false, inFlight, 4, queued, 2, true, HOLD_FOR, path, wait, NOW);
    }

    /** The engine serves, a stop of it announced. */
    static Situation announced(boolean hold, int queued) {
        return new Situation(READY, true, 0, 4, queued, 2, hold, HOLD_FOR, RestartPath.COLD, FOUR_SECONDS, NOW);
    }

    static Situation ready(int inFlight, int queued) {
        return at(READY, inFlight, queued, RestartPath.COLD, FOUR_SECONDS);
    }

    static Situation starting(EngineState state, RestartPath path, RetryAfter wait, int queued) {
        return at(state, 0, queued, path, wait);
    }

    static Decision reject(OpenAiError error, long seconds, boolean close) {
        return new Decision.Reject(error, "", seconds, close);
    }

    static Decision hold(AdmissionRules.Why why) {
        return new Decision.Hold(why, NOW.plus(HOLD_FOR));
    }

    static Stream<Arguments> rows() {
        Situation draining = at(new EngineState.ShuttingDown(NOW), 0, 0, RestartPath.COLD, FOUR_SECONDS);
        Situation holdOff =
                new Situation(DOWN, false, 0, 4, 0, 2, false, HOLD_FOR, RestartPath.PRELOAD_HIT, FOUR_SECONDS, NOW);
        return Stream.of(
                Arguments.of("draining", draining, reject(OpenAiError.ENGINE_DRAINING, 1, true)),
                Arguments.of(
                        "shutting down",
                        at(new EngineState.ShuttingDown(NOW), 0, 0, RestartPath.COLD, FOUR_SECONDS),
                        reject(OpenAiError.ENGINE_DRAINING, 1, true)),
                Arguments.of("stop announced, hold on", announced(true, 1), hold(AdmissionRules.Why.START)),
                Arguments.of(
                        "stop announced, hold off",
                        announced(false, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of(
                        "stop announced, the queue full",
                        announced(true, 2),
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of("ready, a stream free", ready(3, 0), new Decision.Forward()),
                Arguments.of(
                        "degraded, a stream free",
                        at(DEGRADED, 0, 0, RestartPath.COLD, FOUR_SECONDS),
                        new Decision.Forward()),
                Arguments.of("ready, every stream taken, room to queue", ready(4, 1), hold(AdmissionRules.Why.STREAM)),
                Arguments.of(
                        "ready, every stream taken, the queue full",
                        ready(4, 2),
                        reject(OpenAiError.ENGINE_SATURATED, 1, false)),
                Arguments.of(
                        "preload hit under way, hold on",
                        starting(DOWN, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 0),
                        hold(AdmissionRules.Why.START)),
                Arguments.of(
                        "snapshot restore verifying, hold on",
                        starting(VERIFYING, RestartPath.SNAPSHOT_RESTORE, FOUR_SECONDS, 1),
                        hold(AdmissionRules.Why.START)),
                Arguments.of(
                        "preload hit, the queue full",
                        starting(LISTENING, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 2),
                        reject(OpenAiError.ENGINE_NOT_READY, 4, false)),
                Arguments.of(
                        "preload hit expected past holdFor",
                        starting(LISTENING, RestartPath.PRELOAD_HIT, TWO_MINUTES, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 60, false)),
                Arguments.of("preload hit, hold off", holdOff, reject(OpenAiError.ENGINE_NOT_READY, 4, false)),
                Arguments.of(
                        "cold start its recorded latencies say is short (a small model)",
                        starting(LISTENING, RestartPath.COLD, FOUR_SECONDS, 0),
                        hold(AdmissionRules.Why.START)),
                Arguments.of(
                        "cold start its recorded latencies say is long",
                        starting(LISTENING, RestartPath.COLD, TWO_MINUTES, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 60, false)),
                Arguments.of(
                        "cold start without a recorded latency",
                        starting(LISTENING, RestartPath.COLD, UNRECORDED, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of(
                        "preload hit without a recorded latency (a short path)",
                        starting(DOWN, RestartPath.PRELOAD_HIT, UNRECORDED, 0),
                        hold(AdmissionRules.Why.START)),
                Arguments.of(
                        "preload fallback without a recorded latency",
                        starting(DOWN, RestartPath.PRELOAD_FALLBACK, UNRECORDED, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of(
                        "unknown path without a recorded latency",
                        starting(DOWN, RestartPath.UNKNOWN, UNRECORDED, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of(
                        "a start that failed",
                        starting(START_FAILED, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, RetryAfter.MAX_SECONDS, false)),
                Arguments.of(
                        "a latched failure",
                        starting(LATCHED, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, RetryAfter.MAX_SECONDS, false)),
                Arguments.of(
                        "not ready after failures",
                        starting(NOT_READY, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of(
                        "held in a restart loop",
                        starting(HELD, RestartPath.SNAPSHOT_RESTORE, FOUR_SECONDS, 0),
                        reject(OpenAiError.ENGINE_NOT_READY, 25, false)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void decideFollowsTheTable(String row, Situation situation, Decision expected) {
        assertDecision(row, AdmissionRules.decide(situation), expected);
    }

    /** A refusal's error, Retry-After and connection as the row says (its message names the seconds); others equal. */
    static void assertDecision(String row, Decision decision, Decision expected) {
        if (expected instanceof Decision.Reject reject) {
            assertThat(decision).as(row).isInstanceOfSatisfying(Decision.Reject.class, r -> {
                assertThat(r.error()).isEqualTo(reject.error());
                assertThat(r.retryAfterSeconds()).isEqualTo(reject.retryAfterSeconds());
                assertThat(r.closeConnection()).isEqualTo(reject.closeConnection());
                assertThat(r.message()).contains(String.valueOf(reject.retryAfterSeconds()));
            });
        } else {
            assertThat(decision).as(row).isEqualTo(expected);
        }
    }

    @Test
    void startUnderWayForEveryStateKind() {
        assertThat(AdmissionRules.startUnderWay(new EngineState.Starting(NOW))).isTrue();
        assertThat(AdmissionRules.startUnderWay(DOWN)).isTrue();
        assertThat(AdmissionRules.startUnderWay(LISTENING)).isTrue();
        assertThat(AdmissionRules.startUnderWay(new EngineState.Healthy(NOW, Reason.MODEL_NOT_LISTED, "")))
                .isTrue();
        assertThat(AdmissionRules.startUnderWay(new EngineState.ModelListed(NOW, "m", Reason.NOT_VERIFIED)))
                .isTrue();
        assertThat(AdmissionRules.startUnderWay(VERIFYING)).isTrue();
        assertThat(AdmissionRules.startUnderWay(
                        new EngineState.VerificationFailed(NOW, "m", Reason.SLOW, "slow", false, 1)))
                .isTrue();
        assertThat(AdmissionRules.startUnderWay(
                        new EngineState.VerificationFailed(NOW, "m", Reason.CANARY_MISMATCH, "x", true, 1)))
                .isFalse();
        assertThat(AdmissionRules.startUnderWay(START_FAILED)).isFalse();
        assertThat(AdmissionRules.startUnderWay(READY)).isFalse();
        assertThat(AdmissionRules.startUnderWay(DEGRADED)).isFalse();
        assertThat(AdmissionRules.startUnderWay(NOT_READY)).isFalse();
        assertThat(AdmissionRules.startUnderWay(LATCHED)).isFalse();
        assertThat(AdmissionRules.startUnderWay(HELD)).isFalse();
        assertThat(AdmissionRules.startUnderWay(new EngineState.ShuttingDown(NOW)))
                .isFalse();
    }

    @Test
    void decideWhenNotReadySaysWhyAndThePathWithoutEngineText() {
        Decision decision = AdmissionRules.decide(starting(LISTENING, RestartPath.COLD, TWO_MINUTES, 0));
        assertThat(decision)
                .isEqualTo(new Decision.Reject(
                        OpenAiError.ENGINE_NOT_READY,
                        "The engine is not ready (health_failed, cold start); retry after 60 s.",
                        60,
                        false));
    }

    static final AdmissionRules.Waiting FOR_STREAM =
            new AdmissionRules.Waiting(AdmissionRules.Why.STREAM, NOW.plusSeconds(5), null, null);
    static final AdmissionRules.Waiting FOR_START =
            new AdmissionRules.Waiting(AdmissionRules.Why.START, NOW.plusSeconds(5), null, null);
    /** A retry whose first attempt failed on start s1 a second before NOW (READY's since is NOW: verified after). */
    static final AdmissionRules.Waiting RETRY_ON_S1 =
            AdmissionRules.Waiting.retry("s1", NOW.minusSeconds(1), Duration.ofSeconds(6));
    /** A retry whose first attempt failed after the engine was last verified, on the start still current. */
    static final AdmissionRules.Waiting RETRY_AFTER_VERIFIED =
            AdmissionRules.Waiting.retry("s1", NOW.plusMillis(1), Duration.ofSeconds(6));

    static Situation late(Situation s) {
        return new Situation(
                s.state(),
                s.stopAnnounced(),
                s.inFlight(),
                s.maxInFlight(),
                s.queued(),
                s.maxQueued(),
                s.hold(),
                s.holdFor(),
                s.path(),
                s.retryAfter(),
                NOW.plusSeconds(10));
    }

    static Stream<Arguments> waitingRows() {
        Situation holdOff =
                new Situation(DOWN, false, 0, 4, 0, 2, false, HOLD_FOR, RestartPath.PRELOAD_HIT, FOUR_SECONDS, NOW);
        return Stream.of(
                Arguments.of("stream: one came free", ready(3, 2), FOR_STREAM, "s1", new Decision.Forward()),
                Arguments.of(
                        "stream: none free yet",
                        ready(4, 2),
                        FOR_STREAM,
                        "s1",
                        new Decision.Hold(AdmissionRules.Why.STREAM, FOR_STREAM.until())),
                Arguments.of(
                        "stream: none free by the deadline",
                        late(ready(4, 2)),
                        FOR_STREAM,
                        "s1",
                        reject(OpenAiError.ENGINE_SATURATED, 1, false)),
                Arguments.of(
                        "stream: the engine went away, a preload hit under way, hold on",
                        starting(DOWN, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 2),
                        FOR_STREAM,
                        "s2",
                        new Decision.Hold(AdmissionRules.Why.START, FOR_STREAM.until())),
                Arguments.of(
                        "stream: the engine went away, hold off",
                        holdOff,
                        FOR_STREAM,
                        "s2",
                        reject(OpenAiError.ENGINE_NOT_READY, 4, false)),
                Arguments.of(
                        "announced: waits while the engine still serves the start whose stop was announced",
                        announced(true, 2),
                        FOR_START,
                        "s1",
                        new Decision.Hold(AdmissionRules.Why.START, FOR_START.until())),
                Arguments.of(
                        "announced: at the deadline",
                        late(announced(true, 2)),
                        FOR_START,
                        "s1",
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of(
                        "announced, hold off: a request waiting for a stream is refused",
                        announced(false, 2),
                        FOR_STREAM,
                        "s1",
                        reject(OpenAiError.ENGINE_NOT_READY, 10, false)),
                Arguments.of("start: verified", ready(0, 2), FOR_START, "s2", new Decision.Forward()),
                Arguments.of(
                        "start: verified, every stream taken",
                        ready(4, 2),
                        FOR_START,
                        "s2",
                        new Decision.Hold(AdmissionRules.Why.STREAM, FOR_START.until())),
                Arguments.of(
                        "start: still under way (the queue's room is not asked again)",
                        starting(VERIFYING, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 2),
                        FOR_START,
                        "s2",
                        new Decision.Hold(AdmissionRules.Why.START, FOR_START.until())),
                Arguments.of(
                        "start: its path not known yet (the engine log not read)",
                        starting(LISTENING, RestartPath.UNKNOWN, UNRECORDED, 2),
                        FOR_START,
                        "s2",
                        new Decision.Hold(AdmissionRules.Why.START, FOR_START.until())),
                Arguments.of(
                        "start: the path reads cold without a recorded latency (provisional: it waits to its deadline)",
                        starting(LISTENING, RestartPath.COLD, UNRECORDED, 2),
                        FOR_START,
                        "s2",
                        new Decision.Hold(AdmissionRules.Why.START, FOR_START.until())),
                Arguments.of(
                        "start: the path read, cold, its recorded latencies short",
                        starting(LISTENING, RestartPath.COLD, FOUR_SECONDS, 2),
                        FOR_START,
                        "s2",
                        new Decision.Hold(AdmissionRules.Why.START, FOR_START.until())),
                Arguments.of(
                        "start: it turned out a fallback",
                        starting(VERIFYING, RestartPath.PRELOAD_FALLBACK, TWO_MINUTES, 2),
                        FOR_START,
                        "s2",
                        reject(OpenAiError.ENGINE_NOT_READY, 60, false)),
                Arguments.of(
                        "start: it failed",
                        starting(START_FAILED, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 2),
                        FOR_START,
                        "s2",
                        reject(OpenAiError.ENGINE_NOT_READY, RetryAfter.MAX_SECONDS, false)),
                Arguments.of(
                        "start: not verified by the deadline",
                        late(starting(VERIFYING, RestartPath.PRELOAD_HIT, FOUR_SECONDS, 2)),
                        FOR_START,
                        "s2",
                        reject(OpenAiError.ENGINE_NOT_READY, 4, false)),
                Arguments.of("retry: a new start verified", ready(0, 1), RETRY_ON_S1, "s2", new Decision.Forward()),
                Arguments.of(
                        "retry: the same start verified again after the failure",
                        ready(0, 1),
                        RETRY_ON_S1,
                        "s1",
                        new Decision.Forward()),
                Arguments.of(
                        "retry: the start it failed on, not verified since",
                        ready(0, 1),
                        RETRY_AFTER_VERIFIED,
                        "s1",
                        new Decision.Hold(AdmissionRules.Why.RETRY, RETRY_AFTER_VERIFIED.until())),
                Arguments.of(
                        "retry: a cold start under way (any path: it waits for the next verified start)",
                        starting(LISTENING, RestartPath.COLD, FOUR_SECONDS, 1),
                        RETRY_ON_S1,
                        "s2",
                        new Decision.Hold(AdmissionRules.Why.RETRY, RETRY_ON_S1.until())),
                Arguments.of(
                        "retry: the start it failed on still serves at the deadline",
                        late(ready(0, 1)),
                        RETRY_AFTER_VERIFIED,
                        "s1",
                        reject(OpenAiError.ENGINE_UNREACHABLE, 1, false)),
                Arguments.of(
                        "retry: the engine it failed on out by a reset connection (a crash, before its port is seen"
                                + " closed)",
                        starting(
                                new EngineState.NotReady(NOW, "m", 0, Reason.CONNECTION_RESET, "reset"),
                                RestartPath.COLD,
                                FOUR_SECONDS,
                                1),
                        RETRY_ON_S1,
                        "s1",
                        new Decision.Hold(AdmissionRules.Why.RETRY, RETRY_ON_S1.until())),
                Arguments.of(
                        "retry: a restart-loop hold that ends before the deadline",
                        starting(
                                new EngineState.Held(
                                        NOW, "m", RETRY_ON_S1.until().minusSeconds(1), "loop"),
                                RestartPath.COLD,
                                FOUR_SECONDS,
                                1),
                        RETRY_ON_S1,
                        "s1",
                        new Decision.Hold(AdmissionRules.Why.RETRY, RETRY_ON_S1.until())),
                Arguments.of(
                        "retry: a restart-loop hold that ends after the deadline",
                        starting(HELD, RestartPath.COLD, FOUR_SECONDS, 1),
                        RETRY_ON_S1,
                        "s1",
                        reject(OpenAiError.ENGINE_NOT_READY, 25, false)),
                Arguments.of(
                        "retry: a latched failure",
                        starting(LATCHED, RestartPath.COLD, FOUR_SECONDS, 1),
                        RETRY_ON_S1,
                        "s1",
                        reject(OpenAiError.ENGINE_NOT_READY, RetryAfter.MAX_SECONDS, false)),
                Arguments.of(
                        "retry: a start that failed",
                        starting(START_FAILED, RestartPath.COLD, FOUR_SECONDS, 1),
                        RETRY_ON_S1,
                        "s2",
                        reject(OpenAiError.ENGINE_NOT_READY, RetryAfter.MAX_SECONDS, false)),
                Arguments.of(
                        "any: draining",
                        at(new EngineState.ShuttingDown(NOW), 0, 2, RestartPath.COLD, FOUR_SECONDS),
                        FOR_START,
                        "s1",
                        reject(OpenAiError.ENGINE_DRAINING, 1, true)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("waitingRows")
    void reconsiderFollowsTheTable(
            String row, Situation situation, AdmissionRules.Waiting waiting, String start, Decision expected) {
        assertDecision(row, AdmissionRules.reconsider(situation, waiting, start), expected);
    }
}
