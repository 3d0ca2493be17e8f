package dev.readygate.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HeavyEndpointTests {

    @ParameterizedTest
    @CsvSource(
            nullValues = "none",
            value = {
                "/status, STATUS",
                "/status/restarts.json, STATUS",
                "/status/restarts.csv, STATUS",
                "/status/comparison.csv, STATUS",
                "/actuator/prometheus, METRICS",
                "/readyz, none",
                "/livez, none",
                "/actuator/health, none",
                "/statusx, none",
                "/, none"
            })
    void pathsAndTheirBudget(String path, @Nullable HeavyEndpoint endpoint) {
        assertThat(HeavyEndpoint.of(path)).isEqualTo(endpoint);
    }
}
