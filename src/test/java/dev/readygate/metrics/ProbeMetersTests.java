package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.Reason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProbeMetersTests {

    final Instant t0 = Instant.parse("2026-12-03T10:00:00Z");
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final ProbeMeters meters = new ProbeMeters(registry);

    @Test
    void everyKindOutcomeAndFailureReasonIsASeriesAtZeroFromTheStart() {
        int kinds = ProbeKind.values().length;
        assertThat(registry.get(MeterNames.PROBE_DURATION).timers())
                .hasSize(kinds * ProbeReport.Outcome.values().length)
                .allSatisfy(timer -> assertThat(timer.count()).isZero());
        assertThat(registry.get(MeterNames.PROBE_FAILURES).counters())
                .hasSize(kinds * ProbeReport.FAILURE_REASONS.size())
                .allSatisfy(counter -> assertThat(counter.count()).isZero());
        assertThat(registry.get(MeterNames.PROBE_TTFT).timers()).hasSize(kinds);
        assertThat(registry.get(MeterNames.PROBE_ITL).timers()).hasSize(kinds);
        assertThat(registry.get(MeterNames.PROBE_TOKENS).counters()).hasSize(kinds);
    }

    @Test
    void aPassedProbeRecordsItsDurationLatenciesAndTokens() {
        ProbeReport.Measurement measured = new ProbeReport.Measurement(
                100, 100, 4, Duration.ofMillis(7), Duration.ofMillis(2), Duration.ofMillis(1), Duration.ofMillis(12));
        meters.onProbeReport(ProbeReport.passed(ProbeKind.REPRESENTATIVE, t0, "ok", measured, null));

        assertThat(registry.get(MeterNames.PROBE_DURATION)
                        .tag("kind", "representative")
                        .tag("outcome", "passed")
                        .timer()
                        .totalTime(TimeUnit.MILLISECONDS))
                .isEqualTo(12);
        assertThat(registry.get(MeterNames.PROBE_TTFT)
                        .tag("kind", "representative")
                        .timer()
                        .totalTime(TimeUnit.MILLISECONDS))
                .isEqualTo(7);
        assertThat(registry.get(MeterNames.PROBE_ITL)
                        .tag("kind", "representative")
                        .timer()
                        .totalTime(TimeUnit.MILLISECONDS))
                .isEqualTo(2);
        assertThat(registry.get(MeterNames.PROBE_TOKENS)
                        .tag("kind", "representative")
                        .counter()
                        .count())
                .isEqualTo(104);
        assertThat(registry.get(MeterNames.PROBE_FAILURES).counters())
                .allSatisfy(counter -> assertThat(counter.count()).isZero());
    }

    @Test
    void aFailedProbeCountsItsReasonAndAZeroDuration() {
        meters.onProbeReport(ProbeReport.failed(ProbeKind.CANARY, t0, Reason.ENGINE_DOWN, "refused"));

        assertThat(registry.get(MeterNames.PROBE_FAILURES)
                        .tag("kind", "canary")
                        .tag("reason", Reason.ENGINE_DOWN.value())
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.PROBE_DURATION)
                        .tag("kind", "canary")
                        .tag("outcome", "failed")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.PROBE_TTFT)
                        .tag("kind", "canary")
                        .timer()
                        .count())
                .isZero();
    }

    @ParameterizedTest
    @CsvSource(
            nullValues = "null",
            value = {"100, 4, 104", "null, 4, 4", "100, null, 100", "null, null, 0"})
    void theTokensAProbeMadeTheEngineProcessCountAnUnknownCountAsZero(Integer prompt, Integer completion, int tokens) {
        ProbeReport.Measurement measured = new ProbeReport.Measurement(
                100, prompt, completion, Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ZERO);
        assertThat(ProbeMeters.tokens(measured)).isEqualTo(tokens);
    }
}
