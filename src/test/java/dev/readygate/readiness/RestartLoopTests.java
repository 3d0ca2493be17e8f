package dev.readygate.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

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
        assertThat(state.heldUntil(t(10))).isNull();
        int[] expected = {60, 120, 240, 300, 300};
        int at = 20;
        for (int hold : expected) {
            state = state.started(t(at));
            assertThat(state.heldUntil(t(at))).as("start at %d s", at).isEqualTo(t(at + hold));
            at += 10;
        }
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
