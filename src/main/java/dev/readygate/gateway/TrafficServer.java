package dev.readygate.gateway;

import dev.readygate.server.SchedulerSlice;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * The traffic port: a Reactor Netty server of its own on the gateway's event loops ({@link TrafficResources}), never
 * readygate's server (its port, its loops, its connection cap), so that no flood of traffic can delay the kubelet's
 * probes. Holds at most {@code maxConnections} client connections: one more is closed at once. Opened and closed by
 * {@link GatewayMode}, which drains it first: the port keeps answering (refusals) while the exchanges in flight end,
 * then the connections left are cut ({@link #cutConnections}) and the port closed ({@link #close}).
 */
public final class TrafficServer {

    private static final Logger logger = LoggerFactory.getLogger(TrafficServer.class);

    /** The name of {@link HeadWithFirstChunk} in a client connection's pipeline. */
    private static final String HEAD_WITH_FIRST_CHUNK = "readygate.headWithFirstChunk";

    private final InetSocketAddress address;
    private final int maxConnections;
    private final LoopResources loops;
    private final ByteBufAllocator buffers;
    private final BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler;
    private final SchedulerSlice slice;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final ChannelGroup connections = new DefaultChannelGroup("traffic", ImmediateEventExecutor.INSTANCE);
    private @Nullable DisposableServer server;

    TrafficServer(
            InetSocketAddress address,
            int maxConnections,
            LoopResources loops,
            ByteBufAllocator buffers,
            BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler,
            SchedulerSlice slice) {
        this.address = address;
        this.maxConnections = maxConnections;
        this.loops = loops;
        this.buffers = buffers;
        this.handler = handler;
        this.slice = slice;
    }

    synchronized void start() {
        if (server != null) {
            return;
        }
        server = HttpServer.create()
                .runOn(loops)
                .childOption(ChannelOption.ALLOCATOR, buffers)
                .bindAddress(() -> address)
                .doOnChannelInit((observer, channel, remote) -> {
                    // On the connection's own loop, which also carries its exchanges with the engine: the first time,
                    // it asks the kernel for a short slice, so that a request or the engine's first token is taken
                    // up at once even while another thread has the core (SchedulerSlice).
                    slice.askOnThisThread();
                    if (open.incrementAndGet() > maxConnections) {
                        open.decrementAndGet();
                        refused.incrementAndGet();
                        channel.close();
                        return;
                    }
                    channel.closeFuture().addListener(closed -> open.decrementAndGet());
                    connections.add(channel);
                    if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                        channel.pipeline()
                                .addAfter(NettyPipeline.HttpCodec, HEAD_WITH_FIRST_CHUNK, new HeadWithFirstChunk());
                    }
                })
                .handle(handler)
                .bindNow(Duration.ofSeconds(10));
        logger.info("Gateway traffic port {} open, forwarding to the engine", server.port());
    }

    /** Closes every client connection now: the exchanges still in flight are cut (their clients see a cut stream). */
    void cutConnections() {
        connections.close();
    }

    /** Cuts the connections left and closes the port; completes once it is closed. Never blocks. */
    Mono<Void> close() {
        DisposableServer running;
        synchronized (this) {
            running = server;
            server = null;
        }
        if (running == null) {
            return Mono.empty();
        }
        cutConnections();
        running.dispose();
        return running.onDispose();
    }

    /** Closes the port now, cutting the connections, and waits for it (no drain). */
    void stop() {
        close().block(Duration.ofSeconds(5));
    }

    /** The port it listens on (the one bound, when {@code readygate.gateway.port} is 0). */
    public synchronized int port() {
        DisposableServer running = server;
        if (running == null) {
            throw new IllegalStateException("the traffic port is not open");
        }
        return running.port();
    }

    /** Client connections open now. */
    public int openConnections() {
        return open.get();
    }

    /** Connections closed at once because {@code maxConnections} were open. */
    public int refusedConnections() {
        return refused.get();
    }
}
