package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.server.ConnectionGuard;
import dev.readygate.server.HeavyEndpoint;
import dev.readygate.server.HeavyRequestLimit;
import dev.readygate.statedir.StateDir;
import dev.readygate.statedir.StateDirProblem;
import dev.readygate.statedir.Store;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.scheduler.Schedulers;

class SidecarMetricsTests {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void theServersAndTheStateDirectorysSeriesAreAllThereAtZero(@TempDir Path dir) {
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            new SidecarMetrics(
                    registry,
                    stateDir,
                    new ConnectionGuard(8, System::nanoTime, Clock.systemUTC()),
                    new HeavyRequestLimit(2, Schedulers.immediate()));

            assertThat(registry.get(MeterNames.SERVER_REJECTED).functionCounters())
                    .hasSize(HeavyEndpoint.values().length)
                    .allSatisfy(counter -> assertThat(counter.count()).isZero());
            for (HeavyEndpoint endpoint : HeavyEndpoint.values()) {
                assertThat(registry.get(MeterNames.SERVER_REJECTED)
                                .tag("endpoint", endpoint.value())
                                .functionCounter())
                        .isNotNull();
            }
            assertThat(registry.get(MeterNames.SERVER_CONNECTIONS).gauge().value())
                    .isZero();
            assertThat(registry.get(MeterNames.SERVER_EVICTIONS)
                            .functionCounter()
                            .count())
                    .isZero();
            int series = Store.values().length * StateDirProblem.values().length;
            assertThat(registry.get(MeterNames.STATE_DIR_DEGRADED).gauges())
                    .hasSize(series)
                    .allSatisfy(gauge -> assertThat(gauge.value()).isZero());
            assertThat(registry.get(MeterNames.STATE_DIR_WRITE_FAILURES).functionCounters())
                    .hasSize(series)
                    .allSatisfy(counter -> assertThat(counter.count()).isZero());
            assertThat(registry.get(MeterNames.STATE_DIR_DEGRADED)
                            .tag("store", Store.values()[0].value())
                            .tag("reason", StateDirProblem.values()[0].value())
                            .gauge())
                    .isNotNull();
        }
    }
}
