package dev.readygate.gpu;

import dev.readygate.config.ReadygateProperties;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;

/** Wires the GPU memory monitor when {@code readygate.gpu.nvidia-smi} is set (it says so when it is not). */
@Configuration(proxyBeanMethods = false)
public class GpuConfiguration {

    @Bean(destroyMethod = "close")
    GpuMemoryMonitor gpuMemoryMonitor(
            ReadygateProperties properties, Clock clock, ObjectProvider<GpuMemoryListener> listeners) {
        ReadygateProperties.Gpu gpu = properties.gpu();
        NvidiaSmiReader reader = gpu.nvidiaSmi() == null
                ? null
                : new NvidiaSmiReader(
                        gpu.nvidiaSmi(),
                        gpu.uuids(),
                        gpu.timeout(),
                        NvidiaSmiReader.DEFAULT_MAX_OUTPUT,
                        clock,
                        Schedulers.boundedElastic());
        GpuMemoryMonitor monitor = new GpuMemoryMonitor(
                reader,
                gpu.interval(),
                ProcessOwners.PROC,
                clock,
                Schedulers.parallel(),
                Schedulers.boundedElastic(),
                listeners
                        .orderedStream()
                        .<java.util.function.Consumer<GpuMemoryView>>map(l -> l::read)
                        .toList());
        monitor.start();
        return monitor;
    }
}
