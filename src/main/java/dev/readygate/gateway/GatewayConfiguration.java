package dev.readygate.gateway;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.RestartTracker;
import java.time.Clock;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import reactor.core.scheduler.Scheduler;

/**
 * Gateway mode's beans, inert unless {@code readygate.gateway.enabled}: {@link GatewayMode} opens the traffic port
 * on {@code server.address} (readygate's own listen address, all interfaces by default) at
 * {@code readygate.gateway.port}; every {@link ExchangeEnds} bean hears each forwarded exchange's end, among them the
 * judge of real traffic, which tells readiness through {@link TrafficReadiness}, and the traffic meters, which also hear
 * what the proxy refused or forwarded ({@link TrafficEvents}).
 */
@Configuration(proxyBeanMethods = false)
class GatewayConfiguration {

    /** Forwarded while the engine serves; refused otherwise, with a Retry-After from the start's path and history. */
    @Bean
    TrafficAdmission trafficAdmission(
            EngineStateMachine machine, RestartTracker tracker, RestartRecords records, Clock clock) {
        return new RulesAdmission(machine, tracker::provisionalPath, records::history, clock);
    }

    /** Passive health: every forwarded exchange of a start, judged, folded and told to readiness. */
    @Bean
    TrafficReadiness trafficReadiness(EngineStateMachine machine, EngineFactsHolder facts) {
        return new TrafficReadiness(machine, facts);
    }

    /** Each forwarded exchange's end, judged as readygate judges its own probes, for the start it was admitted to. */
    @Bean
    ExchangeEnds trafficVerdicts(TrafficReadiness readiness) {
        return exchange -> {
            String startId = exchange.startId();
            if (startId != null) {
                readiness.judged(startId, TrafficJudge.judge(exchange.judged()));
            }
        };
    }

    @Bean
    GatewayMode gatewayMode(
            ReadygateProperties properties,
            TrafficAdmission admission,
            List<ExchangeEnds> ends,
            @Qualifier("timerScheduler") Scheduler timer,
            Environment environment,
            Clock clock,
            ObjectProvider<TrafficEvents> events) {
        List<ExchangeEnds> listeners = List.copyOf(ends);
        return new GatewayMode(
                properties,
                environment.getProperty("server.address", "0.0.0.0"),
                admission,
                exchange -> listeners.forEach(listener -> listener.ended(exchange)),
                timer,
                clock,
                events.getIfAvailable(() -> TrafficEvents.NONE));
    }
}
