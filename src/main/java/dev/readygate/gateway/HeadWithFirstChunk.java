package dev.readygate.gateway;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;

/**
 * Sends an answer's head to the client together with its first chunk: one write to the socket, where Reactor Netty's
 * server writes and flushes the head on its own and asks for the body only once that write is done (two system calls
 * and two segments before the client has its first token). On the traffic port, between the HTTP codec and Reactor
 * Netty's handlers, one per client connection, on its loop.
 *
 * <p>A head (not a whole answer, not a {@code 100 Continue}) is written but its flush is held, and its write is told
 * done at once, so that the server asks for the body in the same turn of the loop. The gateway answers only once the
 * engine's first body buffer is there ({@link GatewayProxy}), so that buffer is written and flushed right after, and
 * the head goes with it. Should nothing follow in that turn, the held flush is done at its end: a head never waits for
 * a chunk that is not there. A head whose write fails closes the connection, so the failure is seen by the next write.
 */
final class HeadWithFirstChunk extends ChannelOutboundHandlerAdapter {

    private boolean headWritten;
    private boolean flushHeld;
    /** The held flush, done at the end of the loop's turn unless a chunk's flush took it first; one per connection. */
    private Runnable heldFlush = () -> {};

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        heldFlush = () -> {
            if (flushHeld) {
                flushHeld = false;
                context.flush();
            }
        };
    }

    @Override
    public void write(ChannelHandlerContext context, Object message, ChannelPromise promise) {
        if (message instanceof HttpResponse head
                && !(message instanceof HttpContent)
                && head.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
            context.write(message).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            headWritten = true;
            promise.trySuccess();
            return;
        }
        context.write(message, promise);
    }

    @Override
    public void flush(ChannelHandlerContext context) {
        if (headWritten) {
            // The head's own flush: held until its first chunk's, or the end of this turn of the loop.
            headWritten = false;
            flushHeld = true;
            context.executor().execute(heldFlush);
            return;
        }
        flushHeld = false;
        context.flush();
    }
}
