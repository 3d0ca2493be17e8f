package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Distribution-free quantile intervals: the binomial ranks, checked against the textbook values. */
class IntervalTests {

    private static Samples oneTo(int n) {
        Samples samples = new Samples("x", "ms");
        for (int i = n; i >= 1; i--) {
            samples.add(i);
        }
        return samples;
    }

    @Test
    void medianOfAHundredIsBracketedByThe40thAnd61stSample() {
        Interval median = oneTo(100).interval(0.5);
        assertThat(median.lowRank()).isEqualTo(40);
        assertThat(median.highRank()).isEqualTo(61);
        assertThat(median.low()).isEqualTo(40);
        assertThat(median.high()).isEqualTo(61);
        // P(40 <= B < 61) for B binomial (100, 0.5)
        assertThat(median.coverage()).isCloseTo(0.9648, within(0.0001));
    }

    @Test
    void medianOfTwentyIsBracketedByThe6thAnd15th() {
        Interval median = oneTo(20).interval(0.5);
        assertThat(median.lowRank()).isEqualTo(6);
        assertThat(median.highRank()).isEqualTo(15);
        assertThat(median.coverage()).isCloseTo(0.9586, within(0.0001));
    }

    @Test
    void sixSamplesAreTheFewestThatBoundAMedianAt95Percent() {
        Interval six = oneTo(6).interval(0.5);
        assertThat(six.lowRank()).isEqualTo(1);
        assertThat(six.highRank()).isEqualTo(6);
        assertThat(six.coverage()).isCloseTo(1 - 2 / 64.0, within(1e-12));
        assertThat(six.bounded()).isTrue();

        Interval five = oneTo(5).interval(0.5);
        assertThat(five.lowRank()).isZero();
        assertThat(five.highRank()).isEqualTo(6);
        assertThat(five.low()).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(five.high()).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(five.bounded()).isFalse();
    }

    @Test
    void p99NeedsAtLeast368SamplesForAnUpperBound() {
        // 0.99^367 = 0.02501 > 0.025: even the largest of 367 samples is below p99 too often
        Interval few = oneTo(367).interval(0.99);
        assertThat(few.highRank()).isEqualTo(368);
        assertThat(few.high()).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(few.lowRank()).isEqualTo(359);
        assertThat(few.low()).isEqualTo(359);

        Interval enough = oneTo(368).interval(0.99);
        assertThat(enough.highRank()).isEqualTo(368);
        assertThat(enough.high()).isEqualTo(368);
        assertThat(enough.lowRank()).isEqualTo(360);
    }

    @Test
    void p99OfManySamplesHasNarrowRanksAndNoUnderflow() {
        Interval p99 = oneTo(60_000).interval(0.99);
        assertThat(p99.lowRank()).isEqualTo(59_352);
        assertThat(p99.highRank()).isEqualTo(59_448);
        assertThat(p99.coverage()).isBetween(0.95, 0.96);
    }

    @Test
    void oneSampleBoundsNothing() {
        Interval one = oneTo(1).interval(0.5);
        assertThat(one.bounded()).isFalse();
        assertThat(one.coverage()).isEqualTo(1);
    }

    @Test
    void overlapAndContainmentTreatOpenSidesAsUnbounded() {
        Interval open = oneTo(5).interval(0.5);
        Interval closed = new Interval(10, 20, 1, 6, 6, 0.97);
        assertThat(open.overlaps(closed)).isTrue();
        assertThat(closed.contains(20)).isTrue();
        assertThat(closed.contains(20.5)).isFalse();
        assertThat(closed.overlaps(new Interval(21, 30, 1, 6, 6, 0.97))).isFalse();
        assertThat(Interval.fromMap(open.toMap())).isEqualTo(open);
    }
}
