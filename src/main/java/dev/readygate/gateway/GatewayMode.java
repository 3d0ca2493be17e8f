package dev.readygate.gateway;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineConnections;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.server.SchedulerSlice;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.EventListener;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Gateway mode's switch, started and stopped with the application (the probe schedule's phase: last to start, first to
 * stop). With {@code readygate.gateway.enabled} it creates the gateway's event loops and engine connections
 * ({@link TrafficResources}), the proxy and the {@link TrafficServer}, and opens the traffic port; without it, it does
 * nothing at all: no port, no thread. A switch at run time rather than a bean condition, because the image runs
 * Spring's AOT-processed bean definitions, whose conditions were decided at build time with the default settings.
 *
 * <p>Stopped, it drains ({@link #stop(Runnable)}): its phase stops before readygate's web server, which keeps answering
 * {@code /readyz} 503 meanwhile (readiness refused traffic as the context began closing, and the admission refuses new
 * requests with {@code Connection: close} while readygate shuts down). The traffic port keeps answering; the exchanges
 * in flight run to completion for at most {@code readygate.gateway.drain-timeout}; then what remains is cut and counted
 * ({@link WorkInFlight}), and the port closed.
 */
public final class GatewayMode implements SmartLifecycle {

    private static final Logger logger = LoggerFactory.getLogger(GatewayMode.class);

    /**
     * How long a connection to the engine is kept unused: below the engines' own keep-alive (5 s in vLLM's and SGLang's
     * uvicorn and in llama-server), so the gateway closes it before the engine does, rather than sending a request on
     * a connection the engine closes at that moment.
     */
    static final Duration ENGINE_IDLE = Duration.ofSeconds(4);

    /** After the drain's deadline cut the connections, how long their exchanges may take to report their ends. */
    static final Duration CUT_GRACE = Duration.ofSeconds(1);

    private final ReadygateProperties.Gateway settings;
    private final java.net.URI engineBaseUrl;
    private final String host;
    private final TrafficAdmission admission;
    private final ExchangeEnds ends;
    private final WorkInFlight work;
    private final Consumer<Instant> podStopping;
    private final Scheduler timer;
    private final Clock clock;
    private final TrafficEvents events;
    private @Nullable Running running;
    private boolean draining;
    /** Whether the traffic port is open and not draining; read by the kubelet's probe without the lock. */
    private volatile boolean takesTraffic;
    /** Whether the engine has been verified ready once since readygate started. */
    private volatile boolean engineVerified;

    private final Duration schedulerSlice;

    /** What runs while the traffic port is open; disposed together. */
    private record Running(TrafficResources resources, EngineConnections engine, TrafficServer server) {}

    /**
     * @param ends hears each exchange's start and end ({@code work} among them)
     * @param work the exchanges in flight, which the drain waits for
     * @param podStopping told as the drain begins (readygate records the current start's stop then)
     * @param shutdownPhase {@code spring.lifecycle.timeout-per-shutdown-phase}: the drain must fit in it
     */
    GatewayMode(
            ReadygateProperties properties,
            String host,
            TrafficAdmission admission,
            ExchangeEnds ends,
            WorkInFlight work,
            Consumer<Instant> podStopping,
            Duration shutdownPhase,
            Scheduler timer,
            Clock clock,
            TrafficEvents events) {
        this.settings = properties.gateway();
        this.schedulerSlice = properties.server().schedulerSlice();
        this.engineBaseUrl = properties.engine().requiredBaseUrl();
        this.host = host;
        this.admission = admission;
        this.ends = ends;
        this.work = work;
        this.podStopping = podStopping;
        this.timer = timer;
        this.clock = clock;
        if (settings.enabled() && settings.drainTimeout().plus(CUT_GRACE).compareTo(shutdownPhase) > 0) {
            throw new IllegalArgumentException("readygate.gateway.drain-timeout (" + settings.drainTimeout()
                    + ") must be at least " + CUT_GRACE.toSeconds()
                    + " s shorter than spring.lifecycle.timeout-per-shutdown-phase (" + shutdownPhase
                    + "): Spring stops waiting for the drain then");
        }
        this.events = events;
    }

    @Override
    public synchronized void start() {
        if (!settings.enabled() || running != null) {
            return;
        }
        TrafficResources resources = new TrafficResources();
        EngineConnections engine = new EngineConnections(
                engineBaseUrl, settings.connectTimeout(), ENGINE_IDLE, resources.loops, resources.buffers);
        GatewayProxy proxy = new GatewayProxy(
                engine,
                settings.maxRequestSize().toBytes(),
                new StreamTimeouts(settings.firstByteTimeout(), settings.betweenEventsTimeout(), resources.timer),
                admission,
                settings.retryBeforeFirstByte(),
                ends,
                clock,
                events);
        TrafficServer server = new TrafficServer(
                new InetSocketAddress(host, settings.port()),
                settings.maxConnections(),
                resources.loops,
                resources.buffers,
                proxy,
                new SchedulerSlice(schedulerSlice, "the gateway"));
        try {
            server.start();
        } catch (RuntimeException e) {
            resources.dispose();
            throw e;
        }
        running = new Running(resources, engine, server);
        takesTraffic = true;
    }

    /** Closes the traffic port at once, cutting the exchanges in flight (no drain). */
    @Override
    public void stop() {
        Running open = take();
        if (open != null) {
            open.server().stop();
            open.engine().close().block(Duration.ofSeconds(5));
            open.resources().dispose();
        }
    }

    /**
     * Drains, then closes the traffic port, and tells {@code callback}; never blocks (the drain runs on the timer and
     * the traffic event loops).
     */
    @Override
    public void stop(Runnable callback) {
        Running open;
        synchronized (this) {
            open = draining ? null : running;
            draining = open != null;
            takesTraffic = false;
        }
        if (open == null) {
            callback.run();
            return;
        }
        Instant began = clock.instant();
        int inFlight = work.inFlight();
        logger.info(
                "Gateway draining: {} request(s) in flight run to completion for at most {}; new ones are refused",
                inFlight,
                settings.drainTimeout());
        try {
            podStopping.accept(began);
        } catch (RuntimeException e) {
            logger.warn("Cannot record the engine start's stop as the gateway drains", e);
        }
        work.idle()
                .timeout(settings.drainTimeout(), Mono.defer(() -> cut(open)), timer)
                .then(Mono.defer(() -> open.server().close()))
                .publishOn(timer)
                .then(Mono.defer(() -> open.engine().close()))
                .then(Mono.defer(() -> open.resources().disposeLater()))
                .doFinally(signal -> {
                    take();
                    logger.info(
                            "Gateway drained in {} ms; traffic port closed",
                            Duration.between(began, clock.instant()).toMillis());
                    callback.run();
                })
                .subscribe(done -> {}, failure -> logger.warn("Gateway drain ended with a failure", failure));
    }

    /** The drain's deadline: what is still in flight is cut, and its ends are given a moment to be counted. */
    private Mono<Void> cut(Running open) {
        logger.info(
                "Gateway drain deadline ({}) passed: cutting {} request(s) still in flight",
                settings.drainTimeout(),
                work.inFlight());
        work.cutting();
        open.server().cutConnections();
        return work.idle().timeout(CUT_GRACE, Mono.empty(), timer);
    }

    private synchronized @Nullable Running take() {
        Running open = running;
        running = null;
        draining = false;
        takesTraffic = false;
        return open;
    }

    /**
     * Whether the traffic port is open and not draining: every request that reaches it is answered by readygate
     * (forwarded, held, or refused with {@code Retry-After}), whatever the engine's state. Never blocks.
     */
    public boolean takesTraffic() {
        return takesTraffic;
    }

    /**
     * Whether the engine has been verified ready at least once since readygate started: a new pod is not Ready on its
     * traffic port alone, or a rollout would replace a serving pod by one whose engine is still loading. Never blocks.
     */
    public boolean engineVerifiedOnce() {
        return engineVerified;
    }

    @EventListener
    void onEngineStateChanged(EngineStateChanged change) {
        if (change.current().acceptsTraffic()) {
            engineVerified = true;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running != null;
    }

    /** Last to start, first to stop: before readygate's web server, which answers {@code /readyz} through the drain. */
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
