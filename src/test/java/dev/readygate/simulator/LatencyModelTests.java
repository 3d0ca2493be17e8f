package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LatencyModelTests {

    private final LatencyModel latency = new LatencyModel(RunningSimulator.properties(
                    Path.of("unused"),
                    "timing.ttft-base=10ms",
                    "timing.prefill-per-token=100us",
                    "timing.decode-per-token=8ms",
                    "timing.batch-slowdown=0.5",
                    "timing.warmup-penalty=300ms")
            .timing());

    @Test
    void timeToFirstTokenGrowsWithUncachedPromptTokens() {
        assertThat(latency.timeToFirstToken(0, 0, 1, false, 1)).isEqualTo(Duration.ofMillis(10));
        assertThat(latency.timeToFirstToken(1000, 0, 1, false, 1)).isEqualTo(Duration.ofMillis(110));
        assertThat(latency.timeToFirstToken(1000, 800, 1, false, 1)).isEqualTo(Duration.ofMillis(30));
    }

    @Test
    void concurrentRequestsStretchLatency() {
        assertThat(latency.interTokenLatency(1, 1)).isEqualTo(Duration.ofMillis(8));
        assertThat(latency.interTokenLatency(3, 1)).isEqualTo(Duration.ofMillis(16));
        assertThat(latency.timeToFirstToken(1000, 0, 3, false, 1)).isEqualTo(Duration.ofMillis(220));
    }

    @Test
    void warmupAndSlowFaultAddUp() {
        assertThat(latency.timeToFirstToken(0, 0, 1, true, 1)).isEqualTo(Duration.ofMillis(310));
        assertThat(latency.timeToFirstToken(0, 0, 1, false, 10)).isEqualTo(Duration.ofMillis(100));
        assertThat(latency.interTokenLatency(1, 10)).isEqualTo(Duration.ofMillis(80));
    }
}
