package dev.readygate.status;

import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * Boot's availability indicators ({@code livenessState} in {@code /livez}, {@code readinessState} in {@code /readyz})
 * as reactive ones that read the state where the probe is answered. Boot's own are blocking indicators, which WebFlux
 * runs on {@code boundedElastic}: each kubelet probe went to another thread and back to its event loop, where it
 * queued behind whatever the loop was doing (a flood of {@code /status} pollers). Same names, same mapping as Boot's
 * ({@code CORRECT} UP, {@code BROKEN} DOWN; {@code ACCEPTING_TRAFFIC} UP, {@code REFUSING_TRAFFIC} OUT_OF_SERVICE), so
 * Boot's own back off; each answer is one of two prebuilt values.
 */
@Configuration(proxyBeanMethods = false)
class AvailabilityIndicators {

    private static final Mono<Health> UP = Mono.just(Health.up().build());
    private static final Mono<Health> DOWN = Mono.just(Health.down().build());
    private static final Mono<Health> OUT_OF_SERVICE =
            Mono.just(Health.outOfService().build());

    /** Boot's mapping of its liveness state to a health status: {@code CORRECT} UP, {@code BROKEN} DOWN. */
    static Status liveness(LivenessState state) {
        return state == LivenessState.CORRECT ? Status.UP : Status.DOWN;
    }

    /** Boot's mapping of its readiness state: {@code ACCEPTING_TRAFFIC} UP, {@code REFUSING_TRAFFIC} OUT_OF_SERVICE. */
    static Status readiness(ReadinessState state) {
        return state == ReadinessState.ACCEPTING_TRAFFIC ? Status.UP : Status.OUT_OF_SERVICE;
    }

    @Bean
    ReactiveHealthIndicator livenessStateHealthIndicator(ApplicationAvailability availability) {
        return () -> liveness(availability.getLivenessState()) == Status.UP ? UP : DOWN;
    }

    @Bean
    ReactiveHealthIndicator readinessStateHealthIndicator(ApplicationAvailability availability) {
        return () -> readiness(availability.getReadinessState()) == Status.UP ? UP : OUT_OF_SERVICE;
    }
}
