package dev.readygate.server;

import dev.readygate.config.ReadygateProperties;
import io.netty.channel.ChannelPipeline;
import java.time.Clock;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import reactor.netty.NettyPipeline;

/**
 * Applies {@code readygate.server.*} to the Reactor Netty server: the idle timeout, the {@link ConnectionGuard} at the
 * head of every connection's pipeline (and its request counter after the HTTP codec), and the budget of heavy
 * requests ({@link HeavyRequestLimit}). Runs after Spring Boot's own customizer, so its idle timeout wins.
 */
@Configuration(proxyBeanMethods = false)
public class ServerConfiguration {

    @Bean
    ConnectionGuard connectionGuard(ReadygateProperties properties, Clock clock) {
        return new ConnectionGuard(properties.server().maxConnections(), System::nanoTime, clock);
    }

    @Bean
    HeavyRequestLimit heavyRequestLimit(ReadygateProperties properties) {
        return new HeavyRequestLimit(properties.server().maxHeavyRequests());
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
                    .doOnChannelInit((observer, channel, remote) -> install(channel.pipeline(), guard)));
        }

        /**
         * The guard first, to see every connection; its request counter after Reactor Netty's HTTP/1.1 traffic
         * handler, so that it sees each request as the application does and an answer before that handler decides
         * whether the connection stays open.
         */
        static void install(ChannelPipeline pipeline, ConnectionGuard guard) {
            pipeline.addFirst("readygate.connection-guard", guard);
            String after = pipeline.get(NettyPipeline.HttpTrafficHandler) != null
                    ? NettyPipeline.HttpTrafficHandler
                    : NettyPipeline.HttpCodec;
            pipeline.addAfter(after, "readygate.requests", guard.requests());
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }
}
