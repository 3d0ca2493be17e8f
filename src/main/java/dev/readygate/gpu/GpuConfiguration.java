package dev.readygate.gpu;

import dev.readygate.config.BackgroundLoop;
import dev.readygate.config.ReadygateProperties;
import java.net.http.HttpClient;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Wires the GPU memory monitor over the configured sources: {@code readygate.gpu.nvidia-smi}, then
 * {@code readygate.gpu.dcgm-url} (it says {@code not_configured} when neither is set).
 */
@Configuration(proxyBeanMethods = false)
class GpuConfiguration {

    @Bean
    GpuMemoryMonitor gpuMemoryMonitor(
            ReadygateProperties properties,
            Clock clock,
            @Qualifier("timerScheduler") Scheduler timer,
            ApplicationEventPublisher publisher) {
        ReadygateProperties.Gpu gpu = properties.gpu();
        List<GpuMemorySource> sources = new ArrayList<>();
        if (gpu.nvidiaSmi() != null) {
            sources.add(new NvidiaSmiReader(
                    gpu.nvidiaSmi(),
                    gpu.nvidiaSmiFormat(),
                    gpu.uuids(),
                    gpu.timeout(),
                    NvidiaSmiReader.DEFAULT_MAX_OUTPUT,
                    clock,
                    Schedulers.boundedElastic()));
        }
        if (gpu.dcgmUrl() != null) {
            sources.add(new DcgmExporterReader(
                    gpu.dcgmUrl(),
                    gpu.uuids(),
                    gpu.timeout(),
                    DataSize.ofMegabytes(4),
                    HttpClient.newBuilder().connectTimeout(gpu.timeout()).build(),
                    clock,
                    Schedulers.boundedElastic()));
        }
        return new GpuMemoryMonitor(
                sources,
                gpu.interval(),
                ProcessOwners.PROC,
                clock,
                timer,
                Schedulers.boundedElastic(),
                publisher::publishEvent);
    }

    /** Memory is read from the start of the application to its end. */
    @Bean
    BackgroundLoop gpuMemoryReadings(GpuMemoryMonitor monitor) {
        return new BackgroundLoop("GPU memory monitor", BackgroundLoop.READERS, monitor::follow);
    }
}
