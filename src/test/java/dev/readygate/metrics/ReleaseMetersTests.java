package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.restart.EngineArguments;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.RecoveryKind;
import dev.readygate.restart.RestartPath;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReleaseMetersTests {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final ReleaseMeters meters = new ReleaseMeters(registry, "1.2.3");

    @Test
    void theEngineAndItsReleaseAreUnknownUntilAStartIsRecorded() {
        assertThat(registry.get(MeterNames.ENGINE_INFO)
                        .tag("vllm_version", "unknown")
                        .tag("model", "unknown")
                        .tag("readygate_version", "1.2.3")
                        .gauge()
                        .value())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.ENGINE_RELEASE_INFO)
                        .tag("vllm_version", "unknown")
                        .tag("revision", "unknown")
                        .tag("config", EngineArguments.UNKNOWN_CONFIGURATION)
                        .gauge()
                        .value())
                .isEqualTo(1);
    }

    @Test
    void aRecordedStartReplacesTheSeriesWithItsRelease() {
        meters.onRestartRecorded(start("0.31.0", "Qwen/Qwen3-0.6B", "abc123", "cfg1"));

        assertThat(registry.get(MeterNames.ENGINE_INFO).gauges()).hasSize(1);
        assertThat(registry.get(MeterNames.ENGINE_INFO)
                        .tag("vllm_version", "0.31.0")
                        .tag("model", "Qwen/Qwen3-0.6B")
                        .tag("readygate_version", "1.2.3")
                        .gauge()
                        .value())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.ENGINE_RELEASE_INFO).gauges()).hasSize(1);
        assertThat(registry.get(MeterNames.ENGINE_RELEASE_INFO)
                        .tag("vllm_version", "0.31.0")
                        .tag("revision", "abc123")
                        .tag("config", "cfg1")
                        .gauge()
                        .value())
                .isEqualTo(1);
    }

    @Test
    void aStartThatDidNotSayItsVersionShowsItUnknown() {
        meters.onRestartRecorded(start(null, null, null, "cfg2"));

        assertThat(registry.get(MeterNames.ENGINE_INFO)
                        .tag("vllm_version", "unknown")
                        .tag("model", "unknown")
                        .gauges())
                .hasSize(1);
        assertThat(registry.get(MeterNames.ENGINE_RELEASE_INFO)
                        .tag("revision", "unknown")
                        .tag("config", "cfg2")
                        .gauges())
                .hasSize(1);
    }

    static RecordedStart start(String vllmVersion, String model, String revision, String config) {
        return new RecordedStart(
                false,
                RestartPath.COLD,
                Outcome.READY,
                RecoveryKind.UNKNOWN,
                List.of(),
                null,
                Map.of(),
                null,
                vllmVersion,
                model,
                revision,
                config,
                Map.of(),
                null);
    }
}
