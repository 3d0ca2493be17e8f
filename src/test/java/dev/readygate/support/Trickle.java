package dev.readygate.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A trickle of short, non-streamed completions to an engine, one after the other on a thread of its own, until closed:
 * an engine that is never idle for long, with no request running for most of any moment.
 */
public final class Trickle implements AutoCloseable {

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger sent = new AtomicInteger();
    private final Thread thread;

    private Trickle(HttpRequest request) {
        this.thread = Thread.ofPlatform().name("trickle").daemon().start(() -> send(request));
    }

    /** {@code maxTokens}-token completions of a short prompt to {@code baseUrl}'s {@code /v1/completions}. */
    public static Trickle of(String baseUrl, String model, int maxTokens) {
        return new Trickle(HttpRequest.newBuilder(URI.create(baseUrl + "/v1/completions"))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model
                        + "\",\"prompt\":\"Hello there friend\",\"max_tokens\":" + maxTokens + "}"))
                .build());
    }

    /** The requests answered so far. */
    public int sent() {
        return sent.get();
    }

    private void send(HttpRequest request) {
        HttpClient http = HttpClient.newHttpClient();
        while (running.get()) {
            try {
                http.send(request, HttpResponse.BodyHandlers.discarding());
                sent.incrementAndGet();
            } catch (IOException e) {
                // One fewer request: the trickle goes on.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void close() {
        running.set(false);
        try {
            thread.join(Duration.ofSeconds(15));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
