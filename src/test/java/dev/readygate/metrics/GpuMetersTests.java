package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gpu.GpuMemory;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.GpuReading;
import dev.readygate.gpu.ProcessOwners;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GpuMetersTests {

    static final long GIB = 1L << 30;

    final Instant t0 = Instant.parse("2026-12-03T10:00:00Z");
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final GpuMeters meters = new GpuMeters(registry);

    @Test
    void everyFailureReasonIsASeriesAtZeroAndNoMemoryIsShownBeforeAReading() {
        assertThat(registry.get(MeterNames.GPU_READING_FAILURES).counters())
                .hasSize(GpuReading.Reason.values().length)
                .allSatisfy(counter -> assertThat(counter.count()).isZero());
        assertThat(registry.find(MeterNames.GPU_MEMORY_USED).gauges()).isEmpty();
    }

    @Test
    void aGoodReadingShowsEachOwnersMemoryOnEachGpuAndTheTotal() {
        meters.onGpuReading(reading(Map.of(ProcessOwners.Owner.ENGINE, 10 * GIB)));

        assertThat(used("engine")).isEqualTo(10 * GIB);
        assertThat(used("preload_daemon")).isZero();
        assertThat(used("other")).isZero();
        assertThat(used("total")).isEqualTo(12 * GIB);
        assertThat(registry.get(MeterNames.GPU_MEMORY_USED).gauges()).hasSize(ProcessOwners.Owner.values().length + 1);
    }

    @Test
    void aFailedReadingIsCountedByReasonAndKeepsTheLastGoodFigures() {
        meters.onGpuReading(reading(Map.of(ProcessOwners.Owner.ENGINE, 10 * GIB)));
        meters.onGpuReading(new GpuMemoryView(
                t0.plusSeconds(1),
                null,
                List.of(),
                Map.of(),
                List.of(),
                GpuReading.Reason.TIMED_OUT,
                "nvidia-smi took too long",
                Map.of(),
                null,
                null));

        assertThat(registry.get(MeterNames.GPU_READING_FAILURES)
                        .tag("reason", GpuReading.Reason.TIMED_OUT.value())
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(used("engine")).isEqualTo(10 * GIB);
    }

    private GpuMemoryView reading(Map<ProcessOwners.Owner, Long> owners) {
        return new GpuMemoryView(
                t0,
                "nvidia-smi",
                List.of(new GpuMemory("GPU-1", 0, "H200", 141 * GIB, 12 * GIB, 129 * GIB, null)),
                Map.of("GPU-1", owners),
                List.of(),
                null,
                null,
                Map.of(),
                null,
                null);
    }

    private double used(String owner) {
        return registry.get(MeterNames.GPU_MEMORY_USED)
                .tag("gpu", "GPU-1")
                .tag("owner", owner)
                .gauge()
                .value();
    }
}
