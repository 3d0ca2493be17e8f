package dev.readygate.metrics;

import dev.readygate.statedir.StateDir;
import dev.readygate.statedir.StateDirProblem;
import dev.readygate.statedir.Store;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The state directory's meters, by store and reason: whether its writes fail now ({@link MeterNames#STATE_DIR_DEGRADED})
 * and how many failed ({@link MeterNames#STATE_DIR_WRITE_FAILURES}).
 */
final class StateDirMeters {

    private StateDirMeters() {}

    static void bind(MeterRegistry registry, StateDir stateDir) {
        for (Store store : Store.values()) {
            for (StateDirProblem problem : StateDirProblem.values()) {
                Gauge.builder(MeterNames.STATE_DIR_DEGRADED, stateDir, dir -> dir.failing(store, problem) ? 1 : 0)
                        .description("Whether writes to the state directory fail (1) or not (0), by store and reason")
                        .tag("store", store.value())
                        .tag("reason", problem.value())
                        .register(registry);
                FunctionCounter.builder(
                                MeterNames.STATE_DIR_WRITE_FAILURES, stateDir, dir -> dir.failures(store, problem))
                        .description("Writes to the state directory that failed, by store and reason")
                        .tag("store", store.value())
                        .tag("reason", problem.value())
                        .register(registry);
            }
        }
    }
}
