package dev.readygate.metrics;

import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.Reason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * The heavy probes' meters, per probe kind: duration by outcome ({@link MeterNames#PROBE_DURATION}), failures by
 * reason ({@link MeterNames#PROBE_FAILURES}), time to first token, largest inter-token latency and the tokens they
 * made the engine process.
 */
final class ProbeMeters {

    /** A heavy probe kind's meters. */
    private record OfKind(
            Map<ProbeReport.Outcome, Timer> duration,
            Map<Reason, Counter> failures,
            Timer timeToFirstToken,
            Timer interTokenLatency,
            Counter tokens) {}

    private final MeterRegistry registry;
    private final Map<ProbeKind, OfKind> probes = new EnumMap<>(ProbeKind.class);

    ProbeMeters(MeterRegistry registry) {
        this.registry = registry;
        for (ProbeKind kind : ProbeKind.values()) {
            Map<ProbeReport.Outcome, Timer> duration = new EnumMap<>(ProbeReport.Outcome.class);
            for (ProbeReport.Outcome outcome : ProbeReport.Outcome.values()) {
                duration.put(
                        outcome,
                        Timer.builder(MeterNames.PROBE_DURATION)
                                .description("Heavy probe duration, request to verdict")
                                .tag("kind", kind.value())
                                .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                                .register(registry));
            }
            Map<Reason, Counter> failures = new EnumMap<>(Reason.class);
            ProbeReport.FAILURE_REASONS.forEach(reason -> failures.put(reason, failures(kind, reason)));
            probes.put(
                    kind,
                    new OfKind(
                            duration,
                            failures,
                            Timer.builder(MeterNames.PROBE_TTFT)
                                    .description("Heavy probe time to first token")
                                    .tag("kind", kind.value())
                                    .register(registry),
                            Timer.builder(MeterNames.PROBE_ITL)
                                    .description("Heavy probe largest inter-token latency")
                                    .tag("kind", kind.value())
                                    .register(registry),
                            Counter.builder(MeterNames.PROBE_TOKENS)
                                    .description("Tokens the heavy probes made the engine process")
                                    .tag("kind", kind.value())
                                    .register(registry)));
        }
    }

    private Counter failures(ProbeKind kind, Reason reason) {
        return Counter.builder(MeterNames.PROBE_FAILURES)
                .description("Heavy probe failures by reason")
                .tag("kind", kind.value())
                .tag("reason", reason.value())
                .register(registry);
    }

    void onProbeReport(ProbeReport report) {
        OfKind meters = probes.get(report.kind());
        ProbeReport.Measurement measurement = report.measurement();
        meters.duration().get(report.outcome()).record(measurement == null ? Duration.ZERO : measurement.total());
        Reason reason = report.reason();
        if (reason != null) {
            meters.failures()
                    .computeIfAbsent(reason, unlisted -> failures(report.kind(), unlisted))
                    .increment();
        }
        if (measurement != null) {
            meters.timeToFirstToken().record(measurement.timeToFirstToken());
            meters.interTokenLatency().record(measurement.maxInterTokenLatency());
            meters.tokens().increment(tokens(measurement));
        }
    }

    /** The tokens a probe made the engine process: prompt plus output, a count the engine did not give as 0. */
    static int tokens(ProbeReport.Measurement measurement) {
        return (measurement.promptTokens() == null ? 0 : measurement.promptTokens())
                + (measurement.completionTokens() == null ? 0 : measurement.completionTokens());
    }
}
