package dev.readygate.metrics;

import dev.readygate.server.ConnectionGuard;
import dev.readygate.server.HeavyRequestLimit;
import dev.readygate.statedir.StateDir;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

/**
 * Meters of readygate's own health, apart from the engine's ({@link ReadygateMetrics}): its server's connections and
 * requests ({@link ServerMeters}) and its state directory ({@link StateDirMeters}). Every series is registered once, at
 * start, at 0; they read their values from the component that owns them.
 */
@Component
public class SidecarMetrics {

    public SidecarMetrics(
            MeterRegistry registry, StateDir stateDir, ConnectionGuard connections, HeavyRequestLimit heavy) {
        ServerMeters.bind(registry, connections, heavy);
        StateDirMeters.bind(registry, stateDir);
    }
}
