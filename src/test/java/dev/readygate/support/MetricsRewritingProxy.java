package dev.readygate.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;

/**
 * A plain HTTP proxy in front of an engine that hands every request through unchanged but {@code GET /metrics}, whose
 * body a test rewrites: an exposition too large, full of foreign series, missing series, not Prometheus text. The
 * engine itself stays real (the simulator); only what a scraper would get from a bloated or broken {@code /metrics} is
 * made here. Answers are forwarded whole (streams arrive at once, which no readiness check here depends on).
 */
public final class MetricsRewritingProxy implements AutoCloseable {

    private static final List<String> FORWARDED = List.of("Content-Type", "Authorization", "Accept");

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "metrics-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final URI target;
    private volatile UnaryOperator<String> metrics = UnaryOperator.identity();

    private MetricsRewritingProxy(URI target) throws IOException {
        this.target = target;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", FreePorts.free()), 64);
        server.createContext("/", this::forward);
        server.setExecutor(threads);
        server.start();
    }

    /** A proxy to {@code target} (e.g. {@code http://127.0.0.1:18000}) on a free loopback port. */
    public static MetricsRewritingProxy to(String target) {
        try {
            return new MetricsRewritingProxy(URI.create(target));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** From now on {@code /metrics} answers 200 with {@code rewrite} applied to the engine's own exposition. */
    public void metrics(UnaryOperator<String> rewrite) {
        this.metrics = rewrite;
    }

    private void forward(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().toString();
            HttpRequest.Builder request = HttpRequest.newBuilder(target.resolve(path))
                    .timeout(Duration.ofSeconds(30))
                    .method(
                            exchange.getRequestMethod(),
                            HttpRequest.BodyPublishers.ofByteArray(
                                    exchange.getRequestBody().readAllBytes()));
            for (String header : FORWARDED) {
                String value = exchange.getRequestHeaders().getFirst(header);
                if (value != null) {
                    request.header(header, value);
                }
            }
            HttpResponse<byte[]> response;
            try {
                response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException ex) {
                exchange.sendResponseHeaders(502, -1);
                return;
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                exchange.sendResponseHeaders(502, -1);
                return;
            }
            byte[] body = response.body();
            if (path.startsWith("/metrics") && response.statusCode() == 200) {
                body = metrics.apply(new String(body, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
            }
            response.headers()
                    .firstValue("Content-Type")
                    .ifPresent(type -> exchange.getResponseHeaders().set("Content-Type", type));
            exchange.sendResponseHeaders(response.statusCode(), body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
        client.close();
    }
}
