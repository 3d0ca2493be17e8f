package dev.readygate.memory;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.readiness.StartLedger;
import dev.readygate.restart.RestartRecords;
import java.util.Objects;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Scheduler;

/** Wires GPU memory into restart cycles: the moments of each start, and the watch over the signals. */
@Configuration(proxyBeanMethods = false)
class MemoryConfiguration {

    @Bean
    MemoryWatch memoryWatch(
            ReadygateProperties properties, RestartRecords records, ApplicationEventPublisher publisher) {
        return new MemoryWatch(records, properties.memory(), publisher::publishEvent);
    }

    @Bean
    CycleMemories cycleMemories(
            ReadygateProperties properties,
            GpuMemoryMonitor monitor,
            RestartRecords records,
            MemoryWatch watch,
            @Qualifier("timerScheduler") Scheduler timer,
            StartLedger ledger) {
        MemoryMoments moments =
                () -> monitor.readNow().filter(GpuMemoryView::read).map(view -> Objects.requireNonNull(view.moment()));
        return new CycleMemories(moments, records, watch, properties.memory().afterStopDelay(), timer, ledger);
    }
}
