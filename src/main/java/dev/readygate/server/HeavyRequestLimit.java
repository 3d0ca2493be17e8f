package dev.readygate.server;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A budget of requests answered at once for each {@link HeavyEndpoint}, so that clients polling {@code /status} can
 * never queue the kubelet's probes behind them: a request beyond its endpoint's budget is answered 503 with
 * {@code Retry-After}, after {@link #REJECTION_DELAY}. The delay is what keeps a client that ignores
 * {@code Retry-After} (a script polling in a loop, hundreds of them) from turning readygate's CPU into a loop of
 * rejections that leaves the event loops no time for the probes: such a client gets at most two answers a second,
 * however fast readygate could say no. The rejected request holds no place and no thread while it waits, only a timer.
 * A request holds its place until its answer is written (a slow reader of an export holds it too), or until it is
 * cancelled. No queue: memory stays bounded by the connections. The probes, and every other path, pass untouched.
 */
public final class HeavyRequestLimit implements WebFilter, Ordered {

    /** What {@code Retry-After} says, in seconds. */
    static final int RETRY_AFTER_SECONDS = 1;

    /** How long a request beyond the budget waits for its 503. */
    static final Duration REJECTION_DELAY = Duration.ofMillis(500);

    private final int permits;
    private final Scheduler timer;
    private final Map<HeavyEndpoint, AtomicInteger> answering = new EnumMap<>(HeavyEndpoint.class);
    private final Map<HeavyEndpoint, AtomicLong> rejected = new EnumMap<>(HeavyEndpoint.class);
    private final Map<HeavyEndpoint, byte[]> rejections = new EnumMap<>(HeavyEndpoint.class);

    /**
     * @param permits the most requests answered at once for each heavy endpoint
     * @param timer where a rejection waits out {@link #REJECTION_DELAY}
     */
    public HeavyRequestLimit(int permits, Scheduler timer) {
        this.permits = permits;
        this.timer = timer;
        for (HeavyEndpoint endpoint : HeavyEndpoint.values()) {
            answering.put(endpoint, new AtomicInteger());
            rejected.put(endpoint, new AtomicLong());
            rejections.put(
                    endpoint,
                    ("readygate is answering its most " + endpoint.value() + " requests at once (" + permits
                                    + ", readygate.server.max-heavy-requests): try again in " + RETRY_AFTER_SECONDS
                                    + " s\n")
                            .getBytes(StandardCharsets.UTF_8));
        }
    }

    /** How many requests for {@code endpoint} were answered 503 for being beyond its budget. */
    public long rejected(HeavyEndpoint endpoint) {
        return rejected.get(endpoint).get();
    }

    /** How many requests for {@code endpoint} are being answered now. */
    public int answering(HeavyEndpoint endpoint) {
        return answering.get(endpoint).get();
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        HeavyEndpoint endpoint = HeavyEndpoint.of(
                exchange.getRequest().getPath().pathWithinApplication().value());
        if (endpoint == null) {
            return chain.filter(exchange);
        }
        AtomicInteger taken = answering.get(endpoint);
        if (taken.incrementAndGet() > permits) {
            taken.decrementAndGet();
            rejected.get(endpoint).incrementAndGet();
            return Mono.delay(REJECTION_DELAY, timer).then(tooMany(exchange.getResponse(), endpoint));
        }
        AtomicBoolean released = new AtomicBoolean();
        return chain.filter(exchange).doFinally(signal -> {
            if (released.compareAndSet(false, true)) {
                taken.decrementAndGet();
            }
        });
    }

    private Mono<Void> tooMany(ServerHttpResponse response, HeavyEndpoint endpoint) {
        return Mono.defer(() -> answerTooMany(response, endpoint));
    }

    private Mono<Void> answerTooMany(ServerHttpResponse response, HeavyEndpoint endpoint) {
        response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
        HttpHeaders headers = response.getHeaders();
        headers.set(HttpHeaders.RETRY_AFTER, String.valueOf(RETRY_AFTER_SECONDS));
        headers.setCacheControl("no-store");
        headers.setContentType(MediaType.TEXT_PLAIN);
        DataBuffer buffer = response.bufferFactory().wrap(rejection(endpoint));
        return response.writeWith(Mono.just(buffer));
    }

    /** The body of a 503 for {@code endpoint} (plain text, made once). */
    private byte[] rejection(HeavyEndpoint endpoint) {
        return rejections.get(endpoint);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
