package dev.readygate.metrics;

import dev.readygate.probe.ProbeListener;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedRateLimiterMetrics;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * readygate's meters. Names are dotted ({@code readygate.engine.ready}); Prometheus shows them as
 * {@code readygate_engine_ready}. Tags are closed sets (states, probe kinds, outcomes, reasons), never URLs, models
 * or messages.
 */
@Component
public class ReadygateMetrics implements ProbeListener {

    /** 1 while the engine is verified ready (the kubelet sends traffic), else 0. */
    public static final String ENGINE_READY = "readygate.engine.ready";

    /** 1 for the current state, 0 for the others, tag {@code state}. */
    public static final String ENGINE_STATE = "readygate.engine.state";

    /** Engine state changes, tags {@code from} and {@code to}. */
    public static final String ENGINE_TRANSITIONS = "readygate.engine.transitions";

    /** Heavy probe durations, tags {@code kind} and {@code outcome}. */
    public static final String PROBE_DURATION = "readygate.probe.duration";

    /** Heavy probe failures, tags {@code kind} and {@code reason}. */
    public static final String PROBE_FAILURES = "readygate.probe.failures";

    /** Heavy probes' time to first token, tag {@code kind}. */
    public static final String PROBE_TTFT = "readygate.probe.ttft";

    /** Heavy probes' largest gap between two tokens, tag {@code kind}. */
    public static final String PROBE_ITL = "readygate.probe.inter.token.latency";

    /** Tokens the heavy probes made the engine process (prompt plus output), tag {@code kind}. */
    public static final String PROBE_TOKENS = "readygate.probe.tokens";

    private final MeterRegistry registry;

    public ReadygateMetrics(
            MeterRegistry registry,
            EngineStateMachine machine,
            CircuitBreakerRegistry circuitBreakers,
            RateLimiterRegistry rateLimiters) {
        this.registry = registry;
        Gauge.builder(ENGINE_READY, machine, m -> m.current().acceptsTraffic() ? 1 : 0)
                .description("Whether the engine is verified ready to serve (1) or not (0)")
                .register(registry);
        for (EngineState.Kind kind : EngineState.Kind.values()) {
            Gauge.builder(ENGINE_STATE, machine, m -> m.current().kind() == kind ? 1 : 0)
                    .description("The engine's readiness state: 1 for the current one")
                    .tag("state", kind.value())
                    .register(registry);
        }
        TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(circuitBreakers).bindTo(registry);
        TaggedRateLimiterMetrics.ofRateLimiterRegistry(rateLimiters).bindTo(registry);
    }

    @EventListener
    public void onEngineStateChanged(EngineStateChanged change) {
        if (change.previous().kind() != change.current().kind()) {
            Counter.builder(ENGINE_TRANSITIONS)
                    .description("Engine readiness state changes")
                    .tag("from", change.previous().kind().value())
                    .tag("to", change.current().kind().value())
                    .register(registry)
                    .increment();
        }
    }

    @Override
    public void probed(ProbeReport report) {
        String kind = report.kind().value();
        ProbeReport.Measurement measurement = report.measurement();
        Timer.builder(PROBE_DURATION)
                .description("Heavy probe duration, request to verdict")
                .tag("kind", kind)
                .tag("outcome", report.outcome().name().toLowerCase(java.util.Locale.ROOT))
                .register(registry)
                .record(measurement == null ? java.time.Duration.ZERO : measurement.total());
        if (report.reason() != null) {
            Counter.builder(PROBE_FAILURES)
                    .description("Heavy probe failures by reason")
                    .tag("kind", kind)
                    .tag("reason", report.reason().value())
                    .register(registry)
                    .increment();
        }
        if (measurement != null) {
            Timer.builder(PROBE_TTFT)
                    .description("Heavy probe time to first token")
                    .tag("kind", kind)
                    .register(registry)
                    .record(measurement.timeToFirstToken());
            Timer.builder(PROBE_ITL)
                    .description("Heavy probe largest inter-token latency")
                    .tag("kind", kind)
                    .register(registry)
                    .record(measurement.maxInterTokenLatency());
            int tokens = (measurement.promptTokens() == null ? 0 : measurement.promptTokens())
                    + (measurement.completionTokens() == null ? 0 : measurement.completionTokens());
            Counter.builder(PROBE_TOKENS)
                    .description("Tokens the heavy probes made the engine process")
                    .tag("kind", kind)
                    .register(registry)
                    .increment(tokens);
        }
    }
}
