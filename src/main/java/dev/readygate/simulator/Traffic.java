package dev.readygate.simulator;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.LoopResources;

/**
 * Users' traffic against the simulated engine: a number of clients, each sending one long streamed completion after
 * the other (a new one as soon as the last ends, a second after one fails), so the engine has requests in flight when
 * a scenario crashes or restarts it: {@code vllm:num_requests_running} counts them as it counts any request.
 */
final class Traffic implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(Traffic.class);

    /** Tokens each request asks for: long enough to be in flight for seconds at the simulator's decode speed. */
    static final int MAX_TOKENS = 1500;

    private final SimulatorProperties properties;
    private final HttpClient client;
    private final Scheduler timer;
    private final List<Disposable> clients = new ArrayList<>();

    Traffic(SimulatorProperties properties, LoopResources loops, Scheduler timer) {
        this.properties = properties;
        this.timer = timer;
        HttpClient http = HttpClient.create()
                .runOn(loops)
                .baseUrl("http://" + properties.host() + ":" + properties.port())
                .responseTimeout(Duration.ofMinutes(2));
        String key = properties.apiKey();
        this.client = key == null
                ? http
                : http.headers(headers -> headers.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + key));
    }

    /** Runs {@code streams} clients from now on (0 stops them all; their requests in flight are cancelled). */
    synchronized void set(int streams) {
        if (streams < 0) {
            throw new IllegalArgumentException("traffic needs a number of clients, 0 or more (was " + streams + ")");
        }
        while (clients.size() > streams) {
            clients.removeLast().dispose();
        }
        while (clients.size() < streams) {
            clients.add(client(clients.size() + 1));
        }
        logger.info("vLLM simulator: {} client(s) sending requests", streams);
    }

    /** How many clients run. */
    synchronized int streams() {
        return clients.size();
    }

    private Disposable client(int number) {
        String body = """
                {"model": "%s", "prompt": "User %d asks for a long story about a lighthouse keeper.",
                 "max_tokens": %d, "min_tokens": %d, "ignore_eos": true, "stream": true, "temperature": 0.7}""".formatted(properties.model().servedModelName(), number, MAX_TOKENS, MAX_TOKENS);
        Mono<Long> request = client.headers(headers -> headers.set(HttpHeaderNames.CONTENT_TYPE, "application/json"))
                .post()
                .uri("/v1/completions")
                .send(ByteBufFlux.fromString(Mono.just(body), StandardCharsets.UTF_8, ByteBufAllocator.DEFAULT))
                .responseContent()
                .count()
                .then(Mono.delay(Duration.ofMillis(200), timer));
        // One request after the other; after a failure (the engine is down) a second's pause.
        return Flux.defer(() -> request.onErrorResume(error -> Mono.delay(Duration.ofSeconds(1), timer)))
                .repeat()
                .subscribe(null, error -> logger.warn("vLLM simulator: traffic client {} stopped", number, error));
    }

    @Override
    public synchronized void close() {
        clients.forEach(Disposable::dispose);
        clients.clear();
    }
}
