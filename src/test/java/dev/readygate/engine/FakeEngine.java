package dev.readygate.engine;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import reactor.core.publisher.Flux;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * A small HTTP server on a free loopback port whose routes each test defines: OpenAI-compatible servers that are not
 * vLLM, and bodies no real engine sends (endless, huge, oddly framed).
 */
final class FakeEngine implements AutoCloseable {

    private final DisposableServer server;
    private final AtomicInteger connections = new AtomicInteger();

    private FakeEngine(Consumer<HttpServerRoutes> routes) {
        this.server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                // Per connection: doOnConnection would count each request of a kept one.
                .doOnChannelInit((observer, channel, remote) -> connections.incrementAndGet())
                .route(routes)
                .bindNow();
    }

    static FakeEngine start(Consumer<HttpServerRoutes> routes) {
        return new FakeEngine(routes);
    }

    /** Connections accepted so far. */
    int connections() {
        return connections.get();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.port());
    }

    /**
     * {@code count} copies of {@code chunk}, produced lazily as the connection can take them, all views of one direct
     * buffer, adding the bytes handed to the server to {@code produced}. Writing them allocates nothing: a heap
     * buffer would be copied into a fresh direct one per write, and Netty's allocator may then park on a lock it
     * shares with the client's event loops, which BlockHound rightly reports.
     */
    static Flux<ByteBuf> repeat(String chunk, long count, AtomicLong produced) {
        // Unreleasable: Netty releases each view after writing it, and views share the buffer's reference count. The
        // buffer is never freed (views may still sit in an outbound queue after the flux ends); it is one chunk.
        ByteBuf shared = Unpooled.unreleasableBuffer(
                Unpooled.directBuffer(chunk.length()).writeBytes(chunk.getBytes(StandardCharsets.UTF_8)));
        return Flux.<ByteBuf>generate(sink -> sink.next(shared.duplicate()))
                .take(count)
                .doOnNext(buffer -> produced.addAndGet(buffer.readableBytes()));
    }

    /** {@code text} in one direct buffer (for the reason {@link #repeat} gives), made when the flux is subscribed. */
    static Flux<ByteBuf> text(String text) {
        return Flux.defer(() -> {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            return Flux.just(Unpooled.directBuffer(bytes.length).writeBytes(bytes));
        });
    }

    @Override
    public void close() {
        server.disposeNow();
    }
}
