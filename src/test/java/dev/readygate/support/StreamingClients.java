package dev.readygate.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Steady traffic for fault tests and the failure-cycle benchmark: a few clients, each sending streamed completions back
 * to back (after a request that did not complete, a short pause, as a client's retry would), and the outcome of every
 * request as its client saw it. One platform thread per client; {@link #close()} stops them and cuts what is in
 * flight.
 */
public final class StreamingClients implements AutoCloseable {

    /** How one client request ended, as its client saw it. */
    public enum Outcome {
        /** A 200 stream that ended with {@code [DONE]} and no error event. */
        COMPLETED,
        /** A 200 stream that ended, or broke, before {@code [DONE]}: cut mid-stream. */
        CUT,
        /** 503 with {@code Retry-After}: a clean refusal, the client knows when to come back. */
        REFUSED,
        /**
         * Anything else: another status (502, 504, 503 without {@code Retry-After}), an error event, an event that is
         * not JSON, a reset or a refused connection.
         */
        FAILED
    }

    /**
     * One client request: when it was sent, when it ended, how, the status (0 when none came) and a word on why it
     * failed.
     */
    public record Request(Instant sent, Instant ended, Outcome outcome, int status, String detail) {}

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient http;
    private final Supplier<URI> target;
    private final String body;
    private final Map<String, String> headers;
    private final Duration pauseAfterFailure;
    private final Predicate<Instant> reachable;
    private final Clock clock = Clock.systemUTC();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean stopped;

    private StreamingClients(
            Supplier<URI> target,
            String body,
            Map<String, String> headers,
            Duration pauseAfterFailure,
            Predicate<Instant> reachable) {
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        this.target = target;
        this.body = body;
        this.headers = Map.copyOf(headers);
        this.pauseAfterFailure = pauseAfterFailure;
        this.reachable = reachable;
    }

    /**
     * Starts {@code clients} clients POSTing {@code body} to {@code url} ({@code /v1/completions} with
     * {@code "stream":true}), each pausing {@code pauseAfterFailure} after a request that did not complete.
     */
    public static StreamingClients start(URI url, int clients, String body, Duration pauseAfterFailure) {
        return start(() -> url, clients, body, Map.of(), pauseAfterFailure, at -> true);
    }

    /**
     * As {@link #start(URI, int, String, Duration)}, with {@code headers} on each request, the URL asked anew for each
     * request, and {@code reachable} asked first: where it says no (a Service without an endpoint), the request fails at once without being sent, as a
     * connection to a Service with no endpoint is refused.
     */
    public static StreamingClients start(
            Supplier<URI> url,
            int clients,
            String body,
            Map<String, String> headers,
            Duration pauseAfterFailure,
            Predicate<Instant> reachable) {
        StreamingClients traffic = new StreamingClients(url, body, headers, pauseAfterFailure, reachable);
        for (int i = 0; i < clients; i++) {
            traffic.threads.add(
                    Thread.ofPlatform().daemon().name("streaming-client-" + i).start(traffic::loop));
        }
        return traffic;
    }

    /** The body of a streamed completion of {@code tokens} tokens of {@code model}, never ended early. */
    public static String completion(String model, int tokens) {
        return "{\"model\":\"" + model + "\",\"prompt\":\"Tell me about the sea.\",\"max_tokens\":" + tokens
                + ",\"ignore_eos\":true,\"stream\":true}";
    }

    /** Every request ended so far, in the order they ended. */
    public List<Request> requests() {
        return List.copyOf(requests);
    }

    /** How many requests ended so far with {@code outcome}. */
    public long count(Outcome outcome) {
        return requests.stream().filter(r -> r.outcome() == outcome).count();
    }

    /** The outcomes of the requests sent in {@code [from, to)}, every outcome present (0 where none). */
    public Map<Outcome, Long> counts(Instant from, Instant to) {
        Map<Outcome, Long> counts = new EnumMap<>(Outcome.class);
        for (Outcome outcome : Outcome.values()) {
            counts.put(outcome, 0L);
        }
        for (Request request : requests) {
            if (!request.sent().isBefore(from) && request.sent().isBefore(to)) {
                counts.merge(request.outcome(), 1L, Long::sum);
            }
        }
        return counts;
    }

    private void loop() {
        while (!stopped) {
            Instant sent = clock.instant();
            Request request = reachable.test(sent) ? send(sent) : request(sent, Outcome.FAILED, 0, "no endpoint");
            if (stopped) {
                return; // cut by close(): not an outcome of the engine's
            }
            requests.add(request);
            if (request.outcome() != Outcome.COMPLETED) {
                LockSupport.parkNanos(pauseAfterFailure.toNanos());
            }
        }
    }

    private Request send(Instant sent) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(target.get())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(builder::header);
        HttpResponse<InputStream> response;
        try {
            response = http.send(builder.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException ex) {
            return request(sent, Outcome.FAILED, 0, ex.getClass().getSimpleName());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return request(sent, Outcome.FAILED, 0, "interrupted");
        }
        int status = response.statusCode();
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            if (status != 200) {
                reader.transferTo(java.io.Writer.nullWriter());
                boolean retryAfter =
                        response.headers().firstValue("Retry-After").isPresent();
                return request(sent, status == 503 && retryAfter ? Outcome.REFUSED : Outcome.FAILED, status, "status");
            }
            String line;
            while ((line = reader.readLine()) != null) {
                if (!line.startsWith("data:")) {
                    continue;
                }
                if (line.contains("[DONE]")) {
                    return request(sent, Outcome.COMPLETED, status, "");
                }
                if (line.contains("\"error\"")) {
                    return request(sent, Outcome.FAILED, status, "error event");
                }
                if (!isJson(line.substring("data:".length()))) {
                    return request(sent, Outcome.FAILED, status, "an event that is not JSON");
                }
            }
            return request(sent, Outcome.CUT, status, "ended without [DONE]");
        } catch (IOException ex) {
            return request(sent, Outcome.CUT, status, ex.getClass().getSimpleName());
        }
    }

    private static boolean isJson(String data) {
        try {
            JSON.readTree(data);
            return true;
        } catch (JacksonException ex) {
            return false;
        }
    }

    private Request request(Instant sent, Outcome outcome, int status, String detail) {
        return new Request(sent, clock.instant(), outcome, status, detail);
    }

    /** Stops the clients: what is in flight is cut and not recorded. */
    @Override
    public void close() {
        stopped = true;
        http.shutdownNow();
        for (Thread thread : threads) {
            try {
                thread.join(Duration.ofSeconds(10));
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
