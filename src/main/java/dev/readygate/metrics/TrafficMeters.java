package dev.readygate.metrics;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gateway.ExchangeEnding;
import dev.readygate.gateway.ExchangeEnds;
import dev.readygate.gateway.GatewayMode;
import dev.readygate.gateway.OpenAiError;
import dev.readygate.gateway.ProxiedExchange;
import dev.readygate.gateway.TrafficEvents;
import dev.readygate.gateway.TrafficServer;
import dev.readygate.gateway.WorkInFlight;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The traffic path's meters (gateway mode): client requests by outcome ({@link MeterNames#GATEWAY_REQUESTS}: a
 * forwarded one's {@link ExchangeEnding}, a refused one's answer), time held, the client's time to first token, the
 * requests in flight, the work engine stops cut (requests and their tokens, from {@link WorkInFlight}) and the traffic
 * port's connections. The gateway tells it what happened ({@link TrafficEvents},
 * {@link ExchangeEnds}); the connections are read from the {@link TrafficServer}. Registered only with
 * {@code readygate.gateway.enabled}, every series of a closed set at 0 from the start: off, the exposition is the
 * readiness-only sidecar's. Nothing the engine exports itself (tokens, queues) is counted again.
 */
@Component
final class TrafficMeters implements TrafficEvents, ExchangeEnds {

    private static final Duration[] TTFT_BUCKETS = Stream.of(
                    10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000)
            .map(Duration::ofMillis)
            .toArray(Duration[]::new);

    private static final Duration[] HELD_BUCKETS = Stream.of(
                    100, 250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000)
            .map(Duration::ofMillis)
            .toArray(Duration[]::new);

    private final Map<ExchangeEnding, Counter> endings = new EnumMap<>(ExchangeEnding.class);
    private final Map<OpenAiError, Counter> refusals = new EnumMap<>(OpenAiError.class);
    private final Timer heldForwarded;
    private final Timer heldRefused;
    private final Timer timeToFirstToken;
    private final Counter sentAgain;
    // Held here: a gauge keeps only a weak reference to what it reads.
    private final Supplier<@Nullable TrafficServer> server;

    @Autowired
    TrafficMeters(
            MeterRegistry registry,
            ReadygateProperties properties,
            ObjectProvider<GatewayMode> mode,
            WorkInFlight work) {
        this(
                properties.gateway().enabled() ? registry : new CompositeMeterRegistry(),
                () -> {
                    GatewayMode running = mode.getIfAvailable();
                    return running == null ? null : running.server();
                },
                work);
    }

    /**
     * @param registry where the meters go (a registry without children, for gateway mode off: every meter a no-op)
     * @param server the traffic server while its port is open, else null
     * @param work the gateway's count of the requests in flight (the one count: the drain waits on it too)
     */
    TrafficMeters(MeterRegistry registry, Supplier<@Nullable TrafficServer> server, WorkInFlight work) {
        this.server = server;
        for (ExchangeEnding ending : ExchangeEnding.values()) {
            endings.put(ending, requests(registry, ending.name().toLowerCase(Locale.ROOT)));
        }
        for (OpenAiError error : OpenAiError.values()) {
            refusals.put(error, requests(registry, refusal(error)));
        }
        // An attempt whose failure its client never saw: the request was sent once more (retry-before-first-byte).
        sentAgain = requests(registry, "sent_again");
        heldForwarded = held(registry, "forwarded");
        heldRefused = held(registry, "refused");
        timeToFirstToken = Timer.builder(MeterNames.GATEWAY_TTFT)
                .description(
                        "From a client request's arrival to the first byte of its event stream passed to the client")
                .serviceLevelObjectives(TTFT_BUCKETS)
                .register(registry);
        Gauge.builder(MeterNames.GATEWAY_IN_FLIGHT, work, WorkInFlight::inFlight)
                .description("Requests forwarded to the engine whose answer has not reached its client whole yet")
                .register(registry);
        Gauge.builder(
                        MeterNames.GATEWAY_CONNECTIONS,
                        this,
                        meters -> meters.connections(TrafficServer::openConnections))
                .description("Client connections the traffic port holds open")
                .register(registry);
        FunctionCounter.builder(MeterNames.GATEWAY_STOP_CUT_REQUESTS, work, WorkInFlight::cutByStops)
                .description(
                        "Requests through the gateway cut by engine stops (crashes, replacements, drain deadlines)")
                .register(registry);
        FunctionCounter.builder(MeterNames.GATEWAY_STOP_CUT_TOKENS, work, WorkInFlight::tokensCutByStops)
                .description("Token-carrying events the requests cut by engine stops had passed to their clients")
                .register(registry);
        FunctionCounter.builder(
                        MeterNames.GATEWAY_CONNECTIONS_REFUSED,
                        this,
                        meters -> meters.connections(TrafficServer::refusedConnections))
                .description("Client connections closed at once at readygate.gateway.max-connections")
                .register(registry);
    }

    /**
     * The {@code outcome} of a request the gateway answered itself: the error's code without the {@code engine_} and
     * {@code request_} words, so that it reads apart from a forwarded request's ending.
     */
    static String refusal(OpenAiError error) {
        return switch (error) {
            case INVALID_REQUEST -> "invalid_request";
            case ROUTE_NOT_PROXIED -> "route_not_proxied";
            case REQUEST_TOO_LARGE -> "too_large";
            case ENGINE_SATURATED -> "saturated";
            case ENGINE_NOT_READY -> "not_ready";
            case ENGINE_DRAINING -> "draining";
            case ENGINE_UNREACHABLE -> "unreachable";
            case ENGINE_CONNECT_TIMEOUT -> "connect_timeout";
            case ENGINE_TIMEOUT -> "timeout";
        };
    }

    @Override
    public void refused(OpenAiError error) {
        refusals.get(error).increment();
    }

    @Override
    public void held(Duration waited, boolean forwarded) {
        (forwarded ? heldForwarded : heldRefused).record(waited);
    }

    @Override
    public void ended(ProxiedExchange exchange) {
        if (exchange.sentAgain()) {
            sentAgain.increment();
            return;
        }
        endings.get(exchange.ending()).increment();
        Duration firstByte = exchange.timeToFirstByte();
        Integer status = exchange.engineStatus();
        if (firstByte != null && exchange.streamed() && status != null && status >= 200 && status < 300) {
            timeToFirstToken.record(firstByte);
        }
    }

    private double connections(ToIntFunction<TrafficServer> count) {
        TrafficServer running = server.get();
        return running == null ? 0 : count.applyAsInt(running);
    }

    private static Counter requests(MeterRegistry registry, String outcome) {
        return Counter.builder(MeterNames.GATEWAY_REQUESTS)
                .description("Client requests on the traffic port by how they ended")
                .tag("outcome", outcome)
                .register(registry);
    }

    private static Timer held(MeterRegistry registry, String result) {
        return Timer.builder(MeterNames.GATEWAY_HELD)
                .description("Time client requests were held through a short start, by what followed")
                .tag("result", result)
                .serviceLevelObjectives(HELD_BUCKETS)
                .register(registry);
    }
}
