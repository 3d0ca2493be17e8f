package dev.readygate.memory;

import dev.readygate.gpu.MemoryMoment;
import reactor.core.publisher.Mono;

/** Reads GPU memory at the moments of a restart cycle; empty when it cannot. Never an error signal. */
@FunctionalInterface
interface MemoryMoments {

    /** Reads none. */
    MemoryMoments NONE = Mono::empty;

    Mono<MemoryMoment> now();
}
