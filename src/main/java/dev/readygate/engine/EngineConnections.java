package dev.readygate.engine;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;

/**
 * Connections to the engine for what readygate sends most often: the gateway's traffic and the {@code /health} poll.
 * Plain Netty channels, each opened on and kept by the event loop that asks (for the gateway, the loop of the client
 * connection whose request it carries), so that a request and its answer never cross threads and each hop is Netty's
 * codec and one handler, not a client framework's per-request setup (measured: Reactor Netty's {@code HttpClient}
 * added about 0.6 ms to the time to first token here, docs/benchmarks.md §3f, and {@code WebClient} cost a
 * {@code /health} poll about 1 ms of CPU, §4b). A connection is kept for the next request of its loop while the engine
 * keeps it alive and answered below 400, and closed after {@code maxIdle} unused. The answer's body is read as the
 * client takes it (the channel stops reading while no buffer is wanted), so a slow client never makes readygate hold a
 * whole answer.
 *
 * <p>A kept connection the engine closed as the request went out (its keep-alive ran out at that moment) is not the
 * engine's failure: the request is sent once more on a new connection, as HTTP clients do, when nothing of an answer
 * had come.
 */
public final class EngineConnections {

    private final String host;
    private final int port;
    /** The engine's address when its URL names an IP address; null: a name, resolved off the loops per connection. */
    private final @Nullable InetSocketAddress literal;

    private final String hostHeader;
    private final String pathPrefix;
    private final @Nullable SslContext tls;
    private final int connectTimeoutMillis;
    private final long maxIdleNanos;
    private final LoopResources loops;
    private final ByteBufAllocator buffers;
    private final ChannelGroup open = new DefaultChannelGroup("readygate-engine", ImmediateEventExecutor.INSTANCE);
    private final Map<EventLoop, ArrayDeque<Link>> idle = new ConcurrentHashMap<>();
    private volatile boolean closed;

    public EngineConnections(
            URI engineBaseUrl,
            Duration connectTimeout,
            Duration maxIdle,
            LoopResources loops,
            ByteBufAllocator buffers) {
        boolean secure = "https".equalsIgnoreCase(engineBaseUrl.getScheme());
        int defaultPort = secure ? 443 : 80;
        String engineHost = engineBaseUrl.getHost();
        if (engineHost == null) {
            throw new IllegalArgumentException("the engine's base URL has no host: " + engineBaseUrl);
        }
        this.host = engineHost;
        this.port = engineBaseUrl.getPort() < 0 ? defaultPort : engineBaseUrl.getPort();
        this.literal = literal(engineHost, port);
        String named = engineHost.contains(":") && !engineHost.startsWith("[") ? "[" + engineHost + "]" : engineHost;
        this.hostHeader = port == defaultPort ? named : named + ":" + port;
        String path = engineBaseUrl.getRawPath() == null ? "" : engineBaseUrl.getRawPath();
        this.pathPrefix = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        this.tls = secure ? clientTls() : null;
        this.connectTimeoutMillis = Math.toIntExact(connectTimeout.toMillis());
        this.maxIdleNanos = maxIdle.toNanos();
        this.loops = loops;
        this.buffers = buffers;
    }

