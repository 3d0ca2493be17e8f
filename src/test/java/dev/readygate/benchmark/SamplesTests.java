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
}
