package dev.readygate.metrics;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.probe.MetricsEvidence;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * What readygate knows of the current engine start, as gauges read from {@link EngineFactsHolder}: its KV cache size
 * ({@link MeterNames#KV_CACHE_SIZE}) and what of its {@code /metrics} is lost ({@link MeterNames#EVIDENCE_LOST}).
 */
final class EngineFactsMeters {

    private EngineFactsMeters() {}

    static void bind(MeterRegistry registry, EngineFactsHolder facts) {
        Gauge.builder(
                        MeterNames.KV_CACHE_SIZE,
                        facts,
                        f -> kvCacheSizeTokens(f.current().lastSample()))
                .description("The engine's KV cache size in tokens")
                .register(registry);
        for (MetricsEvidence.Part part : MetricsEvidence.Part.values()) {
            Gauge.builder(
                            MeterNames.EVIDENCE_LOST,
                            facts,
                            f -> f.current().metricsEvidence().lost().containsKey(part) ? 1 : 0)
                    .description("Whether evidence restart or busy detection needs is lost from the engine's /metrics")
                    .tag("evidence", part.value())
                    .register(registry);
        }
    }

    /** The KV cache size a sample gives, NaN (no value) without a sample or without the size in it. */
    static double kvCacheSizeTokens(@Nullable EngineMetricsSample sample) {
        Long tokens = sample == null ? null : sample.kvCacheSizeTokens();
        return tokens == null ? Double.NaN : tokens;
    }
}
