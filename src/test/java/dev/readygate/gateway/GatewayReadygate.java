package dev.readygate.gateway;

import dev.readygate.ReadygateApplication;
import dev.readygate.ReadygateClients;
import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The gateway tests' one setup: readygate with gateway mode on (traffic port chosen by the system), on loopback, in
 * front of a simulator the test started, with small representative probes and no restart-loop hold; the test's own
 * settings and sources added. Closed with the simulator.
 */
final class GatewayReadygate implements AutoCloseable {

    final RunningSimulator engine;
    final ConfigurableApplicationContext readygate;

    private GatewayReadygate(RunningSimulator engine, ConfigurableApplicationContext readygate) {
        this.engine = engine;
        this.readygate = readygate;
    }

    /**
     * @param engine the simulator readygate gates (closed with it)
     * @param state readygate's state directory
     * @param sources more sources of the application context (a test's listener beans)
     * @param settings more settings, {@code --name=value}
     */
    static GatewayReadygate start(RunningSimulator engine, Path state, List<Class<?>> sources, String... settings) {
        return start(engine, state, sources, List.of(), settings);
    }

    /**
     * @param listeners listeners of the application's events from its first (a test's record of readiness changes)
     * @see #start(RunningSimulator, Path, List, String...)
     */
    static GatewayReadygate start(
            RunningSimulator engine,
            Path state,
            List<Class<?>> sources,
            List<ApplicationListener<?>> listeners,
            String... settings) {
        List<Class<?>> all = new ArrayList<>(List.of(ReadygateApplication.class));
        all.addAll(sources);
        List<String> args = new ArrayList<>(List.of(
                "--server.address=127.0.0.1",
                "--server.port=0",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + state,
                "--readygate.probe.representative.prompt-tokens=200",
                "--readygate.probe.representative.output-tokens=8",
                "--readygate.restart.loop-hold=0s",
                "--readygate.gateway.enabled=true",
                "--readygate.gateway.port=0"));
        args.addAll(List.of(settings));
        try {
            return new GatewayReadygate(
                    engine,
                    new SpringApplicationBuilder(all.toArray(Class<?>[]::new))
                            .listeners(listeners.toArray(ApplicationListener<?>[]::new))
                            .run(args.toArray(String[]::new)));
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    /** readygate's own port (probes, status, metrics). */
    WebTestClient admin() {
        return ReadygateClients.client(readygate);
    }

    /** The traffic port, open. */
    TrafficServer server() {
        return Objects.requireNonNull(readygate.getBean(GatewayMode.class).server(), "the traffic port is not open");
    }

    /** A client of the traffic port. */
    WebTestClient traffic() {
        return WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + server().port())
                .responseTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Override
    public void close() {
        try {
            readygate.close();
        } finally {
            engine.close();
        }
    }
}
