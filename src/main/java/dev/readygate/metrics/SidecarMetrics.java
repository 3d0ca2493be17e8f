package dev.readygate.metrics;

import dev.readygate.server.ConnectionGuard;
import dev.readygate.server.HeavyEndpoint;
import dev.readygate.server.HeavyRequestLimit;
import dev.readygate.statedir.StateDir;
import dev.readygate.statedir.StateDirProblem;
import dev.readygate.statedir.Store;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

/**
 * Meters of readygate's own health, apart from the engine's ({@link ReadygateMetrics}): its state directory and its
 * server's connections. Every
 * series is registered once, at start, at 0; they read their values from the component that owns them.
 */
@Component
public class SidecarMetrics {

    /** 1 while writes to a store fail with a reason, tags {@code store} and {@code reason}; 0 otherwise. */
    public static final String STATE_DIR_DEGRADED = "readygate.state.dir.degraded";

    /** Writes to the state directory that failed, tags {@code store} and {@code reason}. */
    public static final String STATE_DIR_WRITE_FAILURES = "readygate.state.dir.write.failures";

    /** Connections readygate's own server holds open. */
    public static final String SERVER_CONNECTIONS = "readygate.server.connections";

    /** Connections closed to make room for a new one at the cap ({@code readygate.server.max-connections}). */
    public static final String SERVER_EVICTIONS = "readygate.server.connections.evicted";

    /**
     * Requests to a heavy endpoint answered 503 for being beyond its budget ({@code readygate.server.max-heavy-requests}),
     * tag {@code endpoint} ({@code status}, {@code metrics}).
     */
    public static final String SERVER_REJECTED = "readygate.server.requests.rejected";

    public SidecarMetrics(
            MeterRegistry registry, StateDir stateDir, ConnectionGuard connections, HeavyRequestLimit heavy) {
        for (HeavyEndpoint endpoint : HeavyEndpoint.values()) {
            FunctionCounter.builder(SERVER_REJECTED, heavy, limit -> limit.rejected(endpoint))
                    .description("Requests answered 503 beyond readygate.server.max-heavy-requests, by endpoint")
                    .tag("endpoint", endpoint.value())
                    .register(registry);
        }
        Gauge.builder(SERVER_CONNECTIONS, connections, ConnectionGuard::open)
                .description("Connections readygate's server holds open")
                .register(registry);
        FunctionCounter.builder(SERVER_EVICTIONS, connections, ConnectionGuard::evicted)
                .description("Connections closed to serve a new one at readygate.server.max-connections")
                .register(registry);
        for (Store store : Store.values()) {
            for (StateDirProblem problem : StateDirProblem.values()) {
                Gauge.builder(STATE_DIR_DEGRADED, stateDir, dir -> dir.failing(store, problem) ? 1 : 0)
                        .description("Whether writes to the state directory fail (1) or not (0), by store and reason")
                        .tag("store", store.value())
                        .tag("reason", problem.value())
                        .register(registry);
                FunctionCounter.builder(STATE_DIR_WRITE_FAILURES, stateDir, dir -> dir.failures(store, problem))
                        .description("Writes to the state directory that failed, by store and reason")
                        .tag("store", store.value())
                        .tag("reason", problem.value())
                        .register(registry);
            }
        }
    }
}
