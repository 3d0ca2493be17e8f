package dev.readygate.e2e;

import dev.readygate.support.FreePorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The end-to-end tests' only network: free ports and plain HTTP on 127.0.0.1. Every process they start (containers
 * with host networking, Prometheus) listens on a port chosen here and passed on its command line.
 */
final class Loopback {

    private static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final JsonMapper json = JsonMapper.builder().build();

    private Loopback() {}

    /** A port nothing listens on now (the OS picks it; the caller binds it soon after). */
    static int freePort() {
        return FreePorts.free();
    }

    /** {@code GET http://127.0.0.1:port/path}. */
    static HttpResponse<String> get(int port, String path) {
        return get(port, path, "*/*");
    }

    private static HttpResponse<String> get(int port, String path, String accept) {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Accept", accept)
                .timeout(Duration.ofSeconds(5))
                .build());
    }

    /** {@code POST http://127.0.0.1:port/path}, without a body. */
    static HttpResponse<String> post(int port, String path) {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10))
                .build());
    }

    private static HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The status code of {@code GET path}, or -1 while nothing answers. */
    static int status(int port, String path) {
        try {
            return get(port, path).statusCode();
        } catch (UncheckedIOException e) {
            return -1;
        }
    }

    /** {@code GET path} answered 200 with a JSON body. */
    static JsonNode json(int port, String path) {
        HttpResponse<String> response = get(port, path, "application/json");
        if (response.statusCode() != 200) {
            throw new IllegalStateException("GET " + path + ": " + response.statusCode() + " " + response.body());
        }
        return json.readTree(response.body());
    }

    /** The last {@code lines} lines of a log, for a failure message. */
    static String tail(String log, int lines) {
        String[] all = log.split("\n");
        return String.join("\n", Arrays.copyOfRange(all, Math.max(0, all.length - lines), all.length));
    }
}
