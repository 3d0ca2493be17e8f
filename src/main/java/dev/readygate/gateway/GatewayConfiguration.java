package dev.readygate.gateway;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.RestartTracker;
import dev.readygate.restart.StartStopped;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;
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

    /**
     * Forwarded while the engine serves and a stream is free; held for a stream, through a short start or to be sent
     * again; refused otherwise, with a Retry-After from the start's path and history.
     */
    @Bean
    RulesAdmission trafficAdmission(
            EngineStateMachine machine,
            RestartTracker tracker,
            RestartRecords records,
            ReadygateProperties properties,
            @Qualifier("timerScheduler") Scheduler timer,
            Clock clock,
            ObjectProvider<TrafficEvents> events) {
        ReadygateProperties.Gateway gateway = properties.gateway();
        return new RulesAdmission(
                machine,
                tracker::provisionalPath,
                records::history,
                new RulesAdmission.Limits(
                        gateway.maxInFlight(),
                        gateway.maxQueued(),
                        gateway.maxWait(),
                        gateway.hold(),
                        gateway.retryBeforeFirstByte()),
                timer,
                clock,
                events.getIfAvailable(() -> TrafficEvents.NONE));
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

    /** The exchanges in flight per start, and each stop's work lost (counted with gateway mode on only). */
    @Bean
    WorkInFlight workInFlight(ReadygateProperties properties) {
        return new WorkInFlight(properties.gateway().enabled());
    }

    /** A start stopped: the gateway's count of its requests in flight joins its record once they ended. */
    @Bean
    ApplicationListener<PayloadApplicationEvent<StartStopped>> workLostAtStops(
            WorkInFlight work, RestartRecords records) {
        // A class, not a lambda: the event type is read from its declaration.
        return new ApplicationListener<>() {
            @Override
            public void onApplicationEvent(PayloadApplicationEvent<StartStopped> event) {
                String startId = event.getPayload().startId();
                work.stopped(startId).subscribe(counted -> records.counted(startId, counted));
            }
        };
    }

    @Bean
    GatewayMode gatewayMode(
            ReadygateProperties properties,
            TrafficAdmission admission,
            List<ExchangeEnds> ends,
            WorkInFlight work,
            RestartTracker tracker,
            @Qualifier("timerScheduler") Scheduler timer,
            Environment environment,
            Clock clock,
            ObjectProvider<TrafficEvents> events) {
        List<ExchangeEnds> listeners = List.copyOf(ends);
        return new GatewayMode(
                properties,
                environment.getProperty("server.address", "0.0.0.0"),
                admission,
                new ExchangeEnds() {
                    @Override
                    public void began(@Nullable String startId) {
                        listeners.forEach(listener -> listener.began(startId));
                    }

                    @Override
                    public void ended(ProxiedExchange exchange) {
                        listeners.forEach(listener -> listener.ended(exchange));
                    }

                    @Override
                    public void released() {
                        listeners.forEach(ExchangeEnds::released);
                    }
                },
                work,
                tracker::podStopping,
                environment.getProperty(
                        "spring.lifecycle.timeout-per-shutdown-phase", Duration.class, Duration.ofSeconds(30)),
                timer,
                clock,
                events.getIfAvailable(() -> TrafficEvents.NONE));
    }
}
