package dev.readygate.status;

import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import java.time.Clock;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Keeps Spring Boot's {@link ReadinessState} in step with the engine: ACCEPTING_TRAFFIC only while the engine accepts
 * traffic. Boot keeps the state ({@link ApplicationAvailability}) and refuses traffic itself as the context starts
 * closing; readygate declares the engine's changes, and corrects the one declaration of Boot's that is not true for a
 * sidecar: that the application accepts traffic once it has started.
 */
@Component
class ReadinessStateSync {

    private final EngineStateMachine machine;
    private final ApplicationAvailability availability;
    private final ApplicationEventPublisher publisher;
    private final Clock clock;

    public ReadinessStateSync(
            EngineStateMachine machine,
            ApplicationAvailability availability,
            ApplicationEventPublisher publisher,
            Clock clock) {
        this.machine = machine;
        this.availability = availability;
        this.publisher = publisher;
        this.clock = clock;
    }

    @EventListener
    public void onEngineStateChanged(EngineStateChanged change) {
        if (change.previous().acceptsTraffic() != change.current().acceptsTraffic()) {
            declare(change.current().acceptsTraffic());
        }
    }

    /** Boot declares the application ready once it has started: only true when the engine is. */
    @EventListener
    public void onReadinessChanged(AvailabilityChangeEvent<ReadinessState> event) {
        if (event.getSource() != this
                && event.getState() == ReadinessState.ACCEPTING_TRAFFIC
                && !machine.current().acceptsTraffic()) {
            declare(false);
        }
    }

    /**
     * SIGTERM: Boot refused traffic as the context started closing, before the web server and the probes stop; the
     * engine state follows, and stays shutting down.
     */
    @EventListener
    @Order(Ordered.HIGHEST_PRECEDENCE)
    public void onShutdown(ContextClosedEvent event) {
        machine.apply(new Observation.ShutdownRequested(clock.instant()));
    }

    private void declare(boolean accepting) {
        ReadinessState state = accepting ? ReadinessState.ACCEPTING_TRAFFIC : ReadinessState.REFUSING_TRAFFIC;
        if (availability.getReadinessState() != state) {
            AvailabilityChangeEvent.publish(publisher, this, state);
        }
    }
}
