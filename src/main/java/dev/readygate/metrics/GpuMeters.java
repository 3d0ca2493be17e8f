package dev.readygate.metrics;

import dev.readygate.gpu.GpuMemory;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.GpuReading;
import dev.readygate.gpu.ProcessOwners;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The GPU meters: GPU memory held by GPU and owner ({@link MeterNames#GPU_MEMORY_USED}, from the last good reading) and
 * the readings that failed, by reason ({@link MeterNames#GPU_READING_FAILURES}).
 */
final class GpuMeters {

    private final Map<GpuReading.Reason, Counter> readingFailures = new EnumMap<>(GpuReading.Reason.class);
    private final MultiGauge memory;

    GpuMeters(MeterRegistry registry) {
        for (GpuReading.Reason reason : GpuReading.Reason.values()) {
            readingFailures.put(
                    reason,
                    Counter.builder(MeterNames.GPU_READING_FAILURES)
                            .description("GPU memory readings that failed")
                            .tag("reason", reason.value())
                            .register(registry));
        }
        this.memory = MultiGauge.builder(MeterNames.GPU_MEMORY_USED)
                .description("GPU memory held, by GPU and owner")
                .baseUnit("bytes")
                .register(registry);
    }

    void onGpuReading(GpuMemoryView view) {
        GpuReading.Reason failure = view.failure();
        if (failure != null) {
            readingFailures.get(failure).increment();
            return;
        }
        memory.register(rows(view), true);
    }

    /** A good reading's series: each GPU's memory by each owner (0 for an owner holding none), and its total. */
    static List<MultiGauge.Row<?>> rows(GpuMemoryView view) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        for (GpuMemory gpu : view.gpus()) {
            Map<ProcessOwners.Owner, Long> owners = view.byOwner().getOrDefault(gpu.uuid(), Map.of());
            for (ProcessOwners.Owner owner : ProcessOwners.Owner.values()) {
                rows.add(MultiGauge.Row.of(
                        Tags.of("gpu", gpu.uuid(), "owner", owner.value()), owners.getOrDefault(owner, 0L)));
            }
            rows.add(MultiGauge.Row.of(Tags.of("gpu", gpu.uuid(), "owner", "total"), gpu.usedBytes()));
        }
        return rows;
    }
}
