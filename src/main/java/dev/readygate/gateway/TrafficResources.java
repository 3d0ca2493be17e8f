package dev.readygate.gateway;

import dev.readygate.engine.EngineConnections;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;

/**
 * The gateway's own event loops ({@code readygate-gateway-*} threads) and buffers, shared by the traffic server and its
 * connections to the engine ({@link EngineConnections}) and by nothing else: readygate's server runs on
 * {@code readygate-http}, its probes' client on {@code readygate-engine}, and Reactor Netty's global resources serve
 * neither. Created only when gateway mode opens its port, never as beans, so nobody injects them by type by mistake.
 */
final class TrafficResources {

    static final String THREAD_PREFIX = "readygate-gateway";

    final LoopResources loops;

    /**
     * The exchanges' timers ({@link StreamTimeouts}): each set, cancelled and rung on the loop that carries its
     * exchange (Reactor Netty's colocation: {@code next()} is the calling loop itself), so that no other thread is
     * woken on a request's way to the engine. Measured against readygate's shared timer: about 0.07 ms less added to
     * the time to first token (docs/benchmarks.md §3f). Not disposed: the loops are.
     */
    final Scheduler timer;
    /**
     * The traffic's buffers, pooled whatever Netty's default: streams of events through a busy port reuse them, where
     * readygate's own few requests run unpooled (the image sets {@code io.netty.allocator.type=unpooled}). One pool for
     * the process, made when a gateway first opens (this class is first used then), as Netty's default one would be: a
     * pool per opening would leave the last one's memory behind each time a gateway closes and opens again.
     */
    private static final ByteBufAllocator POOL = new AdaptiveByteBufAllocator();

    final ByteBufAllocator buffers = POOL;

    TrafficResources() {
        this.loops = LoopResources.create(THREAD_PREFIX, 1, LoopResources.DEFAULT_IO_WORKER_COUNT, true);
        this.timer = Schedulers.fromExecutorService(LoopResources.colocate(loops.onServer(true)), THREAD_PREFIX);
    }

    /** Ends the loops; never blocks. */
    Mono<Void> disposeLater() {
        return loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2));
    }

    void dispose() {
        disposeLater().block(Duration.ofSeconds(5));
    }
}
