package dev.readygate.memory;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.restart.MemoryMoments;
import dev.readygate.restart.RestartTracker;
import java.util.List;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Wires GPU memory into restart cycles: the moments the tracker reads, and the watch over the signals. */
@Configuration(proxyBeanMethods = false)
public class MemoryConfiguration {

    /** Reads GPU memory now, for the tracker's before-start, at-ready and after-stop moments. */
    @Bean
    MemoryMoments memoryMoments(ObjectProvider<GpuMemoryMonitor> monitor) {
        return () -> monitor.getObject()
                .readNow()
                .filter(GpuMemoryView::read)
                .map(view -> Objects.requireNonNull(view.moment()));
    }

    @Bean
    MemoryWatch memoryWatch(
            ReadygateProperties properties,
            ObjectProvider<RestartTracker> tracker,
            ObjectProvider<MemorySignalListener> listeners) {
        return new MemoryWatch(
                () -> {
                    RestartTracker current = tracker.getIfAvailable();
                    return current == null ? List.of() : current.history();
                },
                properties.memory(),
                listeners.orderedStream().toList());
    }
}
