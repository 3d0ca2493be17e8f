package dev.readygate.gateway;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.readiness.EngineStateMachine;
import java.util.List;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import reactor.core.scheduler.Scheduler;

/**
 * Gateway mode's two beans, inert unless {@code readygate.gateway.enabled}: {@link GatewayMode} opens the traffic port
 * on {@code server.address} (readygate's own listen address, all interfaces by default) at
 * {@code readygate.gateway.port}; every {@link ExchangeEnds} bean hears each forwarded exchange's end.
 */
@Configuration(proxyBeanMethods = false)
class GatewayConfiguration {

    @Bean
    TrafficAdmission trafficAdmission(EngineStateMachine machine) {
        return new EngineStateAdmission(machine);
    }

    @Bean
    GatewayMode gatewayMode(
            ReadygateProperties properties,
            TrafficAdmission admission,
            List<ExchangeEnds> ends,
            @Qualifier("timerScheduler") Scheduler timer,
            Environment environment) {
        List<ExchangeEnds> listeners = List.copyOf(ends);
        return new GatewayMode(
                properties,
                environment.getProperty("server.address", "0.0.0.0"),
                admission,
                exchange -> listeners.forEach(listener -> listener.ended(exchange)),
                timer);
    }
}
