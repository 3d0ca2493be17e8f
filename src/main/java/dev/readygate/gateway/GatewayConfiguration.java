package dev.readygate.gateway;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.readiness.EngineStateMachine;
import io.netty.channel.ChannelOption;
import java.net.InetSocketAddress;
import java.util.List;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;

/**
 * Gateway mode's beans, only with {@code readygate.gateway.enabled=true}: without it nothing here exists and no port
 * opens. The traffic server listens on {@code server.address} (readygate's own listen address, all interfaces by
 * default) at {@code readygate.gateway.port}; every {@link ExchangeEnds} bean hears each exchange's end.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("readygate.gateway.enabled")
class GatewayConfiguration {

    @Bean
    TrafficResources trafficResources(ReadygateProperties properties) {
        return new TrafficResources(properties.gateway().maxConnections());
    }

    @Bean
    TrafficAdmission trafficAdmission(EngineStateMachine machine) {
        return new EngineStateAdmission(machine);
    }

    @Bean
    TrafficServer trafficServer(
            ReadygateProperties properties,
            TrafficResources resources,
            TrafficAdmission admission,
            List<ExchangeEnds> ends,
            @Qualifier("timerScheduler") Scheduler timer,
            Environment environment) {
        ReadygateProperties.Gateway gateway = properties.gateway();
        HttpClient client = HttpClient.create(resources.connections)
                .runOn(resources.loops)
                .option(
                        ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        Math.toIntExact(gateway.connectTimeout().toMillis()))
                .followRedirect(false)
                .compress(false);
        List<ExchangeEnds> listeners = List.copyOf(ends);
        GatewayProxy proxy = new GatewayProxy(
                properties.engine().requiredBaseUrl(),
                client,
                gateway.maxRequestSize().toBytes(),
                new StreamTimeouts(gateway.firstByteTimeout(), gateway.betweenEventsTimeout(), timer),
                admission,
                exchange -> listeners.forEach(listener -> listener.ended(exchange)),
                System::nanoTime);
        String host = environment.getProperty("server.address", "0.0.0.0");
        return new TrafficServer(
                new InetSocketAddress(host, gateway.port()), gateway.maxConnections(), resources.loops, proxy);
    }
}
