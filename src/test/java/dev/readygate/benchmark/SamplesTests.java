package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Nearest-rank percentiles, as the benchmark report quotes them. */
class SamplesTests {

    @Test
    void quantileOfAHundredSamplesIsTheNearestRank() {
        Samples samples = new Samples("x", "ms");
        for (int i = 100; i >= 1; i--) {
            samples.add(i);
        }
        assertThat(samples.p50()).isEqualTo(50);
        assertThat(samples.p99()).isEqualTo(99);
        assertThat(samples.max()).isEqualTo(100);
    }

    @Test
    void p99OfFewerThanAHundredSamplesIsTheirMaximum() {
        Samples samples = new Samples("x", "ms");
        for (int i = 1; i <= 20; i++) {
            samples.add(i);
        }
        assertThat(samples.p99()).isEqualTo(20);
        assertThat(samples.p50()).isEqualTo(10);
    }

    @Test
    void aSliceKeepsTheSamplesInTheOrderTheyWereAdded() {
        Samples samples = new Samples("x", "ms");
        for (int i = 10; i >= 1; i--) {
            samples.add(i);
        }
        Samples first = samples.slice("first", 0, 3);
        assertThat(first.count()).isEqualTo(3);
        assertThat(first.sorted()).containsExactly(8, 9, 10);
        assertThat(first.unit()).isEqualTo("ms");
        assertThat(samples.slice("last", 5, 10).sorted()).containsExactly(1, 2, 3, 4, 5);
    }
}
