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
     * The start readygate first saw running may have served for days before it: when it began is not known, so the
     * restart after it is no second start of a crash loop (FirstSeenStartTests restarted such an engine 10 s after
     * readygate started, and its next start was held for loop-hold).
     */
    @Test
    void aRestartAfterTheStartFirstSeenRunningIsNotHeld() {
        RestartLoop seen = loop.started(t(0), true);
        assertThat(seen.started(t(10)).heldUntil(t(10))).isNull();
        // Its own beginning still counts toward the loop, and the start after the restart is a second start again.
        assertThat(seen.started(t(10)).started(t(12)).heldUntil(t(12))).isEqualTo(t(72));
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
