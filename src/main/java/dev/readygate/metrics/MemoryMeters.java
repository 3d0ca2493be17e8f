package dev.readygate.metrics;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.memory.MemoryAssessed;
import dev.readygate.memory.MemoryAssessment;
import dev.readygate.memory.MemorySignal;
import dev.readygate.restart.CycleMemory;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The GPU memory signals' meters, read from the latest assessment: whether each signal fires and how often it was
 * raised, the drift per cycle, the stale cache, the memory held after the latest stop, and the memory at the moments of
 * the last cycle.
 */
final class MemoryMeters {

    private final AtomicReference<MemoryAssessment> memory = new AtomicReference<>(MemoryAssessment.NONE);
    private final Map<MemorySignal, Counter> raised = new EnumMap<>(MemorySignal.class);

    MemoryMeters(MeterRegistry registry) {
        for (MemorySignal signal : MemorySignal.values()) {
            Gauge.builder(
                            MeterNames.MEMORY_SIGNAL,
                            memory,
                            m -> m.get().active().contains(signal) ? 1 : 0)
                    .description("Whether a GPU memory signal fires (1) or not (0)")
                    .tag("signal", signal.value())
                    .register(registry);
            raised.put(
                    signal,
                    Counter.builder(MeterNames.MEMORY_SIGNALS)
                            .description("Times a GPU memory signal was raised")
                            .tag("signal", signal.value())
                            .register(registry));
        }
        Gauge.builder(MeterNames.MEMORY_DRIFT, memory, m -> {
                    MemoryAssessment.Drift drift = m.get().drift();
                    return drift == null ? 0 : drift.bytesPerCycle();
                })
                .description("Growth of GPU memory at readiness per restart cycle (same configuration and path)")
                .register(registry);
        Gauge.builder(MeterNames.STALE_CACHE, memory, m -> {
                    MemoryAssessment.StaleCache stale = m.get().staleCache();
                    return stale == null ? 0 : stale.staleBytes();
                })
                .description("The preload daemon's memory beyond the current checkpoint's weights after a switch")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder(
                        MeterNames.HELD_AFTER_STOP,
                        memory,
                        m -> heldAfterStopBytes(m.get().heldAfterStop()))
                .description("GPU memory held after the latest engine stop by processes that should have let it go")
                .baseUnit("bytes")
                .register(registry);
        cycleMoment(registry, "before_start", CycleMemory::beforeStart);
        cycleMoment(registry, "at_ready", CycleMemory::atReady);
        cycleMoment(registry, "after_stop", CycleMemory::afterStop);
    }

    private void cycleMoment(MeterRegistry registry, String moment, Function<CycleMemory, @Nullable MemoryMoment> of) {
        Gauge.builder(MeterNames.CYCLE_MEMORY, memory, m -> {
                    MemoryMoment read = of.apply(m.get().latestMoments());
                    return read == null ? Double.NaN : read.usedBytes();
                })
                .description("GPU memory used at the moments of the last restart cycle")
                .tag("moment", moment)
                .baseUnit("bytes")
                .register(registry);
    }

    void onMemoryAssessed(MemoryAssessed assessed) {
        memory.set(assessed.assessment());
        assessed.raised().forEach(signal -> raised.get(signal).increment());
    }

    /**
     * What should have been let go after the latest stop: what no process explains, plus what each holder holds beyond
     * what it may; 0 before a stop was measured.
     */
    static long heldAfterStopBytes(MemoryAssessment.@Nullable HeldAfterStop held) {
        return held == null
                ? 0
                : held.unexplainedBytes()
                        + held.holders().stream()
                                .mapToLong(MemoryAssessment.Holder::unexpectedBytes)
                                .sum();
    }
}