    private static @Nullable InetSocketAddress literal(String host, int port) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        try {
            return new InetSocketAddress(InetAddress.ofLiteral(bare), port);
        } catch (IllegalArgumentException notAnAddress) {
            return null;
        }
    }

    private static SslContext clientTls() {
        try {
            return SslContextBuilder.forClient()
                    .endpointIdentificationAlgorithm("HTTPS")
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("Cannot set up TLS to the engine", e);
        }
    }

    /**
     * Sends a request to the engine on a connection of {@code loop}: the answer's head goes to {@code head} before any
     * of its body, whose buffers are the flux (each the subscriber's to release). Cancelling closes the connection, so
     * the engine ends its request. Fails with the connection's failure: a {@link java.net.ConnectException} when
     * nothing listens, Netty's {@code ConnectTimeoutException}, else an {@link IOException} when the engine closed it.
     *
     * @param pathAndQuery the client's request target, sent under the base URL's path
     * @param headers sent as they are but for {@code Host} (the engine's) and the body's length (the body's own)
     * @param body the whole body; null: none
     */
    public Flux<ByteBuf> exchange(
            EventLoop loop,
            HttpMethod method,
            String pathAndQuery,
            HttpHeaders headers,
            byte @Nullable [] body,
            Consumer<HttpResponse> head) {
        // Flux.create, not Flux.push: a push sink tells its onRequest consumer once (Long.MAX_VALUE) and never of a
        // later request, so an answer the client stopped taking (reading off) was never read again.
        return Flux.create(
                sink -> {
                    Call call = new Call(loop, method, pathAndQuery, headers, body, head, sink);
                    sink.onRequest(call::want);
                    sink.onCancel(call::cancel);
                    onLoop(loop, call::start);
                },
                FluxSink.OverflowStrategy.ERROR);
    }

    /** Closes every connection to the engine, idle or busy; completes once they are closed. Never blocks. */
    public Mono<Void> close() {
        closed = true;
        return Mono.create(done -> open.close().addListener(closedAll -> done.success()));
    }

    /** Connections to the engine open now, idle and busy. */
    public int openConnections() {
        return open.size();
    }

    private static void onLoop(EventLoop loop, Runnable task) {
        if (loop.inEventLoop()) {
            task.run();
        } else {
            loop.execute(task);
        }
    }

    /** A kept connection of {@code loop}, or null: one the engine closed meanwhile is never handed out. */
    private @Nullable Link takeIdle(EventLoop loop) {
        ArrayDeque<Link> kept = idle.get(loop);
        if (kept == null) {
            return null;
        }
        Link link;
        while ((link = kept.pollFirst()) != null) {
            link.leaveIdle();
            if (link.channel().isActive()) {
                return link;
            }
        }
        return null;
    }

    private void keep(Link link) {
        if (closed) {
            link.channel().close();
            return;
        }
        EventLoop loop = link.channel().eventLoop();
        // Kept reading: an engine that closes it is seen at once, not when the next request is sent.
        link.channel().config().setAutoRead(true);
        idle.computeIfAbsent(loop, l -> new ArrayDeque<>()).addFirst(link);
        link.idleTimer = loop.schedule(
                () -> {
                    ArrayDeque<Link> kept = idle.get(loop);
                    if (kept != null && kept.remove(link)) {
                        link.channel().close();
                    }
                },
                maxIdleNanos,
                TimeUnit.NANOSECONDS);
    }

    private void forget(Link link) {
        ArrayDeque<Link> kept = idle.get(link.channel().eventLoop());
        if (kept != null) {
            kept.remove(link);
        }
    }

    /** The engine closed the connection before its answer's end. */
    public static final class EngineClosed extends IOException {
        EngineClosed(boolean answerBegan) {
            super(
                    answerBegan
                            ? "the engine closed the connection before its answer ended"
                            : "the engine closed the connection before answering",
                    null);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    /** One request and its answer, on its loop; every method runs there (or hops there first). */
    private final class Call {
        private final EventLoop loop;
        private final HttpMethod method;
        private final String pathAndQuery;
        private final HttpHeaders headers;
        private final byte @Nullable [] body;
        private final Consumer<HttpResponse> onHead;
        private final FluxSink<ByteBuf> sink;
        private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
        private @Nullable Link link;
        private boolean headSeen;
        private boolean lastSeen;
        private boolean keepAlive;
        private boolean over;
        private boolean sentAgain;

        Call(
                EventLoop loop,
                HttpMethod method,
                String pathAndQuery,
                HttpHeaders headers,
                byte @Nullable [] body,
                Consumer<HttpResponse> onHead,
                FluxSink<ByteBuf> sink) {
            this.loop = loop;
            this.method = method;
            this.pathAndQuery = pathAndQuery;
            this.headers = headers;
            this.body = body;
            this.onHead = onHead;
            this.sink = sink;
        }

        void start() {
            if (over) {
                return;
            }
            if (closed) {
                fail(new EngineClosed(false));
                return;
            }
            // Sent again: on a new connection, not on another kept one that may have run out too.
            Link kept = sentAgain ? null : takeIdle(loop);
            if (kept != null) {
                send(kept, true);
                return;
            }
            InetSocketAddress known = literal;
            if (known != null) {
                connect(known);
                return;
            }
            // A name (localhost, a Service): the JDK's resolver blocks, so it runs off the loop, and the connection is
            // made back on it. Once per new connection, not per request.
            Mono.fromCallable(() -> new InetSocketAddress(InetAddress.getByName(host), port))
                    .subscribeOn(Schedulers.boundedElastic())
                    .subscribe(
                            address -> onLoop(loop, () -> connect(address)),
                            failure -> onLoop(loop, () -> fail(failure)));
        }

        private void connect(InetSocketAddress address) {
            if (over) {
                return;
            }
            Link fresh = new Link(EngineConnections.this);
            new Bootstrap()
                    .group(loop)
                    .channel(loops.onChannelClass(SocketChannel.class, loop))
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                    .option(ChannelOption.ALLOCATOR, buffers)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            if (tls != null) {
                                channel.pipeline().addLast(tls.newHandler(channel.alloc(), host, port));
                            }
                            channel.pipeline().addLast(new HttpClientCodec(), fresh);
                        }
                    })
                    .connect(address)
                    .addListener((ChannelFutureListener) connected -> {
                        if (!connected.isSuccess()) {
                            fail(connected.cause());
                            return;
                        }
                        open.add(connected.channel());
                        if (closed) {
                            // The gateway closed while this one was connecting: it is not left open behind it.
                            connected.channel().close();
                            fail(new EngineClosed(false));
                            return;
                        }
                        if (over) {
                            connected.channel().close();
                            return;
                        }
                        send(fresh, false);
                    });
        }

        private void send(Link on, boolean reused) {
            link = on;
            on.call = this;
            on.reused = reused;
            on.channel().config().setAutoRead(true);
            on.channel().writeAndFlush(request()).addListener((ChannelFutureListener) written -> {
                if (!written.isSuccess() && link == on) {
                    lost(on, written.cause());
                }
            });
        }

        private FullHttpRequest request() {
            ByteBuf content = body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body);
            FullHttpRequest request =
                    new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, pathPrefix + pathAndQuery, content);
            request.headers().set(headers);
            request.headers().set(HttpHeaderNames.HOST, hostHeader);
            request.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
            if (body != null) {
                HttpUtil.setContentLength(request, body.length);
            } else {
                request.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
            }
            return request;
        }

        void head(HttpResponse response) {
            if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                return;
            }
            headSeen = true;
            keepAlive = HttpUtil.isKeepAlive(response) && response.status().code() < 400;
            onHead.accept(response);
        }

        void content(HttpContent content, Link on) {
            ByteBuf buffer = content.content();
            if (buffer.isReadable()) {
                waiting.add(buffer);
            } else {
                buffer.release();
            }
            if (content instanceof LastHttpContent) {
                lastSeen = true;
                on.call = null;
                link = null;
                if (keepAlive && !closed) {
                    keep(on);
                } else {
                    on.channel().close();
                }
            }
            drain();
        }

        /** The connection failed or closed under this call. */
        void lost(Link on, Throwable failure) {
            if (over || lastSeen) {
                return;
            }
            on.call = null;
            link = null;
            on.channel().close();
            if (on.reused && !headSeen && !sentAgain) {
                // The kept connection's keep-alive ran out as the request went out: nothing was answered.
                sentAgain = true;
                start();
                return;
            }
            fail(failure instanceof IOException ? failure : new EngineClosed(headSeen));
        }

        /** The client asked for more of the answer (the sink counts what it asked for). */
        void want(long more) {
            onLoop(loop, this::drain);
        }

        private void drain() {
            while (sink.requestedFromDownstream() > 0 && !waiting.isEmpty()) {
                sink.next(waiting.poll());
            }
            if (lastSeen && waiting.isEmpty() && !over) {
                over = true;
                sink.complete();
                return;
            }
            Link on = link;
            if (on != null) {
                // Reads the engine's answer only as the client takes it.
                on.channel().config().setAutoRead(sink.requestedFromDownstream() > 0);
            }
        }

        void cancel() {
            onLoop(loop, () -> {
                if (over) {
                    return;
                }
                over = true;
                release();
                Link on = link;
                link = null;
                if (on != null) {
                    // The engine sees its connection close and ends the request, freeing its slot.
                    on.call = null;
                    on.channel().close();
                }
            });
        }

        private void fail(Throwable failure) {
            if (over) {
                return;
            }
            over = true;
            release();
            sink.error(failure);
        }

        private void release() {
            ByteBuf buffer;
            while ((buffer = waiting.poll()) != null) {
                buffer.release();
            }
        }
    }

    /** A connection's handler: the call it carries now, or its place among the kept ones. */
    private static final class Link extends ChannelInboundHandlerAdapter {
        private final EngineConnections owner;
        private @Nullable Call call;
        private boolean reused;
        private @Nullable ScheduledFuture<?> idleTimer;
        private @Nullable Channel channel;

        Link(EngineConnections owner) {
            this.owner = owner;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext context) {
            channel = context.channel();
        }

        Channel channel() {
            Channel known = channel;
            if (known == null) {
                throw new IllegalStateException("not yet on a connection");
            }
            return known;
        }

        void leaveIdle() {
            ScheduledFuture<?> timer = idleTimer;
            idleTimer = null;
            if (timer != null) {
                timer.cancel(false);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext context, Object message) {
            Call current = call;
            if (current == null) {
                // Nothing asked: an engine that writes between answers is not to be trusted with the next one.
                ReferenceCountUtil.release(message);
                context.close();
                return;
            }
            if (message instanceof HttpResponse response) {
                current.head(response);
            }
            if (message instanceof HttpContent content) {
                current.content(content, this);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext context) {
            leaveIdle();
            owner.forget(this);
            Call current = call;
            if (current != null) {
                current.lost(this, new EngineClosed(current.headSeen));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
            Call current = call;
            if (current != null) {
                current.lost(this, cause);
            }
            context.close();
        }
    }
}
