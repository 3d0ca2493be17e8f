package dev.readygate.probe;

import dev.readygate.config.BackgroundLoop;
import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineDiscovery;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.RestartLoop;
import dev.readygate.readiness.StartLedger;
import dev.readygate.statedir.StateDir;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import java.time.Clock;
import java.time.Duration;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/** Wires the state machine, the heavy probes with their circuit breaker and rate limiter, and the probe schedule. */
@Configuration(proxyBeanMethods = false)
class ProbeConfiguration {

    /** The name of the circuit breaker and rate limiter that guard the heavy probes (and tag their metrics). */
    public static final String HEAVY_PROBES = "heavy-probes";

    @Bean
    EngineStateMachine engineStateMachine(
            ReadygateProperties properties, Clock clock, ApplicationEventPublisher publisher) {
        ReadygateProperties.Probe probe = properties.probe();
        ReadygateProperties.Restart restart = properties.restart();
        return new EngineStateMachine(
                new ReadinessRules(probe.successThreshold(), probe.failureThreshold()),
                new RestartLoop(restart.loopWindow(), restart.loopStarts(), restart.loopHold(), restart.loopHoldMax()),
                clock.instant(),
                publisher::publishEvent,
                publisher::publishEvent,
                EngineStateMachine.RANDOM_IDS);
    }

    /** What is known about each engine start: the state machine's, which opens and closes the sheets. */
    @Bean
    StartLedger startLedger(EngineStateMachine machine) {
        return machine.ledger();
    }

    @Bean
    EngineFactsHolder engineFacts(EngineStateMachine machine) {
        return new EngineFactsHolder(machine);
    }

    @Bean
    ProbeHistory probeHistory() {
        return new ProbeHistory();
    }

    @Bean
    Scheduler probeScheduler() {
        return Schedulers.newParallel("readygate-probe", 1, true);
    }

    @Bean
    CircuitBreakerRegistry circuitBreakerRegistry() {
        return CircuitBreakerRegistry.ofDefaults();
    }

    @Bean
    RateLimiterRegistry rateLimiterRegistry() {
        return RateLimiterRegistry.ofDefaults();
    }

    @Bean
    CircuitBreaker heavyProbeCircuitBreaker(
            ReadygateProperties properties, Clock clock, CircuitBreakerRegistry registry) {
        ReadygateProperties.Probe probe = properties.probe();
        return registry.circuitBreaker(HEAVY_PROBES, circuitBreakerConfig(probe, clock));
    }

    /**
     * Opens after {@code suspend-after-failures} consecutive failed verifications (an observation, not an error, is
     * the failure), stays open for {@code suspension}, then lets one verification through.
     */
    public static CircuitBreakerConfig circuitBreakerConfig(ReadygateProperties.Probe probe, Clock clock) {
        return CircuitBreakerConfig.custom()
                .slidingWindow(
                        probe.suspendAfterFailures(),
                        probe.suspendAfterFailures(),
                        CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .failureRateThreshold(100)
                .recordResult(result -> result instanceof Observation.VerificationFailed)
                // The rate limiter's refusal is no verification at all: neither a failure nor a success.
                .ignoreExceptions(RequestNotPermitted.class)
                .waitDurationInOpenState(probe.suspension())
                .permittedNumberOfCallsInHalfOpenState(1)
                .clock(clock)
                .build();
    }

    /** {@code max-tokens-per-minute} permits a minute; a probe that does not fit waits for the next minute. */
    public static RateLimiterConfig rateLimiterConfig(ReadygateProperties.Probe probe) {
        return RateLimiterConfig.custom()
                .limitForPeriod(probe.maxTokensPerMinute())
                .limitRefreshPeriod(Duration.ofMinutes(1))
                .timeoutDuration(Duration.ZERO)
                .build();
    }

    @Bean
    RateLimiter heavyProbeRateLimiter(ReadygateProperties properties, RateLimiterRegistry registry) {
        return registry.rateLimiter(HEAVY_PROBES, rateLimiterConfig(properties.probe()));
    }

    @Bean
    CanaryBaselineStore canaryBaselineStore(StateDir stateDir) {
        return new CanaryBaselineStore(stateDir, JsonMapper.builder().build());
    }

    @Bean
    ProbeSchedule probeSchedule(
            ReadygateProperties properties,
            EngineClient client,
            EngineStateMachine machine,
            EngineFactsHolder facts,
            ProbeHistory history,
            CircuitBreaker heavyProbeCircuitBreaker,
            RateLimiter heavyProbeRateLimiter,
            CanaryBaselineStore baselines,
            StartTrust startTrust,
            ManifestTrust manifestTrust,
            ApplicationEventPublisher publisher,
            Clock clock,
            @Qualifier("probeScheduler") Scheduler probeScheduler) {
        ReadygateProperties.Probe probe = properties.probe();
        RepresentativeProbe representative = representativeProbe(properties, client, facts, clock);
        CanaryProbe canary = canaryProbe(properties, client, facts, baselines, startTrust, manifestTrust, clock);
        Verifier verifier = new Verifier(
                representative,
                canary,
                heavyProbeCircuitBreaker,
                heavyProbeRateLimiter,
                history,
                publisher::publishEvent,
                clock,
                probe.heavyTimeout());
        LightChecks light = probe.generation().enabled()
                ? new LightChecks(
                        probe.generation(),
                        new GenerationCheck(
                                probe.generation(), client, facts, new SplittableRandom(), clock, probe.heavyTimeout()),
                        canary,
                        history,
                        publisher::publishEvent)
                : null;
        return new ProbeSchedule(
                probe, client, machine, verifier, light, facts, discovery(properties, client), clock, probeScheduler);
    }

    /** The representative probe as configured, or null when it is disabled (here and in {@code readygate check}). */
    static @Nullable RepresentativeProbe representativeProbe(
            ReadygateProperties properties, EngineClient client, EngineFactsHolder facts, Clock clock) {
        ReadygateProperties.Probe probe = properties.probe();
        return probe.representative().enabled()
                ? new RepresentativeProbe(
                        probe.representative(), client, facts, new SplittableRandom(), clock, probe.heavyTimeout())
                : null;
    }

    /** The canary as configured, or null when it is disabled (here and in {@code readygate check}). */
    static @Nullable CanaryProbe canaryProbe(
            ReadygateProperties properties,
            EngineClient client,
            EngineFactsHolder facts,
            CanaryBaselineStore baselines,
            StartTrust startTrust,
            ManifestTrust manifestTrust,
            Clock clock) {
        ReadygateProperties.Probe probe = properties.probe();
        return probe.canary().enabled()
                ? new CanaryProbe(
                        probe.canary(),
                        properties.node().gpuName(),
                        client,
                        facts,
                        new SnapshotOracle(
                                properties.evidence().snapshotDir(),
                                JsonMapper.builder().build(),
                                manifestTrust),
                        baselines,
                        startTrust,
                        clock,
                        Schedulers.boundedElastic())
                : null;
    }

    /** What finds out, once per engine start, what the engine offers. */
    static EngineDiscovery discovery(ReadygateProperties properties, EngineClient client) {
        ReadygateProperties.Engine engine = properties.engine();
        return new EngineDiscovery(client, EngineDialect.setting(engine.dialect()), engine.maxModelLen());
    }

    /** Probes run from the start of the application to its end (readiness drops first on shutdown). */
    @Bean
    BackgroundLoop probeLoop(ProbeSchedule schedule) {
        return new BackgroundLoop(
                "probe schedule",
                BackgroundLoop.PROBES,
                () -> schedule.observations().subscribe());
    }
}
