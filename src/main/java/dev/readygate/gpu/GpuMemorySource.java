package dev.readygate.gpu;

import reactor.core.publisher.Mono;

/** Somewhere GPU memory can be read: {@code nvidia-smi} (CSV or XML) or the DCGM exporter's metrics endpoint. */
public interface GpuMemorySource {

    /** The source's name in {@code /status}: {@code nvidia_smi} or {@code dcgm}. */
    String name();

    /** One reading, taken on subscription; never an error signal. */
    Mono<GpuReading> read();
}
