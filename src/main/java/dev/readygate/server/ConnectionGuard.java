package dev.readygate.server;

import dev.readygate.logging.RateLimitedLog;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps the connections readygate's server holds: each accepted connection is tracked with when it last read or
 * wrote; one beyond {@code maxConnections} closes the least recently active other connection (an idle one: a socket
 * opened and left, a keep-alive between requests), so a new connection, the kubelet's probe among them, is always
 * served. A connection busy reading a request or writing a response is recent, so it is never the one closed while an
 * idle one is open. Shared by every connection's pipeline; thread-safe (connections live on several event loops).
 */
@ChannelHandler.Sharable
public final class ConnectionGuard extends ChannelDuplexHandler {

    private static final Logger logger = LoggerFactory.getLogger(ConnectionGuard.class);

    private final int maxConnections;
    private final LongSupplier nanos;
    private final RateLimitedLog warnings;
    private final Map<Channel, AtomicLong> open = new ConcurrentHashMap<>();
    private final AtomicLong evicted = new AtomicLong();

    /**
     * @param maxConnections the most connections held open
     * @param nanos a monotonic nanosecond time source, for which connection was active last
     * @param clock the time the eviction warning is rate-limited by
     */
    public ConnectionGuard(int maxConnections, LongSupplier nanos, Clock clock) {
        this.maxConnections = maxConnections;
        this.nanos = nanos;
        this.warnings = new RateLimitedLog(logger, clock, Duration.ofMinutes(1));
    }

    /** How many connections are open. */
    public int open() {
        return open.size();
    }

    /** How many connections were closed to make room for a new one. */
    public long evicted() {
        return evicted.get();
    }

    /** The cap. */
    public int maxConnections() {
        return maxConnections;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        Channel channel = ctx.channel();
        open.put(channel, new AtomicLong(nanos.getAsLong()));
        while (open.size() > maxConnections) {
            Channel victim = leastRecentlyActive(channel);
            if (victim == null) {
                break;
            }
            // Removed now, not when it has closed: the next connection must not pick it again. Another event loop
            // may have taken the same one: then look again.
            if (open.remove(victim) != null) {
                evicted.incrementAndGet();
                victim.close();
                warnings.warn(
                        "cap",
                        "readygate's server holds its most connections ({}, readygate.server.max-connections): closed"
                                + " the least recently active one to serve a new one",
                        maxConnections);
            }
        }
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
        touch(ctx.channel());
        super.channelRead(ctx, message);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object message, ChannelPromise promise) throws Exception {
        touch(ctx.channel());
        super.write(ctx, message, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        open.remove(ctx.channel());
        super.channelInactive(ctx);
    }

    private void touch(Channel channel) {
        AtomicLong last = open.get(channel);
        if (last != null) {
            last.set(nanos.getAsLong());
        }
    }

    /** The open connection, other than {@code except}, that read or wrote last the longest time ago. */
    private @Nullable Channel leastRecentlyActive(Channel except) {
        Channel oldest = null;
        long oldestAt = Long.MAX_VALUE;
        long now = nanos.getAsLong();
        for (Map.Entry<Channel, AtomicLong> entry : open.entrySet()) {
            if (entry.getKey() == except) {
                continue;
            }
            // Compared as ages: nanoTime values may wrap.
            long age = now - entry.getValue().get();
            long at = Long.MAX_VALUE - age;
            if (at < oldestAt) {
                oldestAt = at;
                oldest = entry.getKey();
            }
        }
        return oldest;
    }
}
