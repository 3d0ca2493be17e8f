package dev.readygate.gateway;

import dev.readygate.config.ReadygateProperties;
import io.netty.channel.ChannelOption;
import java.net.InetSocketAddress;
import java.time.Clock;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;

/**
 * Gateway mode's switch, started and stopped with the application (the probe schedule's phase: last to start, first to
 * stop). With {@code readygate.gateway.enabled} it creates the gateway's event loops and engine connections
 * ({@link TrafficResources}), the proxy and the {@link TrafficServer}, and opens the traffic port; without it, it does
 * nothing at all: no port, no thread. A switch at run time rather than a bean condition, because the image runs
 * Spring's AOT-processed bean definitions, whose conditions were decided at build time with the default settings.
 */
public final class GatewayMode implements SmartLifecycle {

    private final ReadygateProperties.Gateway settings;
    private final java.net.URI engineBaseUrl;
    private final String host;
    private final TrafficAdmission admission;
    private final ExchangeEnds ends;
    private final Scheduler timer;
    private final Clock clock;
    private final TrafficEvents events;
    private @Nullable Running running;

    /** What runs while the traffic port is open; disposed together. */
    private record Running(TrafficResources resources, TrafficServer server) {}

    GatewayMode(
            ReadygateProperties properties,
            String host,
            TrafficAdmission admission,
            ExchangeEnds ends,
            Scheduler timer,
            Clock clock,
            TrafficEvents events) {
        this.settings = properties.gateway();
        this.engineBaseUrl = properties.engine().requiredBaseUrl();
        this.host = host;
        this.admission = admission;
        this.ends = ends;
        this.timer = timer;
        this.clock = clock;
        this.events = events;
    }

    @Override
    public synchronized void start() {
        if (!settings.enabled() || running != null) {
            return;
        }
        TrafficResources resources = new TrafficResources(settings.maxConnections());
        HttpClient client = HttpClient.create(resources.connections)
                .runOn(resources.loops)
                .option(
                        ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        Math.toIntExact(settings.connectTimeout().toMillis()))
                .followRedirect(false)
                .compress(false);
        GatewayProxy proxy = new GatewayProxy(
                engineBaseUrl,
                client,
                settings.maxRequestSize().toBytes(),
                new StreamTimeouts(settings.firstByteTimeout(), settings.betweenEventsTimeout(), timer),
                admission,
                ends,
                clock,
                events);
        TrafficServer server = new TrafficServer(
                new InetSocketAddress(host, settings.port()), settings.maxConnections(), resources.loops, proxy);
        try {
            server.start();
        } catch (RuntimeException e) {
            resources.dispose();
            throw e;
        }
        running = new Running(resources, server);
    }

    @Override
    public synchronized void stop() {
        Running open = running;
        running = null;
        if (open != null) {
            open.server().stop();
            open.resources().dispose();
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running != null;
    }

    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE;
    }

    /** The traffic server while the port is open; null when gateway mode is off or stopped. */
    public synchronized @Nullable TrafficServer server() {
        Running open = running;
        return open == null ? null : open.server();
    }
}
