package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners;
import dev.readygate.memory.MemoryAssessed;
import dev.readygate.memory.MemoryAssessment;
import dev.readygate.memory.MemorySignal;
import dev.readygate.restart.CycleMemory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MemoryMetersTests {

    static final long GIB = 1L << 30;

    final Instant t0 = Instant.parse("2026-12-03T10:00:00Z");
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final MemoryMeters meters = new MemoryMeters(registry);

    @Test
    void nothingFiresAndNothingIsMeasuredBeforeAnAssessment() {
        assertThat(registry.get(MeterNames.MEMORY_SIGNAL).gauges())
                .hasSize(MemorySignal.values().length)
                .allSatisfy(gauge -> assertThat(gauge.value()).isZero());
        assertThat(registry.get(MeterNames.MEMORY_SIGNALS).counters())
                .hasSize(MemorySignal.values().length)
                .allSatisfy(counter -> assertThat(counter.count()).isZero());
        assertThat(registry.get(MeterNames.MEMORY_DRIFT).gauge().value()).isZero();
        assertThat(registry.get(MeterNames.STALE_CACHE).gauge().value()).isZero();
        assertThat(registry.get(MeterNames.HELD_AFTER_STOP).gauge().value()).isZero();
        assertThat(registry.get(MeterNames.CYCLE_MEMORY).gauges())
                .hasSize(3)
                .allSatisfy(gauge -> assertThat(gauge.value()).isNaN());
    }

    @Test
    void anAssessmentSetsTheSignalsAndTheFiguresAndCountsWhatItRaised() {
        MemoryAssessment.HeldAfterStop held =
                new MemoryAssessment.HeldAfterStop("s1", t0, List.of(holder(2 * GIB), holder(0)), GIB, true);
        MemoryAssessment assessment =
                new MemoryAssessment(null, held, null, null, new CycleMemory(moment(3 * GIB), null, moment(5 * GIB)));
        meters.onMemoryAssessed(new MemoryAssessed(assessment, Set.of(MemorySignal.HELD_AFTER_STOP)));

        assertThat(signal(MemorySignal.HELD_AFTER_STOP)).isEqualTo(1);
        assertThat(signal(MemorySignal.LEAK_ACROSS_RESTARTS)).isZero();
        assertThat(registry.get(MeterNames.MEMORY_SIGNALS)
                        .tag("signal", MemorySignal.HELD_AFTER_STOP.value())
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.HELD_AFTER_STOP).gauge().value()).isEqualTo(3 * GIB);
        assertThat(cycle("before_start")).isEqualTo(3 * GIB);
        assertThat(cycle("at_ready")).isNaN();
        assertThat(cycle("after_stop")).isEqualTo(5 * GIB);
    }

    @Test
    void heldAfterStopIsWhatNoProcessExplainsPlusWhatEachHolderShouldHaveLetGo() {
        assertThat(MemoryMeters.heldAfterStopBytes(null)).isZero();
        assertThat(MemoryMeters.heldAfterStopBytes(new MemoryAssessment.HeldAfterStop("s1", t0, List.of(), 0, false)))
                .isZero();
        assertThat(MemoryMeters.heldAfterStopBytes(new MemoryAssessment.HeldAfterStop("s1", t0, List.of(), GIB, true)))
                .isEqualTo(GIB);
        assertThat(MemoryMeters.heldAfterStopBytes(
                        new MemoryAssessment.HeldAfterStop("s1", t0, List.of(holder(2 * GIB), holder(GIB)), 0, true)))
                .isEqualTo(3 * GIB);
    }

    private MemoryAssessment.Holder holder(long unexpected) {
        return new MemoryAssessment.Holder(
                42, ProcessOwners.Owner.ENGINE, 4 * GIB, unexpected == 0, unexpected, "engine process");
    }

    private MemoryMoment moment(long used) {
        return new MemoryMoment(t0, used, Map.of(), List.of());
    }

    private double signal(MemorySignal signal) {
        return registry.get(MeterNames.MEMORY_SIGNAL)
                .tag("signal", signal.value())
                .gauge()
                .value();
    }

    private double cycle(String moment) {
        return registry.get(MeterNames.CYCLE_MEMORY)
                .tag("moment", moment)
                .gauge()
                .value();
    }
}
