package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The benchmark's arithmetic on ready/able timelines (the harness itself never runs in the unit tests). */
class TimelineTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    static Instant at(long millis) {
        return T0.plusMillis(millis);
    }

    @Test
    void overlapWhenAJudgeSaysReadyWhileTheEngineCannotServeSumsThoseIntervals() {
        Timeline ready = new Timeline(false);
        Timeline able = new Timeline(false);
        ready.set(at(1000), true);
        able.set(at(3000), true);
        able.set(at(5000), false);
        ready.set(at(6000), false);
        // Ready while unable: 1 s to 3 s and 5 s to 6 s.
        assertThat(ready.overlap(true, able, false, at(0), at(10_000))).isEqualTo(Duration.ofSeconds(3));
        assertThat(ready.overlap(true, able, false, at(2000), at(5500))).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void firstChangeToWhenTheSignalChangedSeveralTimesReturnsTheFirstAtOrAfterTheInstant() {
        Timeline timeline = new Timeline(false);
        timeline.set(at(100), true);
        timeline.set(at(200), false);
        timeline.set(at(300), true);
        assertThat(timeline.firstChangeTo(true, at(150))).isEqualTo(at(300));
        assertThat(timeline.firstChangeTo(false, at(0))).isEqualTo(at(200));
        assertThat(timeline.firstChangeTo(false, at(250))).isNull();
    }

    @Test
    void setWhenTheValueDoesNotChangeKeepsTheFirstChange() {
        Timeline timeline = new Timeline(false);
        timeline.set(at(100), true);
        timeline.set(at(200), true);
        assertThat(timeline.changes()).containsExactly(new Timeline.Change(at(100), true));
    }
}
