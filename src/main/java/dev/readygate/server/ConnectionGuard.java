package dev.readygate.server;

import dev.readygate.logging.RateLimitedLog;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps the connections readygate's server holds: each accepted connection is tracked with when it last read or
 * wrote, whether it has sent a request yet, and how many of its requests wait for their answer (read, the answer's last
 * byte not yet written: see {@link #requests()}). One beyond {@code maxConnections} closes the least recently active
 * other connection that has no request waiting (a socket opened and left, a keep-alive between requests), so a new
 * connection, the kubelet's probe among them, is always served. A connection whose request waits for its answer is
 * never closed: the closing is done on the chosen connection's own event loop, after it has read what had arrived, and
 * a request read by then spares it. Nor is a connection accepted less than {@link #FIRST_REQUEST_GRACE} ago that has
 * not sent its first request yet: a probe connects and then sends, and on a busy server its request is read some
 * milliseconds later; without the grace, while every other connection waits for its answer, the probe's new connection
 * is the one idle connection and the next one to arrive closes it. Beyond {@link #FRESH_ALLOWANCE} such new
 * connections (a flood of sockets that send nothing), the oldest of them makes room all the same, so the excess over
 * the cap stays bounded. When no connection can make room, the new one is held beyond the cap: requests are answered
 * quickly, so that excess is short. At the cap, answers close their connection ({@code Connection: close}) instead of
 * keeping it alive, so clients beyond the cap give their connections back between requests rather than have them
 * closed. Shared by every connection's pipeline; thread-safe (connections live on several event loops).
 */
@ChannelHandler.Sharable
public final class ConnectionGuard extends ChannelDuplexHandler {

    private static final Logger logger = LoggerFactory.getLogger(ConnectionGuard.class);

    /** How long a new connection has to send its first request before it may be closed to make room. */
    static final Duration FIRST_REQUEST_GRACE = Duration.ofSeconds(1);

    /** How many connections within their grace are spared at once; beyond, the oldest of them makes room. */
    static final int FRESH_ALLOWANCE = 64;

    private final int maxConnections;
    private final LongSupplier nanos;
    private final RateLimitedLog warnings;
    private final Map<Channel, Tracked> open = new ConcurrentHashMap<>();
    private final AtomicInteger closing = new AtomicInteger();
    private final AtomicLong evicted = new AtomicLong();
    private final AtomicLong spared = new AtomicLong();
    private final Requests requests = new Requests();

    /**
     * One connection: when it was accepted, when it last read or wrote, whether a request of its has arrived, its
     * requests waiting for an answer, whether it is being closed.
     */
    private static final class Tracked {
        final long accepted;
        final AtomicLong lastActive;
        final AtomicBoolean requested = new AtomicBoolean();
        final AtomicInteger waiting = new AtomicInteger();
        final AtomicBoolean closing = new AtomicBoolean();

        Tracked(long now) {
            this.accepted = now;
            this.lastActive = new AtomicLong(now);
        }

        /** Accepted less than the grace before {@code now}, and no request of its read yet. */
        boolean fresh(long now) {
            return !requested.get() && now - accepted < FIRST_REQUEST_GRACE.toNanos();
        }
    }

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

    /** How many connections chosen to make room were kept because a request of theirs had arrived meanwhile. */
    public long spared() {
        return spared.get();
    }

    /** How many requests wait for their answer, over every connection. */
    public int waiting() {
        return open.values().stream().mapToInt(t -> t.waiting.get()).sum();
    }

    /** The cap. */
    public int maxConnections() {
        return maxConnections;
    }

    /** Whether readygate holds its most connections: answers then close their connection. */
    boolean atCap() {
        return open.size() >= maxConnections;
    }

    /**
     * The handler that sees each connection's requests and answers, placed after the HTTP codec: it counts the
     * requests waiting for their answer, and makes an answer close its connection at the cap.
     */
    public ChannelHandler requests() {
        return requests;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        Channel channel = ctx.channel();
        open.put(channel, new Tracked(nanos.getAsLong()));
        // Connections already being closed have made their room.
        while (open.size() - closing.get() > maxConnections) {
            Victim victim = leastRecentlyActiveIdle(channel);
            if (victim == null) {
                warnings.warn(
                        "busy",
                        "readygate's server holds its most connections ({}, readygate.server.max-connections), every"
                                + " one with a request waiting for its answer or just accepted: holding a new one"
                                + " beyond the cap",
                        maxConnections);
                break;
            }
            close(victim);
        }
        super.channelActive(ctx);
    }

    /**
     * Closes {@code victim} on its own event loop, once that loop has read what had arrived on it: a request read by
     * then keeps it open.
     */
    private void close(Victim victim) {
        victim.channel().eventLoop().execute(() -> {
            Tracked tracked = victim.tracked();
            if (open.get(victim.channel()) != tracked || tracked.waiting.get() > 0) {
                // Closed meanwhile, or a request of its has arrived: it stays.
                if (open.get(victim.channel()) == tracked) {
                    spared.incrementAndGet();
                }
                stopClosing(tracked);
                return;
            }
            evicted.incrementAndGet();
            victim.channel().close();
            warnings.warn(
                    "cap",
                    "readygate's server holds its most connections ({}, readygate.server.max-connections): closed"
                            + " the least recently active one without a request waiting, to serve a new one",
                    maxConnections);
        });
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
        Tracked tracked = open.remove(ctx.channel());
        if (tracked != null) {
            stopClosing(tracked);
        }
        super.channelInactive(ctx);
    }

    /** Takes a connection out of those being closed (once, whoever comes first). */
    private void stopClosing(Tracked tracked) {
        if (tracked.closing.compareAndSet(true, false)) {
            closing.decrementAndGet();
        }
    }

    /** A connection chosen to be closed. */
    private record Victim(Channel channel, Tracked tracked) {}

    private void touch(Channel channel) {
        Tracked tracked = open.get(channel);
        if (tracked != null) {
            tracked.lastActive.set(nanos.getAsLong());
        }
    }

    /**
     * The open connection, other than {@code except}, with no request waiting, not already being closed and not within
     * its first request's grace, that read or wrote last the longest time ago; failing that, while more than {@link
     * #FRESH_ALLOWANCE} connections are within their grace, the oldest of them. Marked as being closed. Null when there
     * is none.
     */
    private @Nullable Victim leastRecentlyActiveIdle(Channel except) {
        while (true) {
            Channel oldest = null;
            Tracked oldestTracked = null;
            long oldestAge = Long.MIN_VALUE;
            Channel oldestFresh = null;
            Tracked oldestFreshTracked = null;
            long oldestFreshAge = Long.MIN_VALUE;
            int fresh = 0;
            long now = nanos.getAsLong();
            for (Map.Entry<Channel, Tracked> entry : open.entrySet()) {
                Tracked tracked = entry.getValue();
                if (entry.getKey() == except || tracked.waiting.get() > 0 || tracked.closing.get()) {
                    continue;
                }
                // Compared as ages: nanoTime values may wrap.
                long age = now - tracked.lastActive.get();
                if (tracked.fresh(now)) {
                    fresh++;
                    if (oldestFresh == null || age > oldestFreshAge) {
                        oldestFreshAge = age;
                        oldestFresh = entry.getKey();
                        oldestFreshTracked = tracked;
                    }
                    continue;
                }
                if (oldest == null || age > oldestAge) {
                    oldestAge = age;
                    oldest = entry.getKey();
                    oldestTracked = tracked;
                }
            }
            if ((oldest == null || oldestTracked == null) && fresh > FRESH_ALLOWANCE) {
                oldest = oldestFresh;
                oldestTracked = oldestFreshTracked;
            }
            if (oldest == null || oldestTracked == null) {
                return null;
            }
            // Another event loop may have taken the same one: then look again.
            if (oldestTracked.closing.compareAndSet(false, true)) {
                closing.incrementAndGet();
                return new Victim(oldest, oldestTracked);
            }
        }
    }

    /** Counts each connection's requests waiting for their answer; at the cap, answers close their connection. */
    @ChannelHandler.Sharable
    private final class Requests extends ChannelDuplexHandler {

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
            if (message instanceof HttpRequest) {
                Tracked tracked = open.get(ctx.channel());
                if (tracked != null) {
                    tracked.requested.set(true);
                    tracked.waiting.incrementAndGet();
                }
            }
            super.channelRead(ctx, message);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object message, ChannelPromise promise) throws Exception {
            if (message instanceof HttpResponse response && atCap()) {
                HttpUtil.setKeepAlive(response, false);
            }
            if (message instanceof LastHttpContent) {
                Tracked tracked = open.get(ctx.channel());
                if (tracked != null) {
                    ChannelPromise answered = promise.unvoid();
                    // Written (or failed): the answer no longer waits.
                    answered.addListener(future -> tracked.waiting.decrementAndGet());
                    super.write(ctx, message, answered);
                    return;
                }
            }
            super.write(ctx, message, promise);
        }
    }
}
