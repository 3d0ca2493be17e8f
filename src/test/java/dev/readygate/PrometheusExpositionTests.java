package dev.readygate;

import static dev.readygate.ReadygateClients.awaitReady;
import static dev.readygate.ReadygateClients.client;
import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.chart.Promtool;
import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * readygate's real Prometheus exposition, from a readygate gating the simulator: {@code promtool check metrics} finds
 * nothing to say about it, and the series the alerts need are there from the start.
 */
@Tag("promtool")
class PrometheusExpositionTests {

    @TempDir
    Path workDir;

    @Test
    void promtoolCheckMetricsReportsNothingAndTheAlertsSeriesExistBeforeTheirFirstEvent() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
                ConfigurableApplicationContext readygate = ReadinessVariantsTests.readygate(
                        engine,
                        workDir.resolve("state"),
                        "--readygate.restart.readiness-objectives.cold=15m",
                        "--readygate.restart.readiness-objectives.preload-hit=90s")) {
            WebTestClient client = client(readygate);
            awaitReady(client);
            String exposition = ReadygateClients.prometheus(client);

            Promtool.Result check = Promtool.run(exposition, "check", "metrics");
            assertThat(check.output()).isEmpty();
            assertThat(check.exitCode()).isZero();

            // increase() cannot see a series' first value: each path and reason is there at 0 before its first event.
            assertThat(exposition)
                    .contains("readygate_canary_mismatches_total{path=\"preload_hit\"} 0.0")
                    .contains("readygate_preload_fallbacks_total{reason=\"fingerprint_mismatch\"} 0.0")
                    .contains("readygate_engine_starts_total{path=\"snapshot_restore\"} 0.0")
                    .contains("readygate_engine_start_failures_total{path=\"cold\"} 0.0")
                    .contains("readygate_engine_start_failures_total{path=\"unknown\"} 0.0")
                    .contains("readygate_readiness_latency_seconds_bucket{path=\"preload_fallback\",le=\"+Inf\"} 0")
                    .contains("readygate_readiness_objective_seconds{path=\"cold\"} 900.0")
                    .contains("readygate_readiness_objective_seconds{path=\"preload_hit\"} 90.0")
                    .doesNotContain("readygate_readiness_objective_seconds{path=\"unknown\"}")
                    // Gateway mode off: none of the traffic path's meters.
                    .doesNotContain("readygate_gateway_");
        }
    }
}
