package dev.readygate.server;

import dev.readygate.config.ReadygateProperties;
import java.time.Clock;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * Applies {@code readygate.server.*} to the Reactor Netty server: the idle timeout, and the {@link ConnectionGuard} at
 * the head of every connection's pipeline. Runs after Spring Boot's own customizer, so its idle timeout wins.
 */
@Configuration(proxyBeanMethods = false)
public class ServerConfiguration {

    @Bean
    ConnectionGuard connectionGuard(ReadygateProperties properties, Clock clock) {
        return new ConnectionGuard(properties.server().maxConnections(), System::nanoTime, clock);
    }

    @Bean
    WebServerFactoryCustomizer<NettyReactiveWebServerFactory> readygateServerCustomizer(
            ReadygateProperties properties, ConnectionGuard guard) {
        return new Customizer(properties.server(), guard);
    }

    /** An ordered customizer: last, after Spring Boot's. */
    private record Customizer(ReadygateProperties.Server server, ConnectionGuard guard)
            implements WebServerFactoryCustomizer<NettyReactiveWebServerFactory>, Ordered {

        @Override
        public void customize(NettyReactiveWebServerFactory factory) {
            factory.addServerCustomizers(http -> http.idleTimeout(server.idleTimeout())
                    .doOnChannelInit((observer, channel, remote) ->
                            channel.pipeline().addFirst("readygate.connection-guard", guard)));
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }
}
