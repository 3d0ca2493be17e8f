package dev.readygate.metrics;

import dev.readygate.server.ConnectionGuard;
import dev.readygate.server.HeavyEndpoint;
import dev.readygate.server.HeavyRequestLimit;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * readygate's own server: the heavy requests turned away ({@link MeterNames#SERVER_REJECTED}), the connections it holds
 * ({@link MeterNames#SERVER_CONNECTIONS}) and those closed to make room ({@link MeterNames#SERVER_EVICTIONS}).
 */
final class ServerMeters {

    private ServerMeters() {}

    static void bind(MeterRegistry registry, ConnectionGuard connections, HeavyRequestLimit heavy) {
        for (HeavyEndpoint endpoint : HeavyEndpoint.values()) {
            FunctionCounter.builder(MeterNames.SERVER_REJECTED, heavy, limit -> limit.rejected(endpoint))
                    .description("Requests answered 503 beyond readygate.server.max-heavy-requests, by endpoint")
                    .tag("endpoint", endpoint.value())
                    .register(registry);
        }
        Gauge.builder(MeterNames.SERVER_CONNECTIONS, connections, ConnectionGuard::open)
                .description("Connections readygate's server holds open")
                .register(registry);
        FunctionCounter.builder(MeterNames.SERVER_EVICTIONS, connections, ConnectionGuard::evicted)
                .description("Connections closed to serve a new one at readygate.server.max-connections")
                .register(registry);
    }
}
