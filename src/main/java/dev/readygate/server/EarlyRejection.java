package dev.readygate.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * Turns a request for a heavy endpoint away as soon as the HTTP codec has read it, when its endpoint's budget is
 * visibly taken ({@link HeavyRequestLimit#full}): the same 503 with {@code Retry-After} that {@link HeavyRequestLimit}
 * answers, counted with its, without the work of handing the request to the application (its exchange, routing,
 * observation). A flood of pollers turned away then costs the event loops, where the probes are answered, as little
 * as it can. Only on a connection with no request waiting for its answer, so that answers keep the order of their
 * requests; otherwise, and whenever the budget has room, the request goes on and {@link HeavyRequestLimit} decides.
 * At the connection cap the answer closes its connection, as every answer does there ({@link ConnectionGuard}).
 * Shared by every connection's pipeline.
 */
@ChannelHandler.Sharable
final class EarlyRejection extends ChannelInboundHandlerAdapter {

    /** Set on a connection while the rest of a request turned away (its body) is dropped. */
    private static final AttributeKey<Boolean> DROPPING = AttributeKey.valueOf("readygate.early-rejection.dropping");

    private final HeavyRequestLimit limit;
    private final ConnectionGuard guard;

    EarlyRejection(HeavyRequestLimit limit, ConnectionGuard guard) {
        this.limit = limit;
        this.guard = guard;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
        if (message instanceof HttpRequest request) {
            HeavyEndpoint endpoint = endpoint(request);
            if (endpoint != null
                    && request.decoderResult().isSuccess()
                    && limit.full(endpoint)
                    && !guard.waiting(ctx.channel())) {
                turnAway(ctx, request, endpoint);
                return;
            }
        } else if (message instanceof HttpContent content
                && ctx.channel().hasAttr(DROPPING)
                && ctx.channel().attr(DROPPING).get() != null) {
            if (content instanceof LastHttpContent) {
                ctx.channel().attr(DROPPING).set(null);
            }
            ReferenceCountUtil.release(content);
            return;
        }
        ctx.fireChannelRead(message);
    }

    private void turnAway(ChannelHandlerContext ctx, HttpRequest request, HeavyEndpoint endpoint) {
        boolean keepAlive = HttpUtil.isKeepAlive(request) && !guard.atCap();
        if (!(request instanceof LastHttpContent)) {
            ctx.channel().attr(DROPPING).set(Boolean.TRUE);
        }
        ReferenceCountUtil.release(request);
        limit.countRejected(endpoint);
        FullHttpResponse response = new DefaultFullHttpResponse(
                request.protocolVersion(),
                HttpResponseStatus.SERVICE_UNAVAILABLE,
                Unpooled.wrappedBuffer(limit.rejection(endpoint)));
        HttpHeaders headers = response.headers();
        headers.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
        headers.setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        headers.setInt(HttpHeaderNames.RETRY_AFTER, HeavyRequestLimit.RETRY_AFTER_SECONDS);
        headers.set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        HttpUtil.setKeepAlive(response, keepAlive);
        ChannelFuture written = ctx.writeAndFlush(response);
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** The heavy endpoint a request is for, from its path (origin form; any other goes on to the application). */
    private static @Nullable HeavyEndpoint endpoint(HttpRequest request) {
        String uri = request.uri();
        if (!uri.startsWith("/")) {
            return null;
        }
        int query = uri.indexOf('?');
        return HeavyEndpoint.of(query < 0 ? uri : uri.substring(0, query));
    }
}
