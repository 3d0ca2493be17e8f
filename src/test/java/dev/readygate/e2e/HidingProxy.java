package dev.readygate.e2e;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * A plain HTTP proxy on loopback in front of a real engine that hides some of its paths (answering FastAPI's 404
 * {@code {"detail":"Not Found"}} for them) and passes everything else through, streams included: an OpenAI-compatible
 * server that lacks {@code /tokenize} or {@code /props}, made from llama-server without changing what it answers. It can
 * also answer a path with a stream without end, as an engine that ignores {@code max_tokens} would.
 */
final class HidingProxy implements AutoCloseable {

    private static final Set<String> HOP_BY_HOP =
            Set.of("connection", "content-length", "transfer-encoding", "keep-alive", "host", "upgrade");

    private final HttpServer server;
    private final HttpClient client;
    private final String target;
    private final Set<String> hidden = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Set<String> endless = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The events the longest endless stream wrote before its client went away. */
    final java.util.concurrent.atomic.AtomicLong mostEventsWritten = new java.util.concurrent.atomic.AtomicLong();

    private HidingProxy(String target, Set<String> hidden) throws IOException {
        this.target = target;
        this.hidden.addAll(hidden);
        this.client = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(2))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    /** A proxy to {@code target} (a base URL) that hides {@code paths}. */
    static HidingProxy hiding(String target, String... paths) {
        try {
            return new HidingProxy(target, Set.of(paths));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Hides {@code paths} too, from now on: an engine whose {@code /health} still answers while they fail. */
    void hide(String... paths) {
        hidden.addAll(List.of(paths));
    }

    /**
     * Answers {@code path} from now on with a 200 event stream of one-token completion chunks, one every 5 ms, without
     * end: until the client goes away.
     */
    void streamForever(String path) {
        endless.add(path);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if (hidden.contains(path)) {
                byte[] body = "{\"detail\":\"Not Found\"}".getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(404, body.length);
                exchange.getResponseBody().write(body);
                return;
            }
            if (endless.contains(path)) {
                streamForever(exchange);
                return;
            }
            forward(exchange);
        }
    }

    private void streamForever(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readAllBytes();
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        byte[] event = "data: {\"choices\":[{\"index\":0,\"text\":\" x\",\"finish_reason\":null}]}\n\n"
                .getBytes(StandardCharsets.UTF_8);
        long written = 0;
        try (OutputStream out = exchange.getResponseBody()) {
            while (true) {
                out.write(event);
                out.flush();
                written++;
                mostEventsWritten.accumulateAndGet(written, Math::max);
                Thread.sleep(5);
            }
        } catch (IOException e) {
            // The client went away: the stream ends here.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void forward(HttpExchange exchange) throws IOException {
        byte[] requestBody = exchange.getRequestBody().readAllBytes();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(target + exchange.getRequestURI()))
                .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(requestBody));
        exchange.getRequestHeaders().forEach((name, values) -> {
            if (!HOP_BY_HOP.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                values.forEach(value -> request.header(name, value));
            }
        });
        HttpResponse<InputStream> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            // The engine is gone: the client sees its connection dropped, as it would talking to the engine itself.
            exchange.close();
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        response.headers().map().forEach((name, values) -> {
            if (!HOP_BY_HOP.contains(name.toLowerCase(java.util.Locale.ROOT)) && !name.startsWith(":")) {
                exchange.getResponseHeaders().put(name, List.copyOf(values));
            }
        });
        exchange.sendResponseHeaders(response.statusCode(), 0);
        try (InputStream in = response.body();
                OutputStream out = exchange.getResponseBody()) {
            byte[] buffer = new byte[8192];
            int read;
            while ((read = in.read(buffer)) >= 0) {
                out.write(buffer, 0, read);
                out.flush();
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        client.close();
    }
}
