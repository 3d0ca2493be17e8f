package dev.readygate.gateway;

import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * The gateway's own event loops ({@code readygate-gateway-*} threads) and its pool of connections to the engine, shared
 * by the traffic server and its client to the engine and by nothing else: readygate's server runs on
 * {@code readygate-http}, its probes' client on {@code readygate-engine}, and Reactor Netty's global resources serve
 * neither. Created only when gateway mode opens its port, never as beans, so nobody injects them by type by mistake.
 */
final class TrafficResources {

    static final String THREAD_PREFIX = "readygate-gateway";

    final LoopResources loops;
    final ConnectionProvider connections;
    /**
     * The traffic's buffers, pooled whatever Netty's default: streams of events through a busy port reuse them, where
     * readygate's own few requests run unpooled (the image sets {@code io.netty.allocator.type=unpooled}). One pool for
     * the process, made when a gateway first opens (this class is first used then), as Netty's default one would be: a
     * pool per opening would leave the last one's memory behind each time a gateway closes and opens again.
     */
    private static final ByteBufAllocator POOL = new AdaptiveByteBufAllocator();

    final ByteBufAllocator buffers = POOL;

    TrafficResources(int maxConnections) {
        this.loops = LoopResources.create(THREAD_PREFIX, 1, LoopResources.DEFAULT_IO_WORKER_COUNT, true);
        // One engine connection per client connection at most: a stream holds its connection to its end.
        this.connections = ConnectionProvider.builder(THREAD_PREFIX)
                .maxConnections(maxConnections)
                .pendingAcquireMaxCount(-1)
                .maxIdleTime(Duration.ofSeconds(30))
                .build();
    }

    /** Ends the connections and the loops; never blocks. */
    Mono<Void> disposeLater() {
        return connections.disposeLater().then(loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)));
    }

    void dispose() {
        connections.disposeLater().block(Duration.ofSeconds(5));
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(Duration.ofSeconds(5));
    }
}
