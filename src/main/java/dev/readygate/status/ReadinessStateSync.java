package dev.readygate.status;

import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import java.time.Clock;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Keeps Spring Boot's {@link ReadinessState} in step with the engine: ACCEPTING_TRAFFIC only while the engine is
 * verified ready. Boot declares an application ready to accept traffic once it has started; for a sidecar that is
 * only true when its engine is, so that declaration is corrected at once. On shutdown, readiness drops before
 * anything else stops.
 */
@Component
public class ReadinessStateSync {

    private final EngineStateMachine machine;
    private final ApplicationEventPublisher publisher;
    private final Clock clock;

    public ReadinessStateSync(EngineStateMachine machine, ApplicationEventPublisher publisher, Clock clock) {
        this.machine = machine;
        this.publisher = publisher;
        this.clock = clock;
    }

    @EventListener
    public void onEngineStateChanged(EngineStateChanged change) {
        if (change.previous().acceptsTraffic() != change.current().acceptsTraffic()) {
            publish(change.current().acceptsTraffic());
        }
    }

    @EventListener
    public void onReadinessChanged(AvailabilityChangeEvent<ReadinessState> event) {
        if (event.getState() == ReadinessState.ACCEPTING_TRAFFIC
                && !machine.current().acceptsTraffic()) {
            publish(false);
        }
    }

    /** SIGTERM: readiness is the first thing to go, before the web server and the probes stop. */
    @EventListener
    @Order(Ordered.HIGHEST_PRECEDENCE)
    public void onShutdown(ContextClosedEvent event) {
        machine.apply(new Observation.ShutdownRequested(clock.instant()));
        publish(false);
    }

    private void publish(boolean accepting) {
        AvailabilityChangeEvent.publish(
                publisher, this, accepting ? ReadinessState.ACCEPTING_TRAFFIC : ReadinessState.REFUSING_TRAFFIC);
    }
}
