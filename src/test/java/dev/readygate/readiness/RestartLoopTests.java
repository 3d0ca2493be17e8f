package dev.readygate.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RestartLoopTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    final RestartLoop loop = new RestartLoop(Duration.ofMinutes(10), 3, Duration.ofMinutes(1), Duration.ofMinutes(5));

    static Instant t(int seconds) {
        return T0.plusSeconds(seconds);
    }

    @Test
    void startsWithinTheWindowMakeALoopAndOlderOnesAreDropped() {
        RestartLoop two = loop.started(t(0)).started(t(10));
        assertThat(two.looping(t(10))).isFalse();
        RestartLoop three = two.started(t(20));
        assertThat(three.looping(t(20))).isTrue();
        assertThat(three.looping(t(601))).isFalse();
        assertThat(three.started(t(700)).recent()).containsExactly(t(700));
    }

    @Test
    void theStartThatMakesTheLoopIsHeldAndEachNextOneTwiceAsLongUpToTheLongestHold() {
        RestartLoop state = loop.started(t(0));
        assertThat(state.heldUntil(t(0))).isNull();
        state = state.started(t(10));
        // The second start: the first one lived 10 s, less than the hold: held for the hold.
        assertThat(state.heldUntil(t(10))).isEqualTo(t(70));
        int[] expected = {60, 120, 240, 300, 300};
        int at = 20;
        for (int hold : expected) {
            state = state.started(t(at));
            assertThat(state.heldUntil(t(at))).as("start at %d s", at).isEqualTo(t(at + hold));
            at += 10;
        }
    }

    static Stream<Arguments> theSecondStart() {
        return Stream.of(
                // The first start readygate sees is never held.
                Arguments.of(List.of(), 0, null),
                // A crash loop's second start: the one before lived 2 s, less than loop-hold: held for loop-hold.
                Arguments.of(List.of(0), 2, 62),
                Arguments.of(List.of(0), 59, 119),
                // The one before stayed up loop-hold: a single restart, not held.
                Arguments.of(List.of(0), 60, null),
                Arguments.of(List.of(0), 300, null),
                // Only the starts within the window count: one old start, then two 5 s apart.
                Arguments.of(List.of(0, 700), 705, 765),
                // Two starts at the same moment: the one before lived no time.
                Arguments.of(List.of(5), 5, 65));
    }

    @ParameterizedTest(name = "starts at {0} s, then one at {1} s: held until {2} s")
    @MethodSource
    void theSecondStart(List<Integer> before, int at, @Nullable Integer until) {
        RestartLoop state = loop;
        for (int start : before) {
            state = state.started(t(start));
        }
        state = state.started(t(at));
        Instant held = state.heldUntil(t(at));
        assertThat(held).isEqualTo(until == null ? null : t(until));
        // It is no loop yet: only the hold says anything.
        assertThat(state.looping(t(at))).isFalse();
    }

    /**
     * The start readygate first saw running counts from when the engine's own evidence says it began: its log's
     * start-up header ({@link RestartLoop#beginning}) or its {@code process_start_time_seconds}, learned after it was
     * counted ({@link RestartLoop#dated}). Issue 24, item 5: readygate first saw an engine of a crash loop running, it
     * crashed and started again, and that second start was served (about 0.75 s) because the first start's beginning
     * was taken as unknown.
     */
    @Test
    void aFirstSeenStartCountsFromWhenTheEngineSaysItBegan() {
        EngineStart logged = new EngineStart("s1", t(-2), StartSource.LOG, true);
        assertThat(RestartLoop.beginning(logged, t(0))).isEqualTo(t(-2));
        // Began 2 s before readygate first saw it, crashed, started again 3 s later: lived 5 s, a crash loop's second
        // start.
        assertThat(loop.started(t(-2)).started(t(3)).heldUntil(t(3))).isEqualTo(t(63));

        RestartLoop seenAt0 = loop.started(t(0));
        // Its process started 30 s before readygate first saw it: lived 40 s at the restart, less than the hold.
        assertThat(seenAt0.dated(t(0), t(-30)).started(t(10)).heldUntil(t(10))).isEqualTo(t(70));
        // It had served an hour: a single restart, not held; the old start is out of the window too.
        RestartLoop servedAnHour = seenAt0.dated(t(0), t(-3600)).started(t(10));
        assertThat(servedAnHour.heldUntil(t(10))).isNull();
        assertThat(servedAnHour.recent()).containsExactly(t(10));
        // 70 s: it had stayed up the hold.
        assertThat(seenAt0.dated(t(0), t(-60)).started(t(10)).heldUntil(t(10))).isNull();
    }

    /**
     * Without evidence of when the first seen start began, it counts from readygate's first look, the latest it can
     * have begun: a restart within {@code loop-hold} of that look is held (the conservative side: a crash loop is never
     * served), one later is not.
     */
    @Test
    void aFirstSeenStartWithoutEvidenceCountsFromReadygatesFirstLook() {
        EngineStart unknown = new EngineStart("s1", t(0), StartSource.FIRST_OBSERVED, true);
        assertThat(RestartLoop.beginning(unknown, t(0))).isEqualTo(t(0));
        assertThat(loop.started(t(0)).started(t(3)).heldUntil(t(3))).isEqualTo(t(63));
        assertThat(loop.started(t(0)).started(t(61)).heldUntil(t(61))).isNull();
        // A start readygate saw begin counts when it was counted, whatever its since says.
        EngineStart seenBegin = new EngineStart("s2", t(-5), StartSource.OBSERVED_DOWN, false);
        assertThat(RestartLoop.beginning(seenBegin, t(0))).isEqualTo(t(0));
        // Evidence of a later beginning than readygate's own sight is a skewed clock: nothing changes.
        RestartLoop seen = loop.started(t(0));
        assertThat(seen.dated(t(0), t(5))).isSameAs(seen);
        assertThat(seen.dated(t(7), t(-5))).isSameAs(seen);
    }

    @Test
    void aLoopOfTwoStartsHoldsTheSecondForLoopHold() {
        RestartLoop two = new RestartLoop(Duration.ofMinutes(10), 2, Duration.ofMinutes(1), Duration.ofMinutes(5));
        assertThat(two.started(t(0)).started(t(2)).heldUntil(t(2))).isEqualTo(t(62));
    }

    @Test
    void aStartTakenOutAgainNoLongerCounts() {
        RestartLoop three = loop.started(t(0)).started(t(10)).started(t(20));
        RestartLoop swapped = three.without(t(20));
        assertThat(swapped.looping(t(20))).isFalse();
        assertThat(swapped.recent()).containsExactly(t(0), t(10));
        assertThat(swapped.started(t(30)).heldUntil(t(30))).isEqualTo(t(90));
    }

    @Test
    void aZeroHoldTurnsTheHoldOff() {
        RestartLoop off = new RestartLoop(Duration.ofMinutes(10), 2, Duration.ZERO, Duration.ZERO)
                .started(t(0))
                .started(t(1));
        assertThat(off.looping(t(1))).isTrue();
        assertThat(off.heldUntil(t(1))).isNull();
    }
}
