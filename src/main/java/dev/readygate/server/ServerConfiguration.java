package dev.readygate.server;

import dev.readygate.config.ReadygateProperties;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import java.time.Clock;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.core.scheduler.Scheduler;
import reactor.netty.NettyPipeline;
import reactor.netty.resources.LoopResources;

/**
 * Applies {@code readygate.server.*} to the Reactor Netty server: the idle timeout, the {@link ConnectionGuard} at the
 * head of every connection's pipeline (and its request counter after the HTTP codec), and the budget of heavy
 * requests ({@link HeavyRequestLimit}); each loop that carries a connection asks for the short scheduler slice
 * ({@link SchedulerSlice}). Runs after Spring Boot's own customizer, so its idle timeout wins.
 */
@Configuration(proxyBeanMethods = false)
public class ServerConfiguration {

    @Bean
    ConnectionGuard connectionGuard(ReadygateProperties properties, Clock clock) {
        return new ConnectionGuard(properties.server().maxConnections(), System::nanoTime, clock);
    }

    @Bean
    HeavyRequestLimit heavyRequestLimit(ReadygateProperties properties, @Qualifier("timerScheduler") Scheduler timer) {
        return new HeavyRequestLimit(properties.server().maxHeavyRequests(), timer);
    }

    /**
     * The server's event loops, readygate's own, with a thread of its own that accepts connections: a new connection,
     * the kubelet's probe among them, is taken at once even while the loops that read and answer requests are busy (a
     * flood of clients reconnecting would otherwise queue it behind them). As many of those as Reactor Netty's default.
     * Given through the resource factory, not a server customizer: Spring Boot's web server runs on its resource
     * factory's loops whatever a customizer chose, and Boot's own factory's are Reactor Netty's global loops, shared with
     * anything else in the JVM and disposed when any context that uses them closes.
     */
    @Bean
    ReactorResourceFactory reactorResourceFactory() {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        factory.setLoopResourcesSupplier(
                () -> LoopResources.create(LOOPS, 1, LoopResources.DEFAULT_IO_WORKER_COUNT, true));
        return factory;
    }

    /** The server's event loops' thread name prefix. */
    static final String LOOPS = "readygate-http";

    @Bean
    WebServerFactoryCustomizer<NettyReactiveWebServerFactory> readygateServerCustomizer(
            ReadygateProperties properties, ConnectionGuard guard) {
        return new Customizer(
                properties.server(),
                guard,
                new SchedulerSlice(properties.server().schedulerSlice(), "readygate's server"));
    }

    /** An ordered customizer: last, after Spring Boot's. */
    private record Customizer(ReadygateProperties.Server server, ConnectionGuard guard, SchedulerSlice slice)
            implements WebServerFactoryCustomizer<NettyReactiveWebServerFactory>, Ordered {

        @Override
        public void customize(NettyReactiveWebServerFactory factory) {
            factory.addServerCustomizers(http -> http.idleTimeout(server.idleTimeout())
                    // Unpooled buffers: a pool's arenas and caches cost memory a sidecar's few answers never repay.
                    .childOption(ChannelOption.ALLOCATOR, UnpooledByteBufAllocator.DEFAULT)
                    .doOnChannelInit((observer, channel, remote) -> {
                        // On the connection's own loop: it asks the kernel for a short slice the first time
                        // (SchedulerSlice), so that a probe that arrives while another thread has the core is taken
                        // up at once.
                        slice.askOnThisThread();
                        install(channel.pipeline(), guard);
                    }));
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
