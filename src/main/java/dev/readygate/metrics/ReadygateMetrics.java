package dev.readygate.metrics;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.memory.MemoryAssessed;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.ObservationIgnored;
import dev.readygate.restart.CanaryMismatched;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartTracker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedRateLimiterMetrics;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * readygate's meters of the engine, registered once, at start, by one binder per domain (readiness, engine facts,
 * probes, restarts, release, GPU, memory; the heavy probes' circuit breaker and rate limiter through Resilience4j),
 * under the names of {@link MeterNames}: every series of a closed set (states, transitions, probe kinds and outcomes,
 * reasons, paths, phases, signals) exists from the start, at 0, and the events this class receives only move them.
 */
@Component
class ReadygateMetrics {

    private final ReadinessMeters readiness;
    private final ProbeMeters probes;
    private final RestartMeters restarts;
    private final ReleaseMeters release;
    private final GpuMeters gpu;
    private final MemoryMeters memory;

    public ReadygateMetrics(
            MeterRegistry registry,
            EngineStateMachine machine,
            EngineFactsHolder facts,
            RestartTracker tracker,
            CircuitBreakerRegistry circuitBreakers,
            RateLimiterRegistry rateLimiters,
            ObjectProvider<BuildProperties> build,
            ReadygateProperties properties) {
        BuildProperties buildProperties = build.getIfAvailable();
        String readygateVersion = buildProperties == null ? "dev" : buildProperties.getVersion();
        // Every series of a closed set from the start, at 0: Prometheus's increase() cannot see a series' first value,
        // so a counter born at 1 would hide the first fallback, mismatch, failure or slow start from the alerts.
        this.readiness = new ReadinessMeters(registry, machine);
        EngineFactsMeters.bind(registry, facts);
        this.probes = new ProbeMeters(registry);
        this.restarts = new RestartMeters(
                registry, tracker::restartLoop, properties.restart().readinessObjectives());
        this.gpu = new GpuMeters(registry);
        this.memory = new MemoryMeters(registry);
        this.release = new ReleaseMeters(registry, readygateVersion);
        TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(circuitBreakers).bindTo(registry);
        TaggedRateLimiterMetrics.ofRateLimiterRegistry(rateLimiters).bindTo(registry);
    }

    @EventListener
    public void onEngineStateChanged(EngineStateChanged change) {
        readiness.onEngineStateChanged(change);
    }

    @EventListener
    public void onObservationIgnored(ObservationIgnored event) {
        readiness.onObservationIgnored(event);
    }

    @EventListener
    public void onProbeReport(ProbeReport report) {
        probes.onProbeReport(report);
    }

    @EventListener
    public void onRestartRecorded(RestartRecorded recorded) {
        RecordedStart start = RecordedStart.of(recorded);
        release.onRestartRecorded(start);
        restarts.onRestartRecorded(start);
    }

    @EventListener
    public void onCanaryMismatched(CanaryMismatched mismatch) {
        restarts.onCanaryMismatched(mismatch.path());
    }

    @EventListener
    public void onGpuReading(GpuMemoryView view) {
        gpu.onGpuReading(view);
    }

    @EventListener
    public void onMemoryAssessed(MemoryAssessed assessed) {
        memory.onMemoryAssessed(assessed);
    }
}
