package dev.readygate.faultmatrix;

import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateApplication;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.PayloadApplicationEvent;

/**
 * One engine and its readygate, in this JVM on one clock, running fault cases one after the other: the simulator on
 * its own ports, a readygate from its application class against it, readygate's state changes as they happen (the
 * instant each was published: {@code /readyz} reads the same state), and load clients when a case runs under load.
 */
final class Lane implements AutoCloseable {

    /** One readygate state change: when, whether {@code /readyz} says 200 from then on, and the reason. */
    record Change(
            Instant at,
            boolean ready,
            EngineState.Kind kind,
            @Nullable String reason) {}

    /** Load clients per lane: enough that a scrape rarely finds the engine idle. */
    private static final int LOAD_CLIENTS = 4;

    final String name;
    final MatrixSettings settings;
    final RunningSimulator engine;
    final ConfigurableApplicationContext readygate;
    final List<Change> changes = new CopyOnWriteArrayList<>();
    private final Clock clock = Clock.systemUTC();
    private final HttpClient http = HttpClient.newBuilder().build();
    private @Nullable ScheduledExecutorService load;

    Lane(String name, Path dir, MatrixSettings settings) {
        this.name = name;
        this.settings = settings;
        List<String> overrides = new ArrayList<>(settings.simulatorSettings());
        overrides.add("log-to-stdout=false");
        this.engine = RunningSimulator.serving(dir.resolve("engine"), overrides.toArray(String[]::new));
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + dir.resolve("state")));
        args.addAll(settings.readygateArguments());
        this.readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                .listeners(new StateListener())
                .run(args.toArray(String[]::new));
    }

    Instant now() {
        return clock.instant();
    }

    /** Whether readygate's heavy probes are suspended now: its circuit breaker is open. */
    boolean heavyProbesSuspended() {
        return readygate
                        .getBean("heavyProbeCircuitBreaker", CircuitBreaker.class)
                        .getState()
                == CircuitBreaker.State.OPEN;
    }

    /** Whether {@code /readyz} says 200 now (the latest state change). */
    boolean ready() {
        return !changes.isEmpty() && changes.getLast().ready();
    }

    /** The first change to not ready at or after {@code from}, or null. */
    @Nullable
    Change firstNotReadyAfter(Instant from) {
        return firstNotReadyAfter(from, reason -> true);
    }

    /** The first change to not ready at or after {@code from} whose reason is one {@code its} takes, or null. */
    @Nullable
    Change firstNotReadyAfter(Instant from, java.util.function.Predicate<@Nullable String> its) {
        return changes.stream()
                .filter(change -> !change.ready() && !change.at().isBefore(from) && its.test(change.reason()))
                .findFirst()
                .orElse(null);
    }

    /** The last change to ready at or after {@code from} (a flap counts only once it holds), or null. */
    @Nullable
    Change lastReadyAfter(Instant from) {
        Change last = null;
        for (Change change : changes) {
            if (!change.at().isBefore(from) && change.ready()) {
                last = change;
            }
        }
        return last;
    }

    /** How many times readiness went from ready to not ready at or after {@code from}. */
    long dropsAfter(Instant from) {
        return changes.stream()
                .filter(change -> !change.ready() && !change.at().isBefore(from))
                .count();
    }

    /**
     * Waits until readygate is ready (not degraded) and has stayed ready for {@code steady} (a fault case starts from an engine
     * verified ready, not one that is still settling), restarting the engine if it does not get there.
     */
    void awaitSteadyReady(Duration steady, Duration limit) {
        try {
            awaitReadyFor(steady, limit);
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            engine.clearFaults();
            engine.restartAndAwait(StartupPath.COLD);
            awaitReadyFor(steady, limit);
        }
    }

    private void awaitReadyFor(Duration steady, Duration limit) {
        await().atMost(limit).pollInterval(Duration.ofMillis(20)).until(() -> {
            // Ready, not degraded: failures a row left behind (a light check that hung in a stalled stream and timed
            // out after the clear) count with the next row's and would take it out early, with the wrong reason.
            if (!ready() || !(readygate.getBean(EngineStateMachine.class).current() instanceof EngineState.Ready)) {
                return false;
            }
            Change last = changes.getLast();
            return Duration.between(last.at(), now()).compareTo(steady) >= 0;
        });
    }

    /** Whether readygate's latest scrape of the engine found requests running. */
    boolean busyAsReadygateSees() {
        EngineMetricsSample sample =
                readygate.getBean(EngineFactsHolder.class).current().lastSample();
        return sample != null && sample.requestsRunning() != null && sample.requestsRunning() > 0;
    }

    /** Starts load clients: completions in a loop, each client at most one at a time, a few ms apart. */
    void startLoad() {
        ScheduledExecutorService clients = Executors.newScheduledThreadPool(LOAD_CLIENTS, runnable -> {
            Thread thread = new Thread(runnable, "load-" + name);
            thread.setDaemon(true);
            return thread;
        });
        HttpRequest request = HttpRequest.newBuilder(URI.create(engine.baseUrl() + "/v1/completions"))
                .timeout(settings.loadRequestTimeout())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"Qwen/Qwen3-0.6B\",\"prompt\":\""
                        + " the".repeat(60) + "\",\"max_tokens\":48,\"ignore_eos\":true}"))
                .build();
        for (int i = 0; i < LOAD_CLIENTS; i++) {
            clients.scheduleWithFixedDelay(() -> send(request), i * 7L, 5, TimeUnit.MILLISECONDS);
        }
        load = clients;
    }

    private void send(HttpRequest request) {
        try {
            http.send(request, HttpResponse.BodyHandlers.discarding());
        } catch (java.io.IOException ex) {
            // A fault, or the engine away: load goes on.
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    void stopLoad() {
        ScheduledExecutorService clients = load;
        if (clients != null) {
            clients.shutdownNow();
            load = null;
        }
    }

    /** readygate's state changes, as they are published. */
    private final class StateListener implements ApplicationListener<ApplicationEvent> {
        @Override
        public void onApplicationEvent(ApplicationEvent event) {
            if (event instanceof PayloadApplicationEvent<?> payload
                    && payload.getPayload() instanceof EngineStateChanged change) {
                EngineState state = change.current();
                boolean ready = state.acceptsTraffic();
                // Only changes of the verdict matter here; the rest (a reason changing while not ready) is kept too.
                changes.add(new Change(
                        clock.instant(),
                        ready,
                        state.kind(),
                        state.reason() == null ? null : state.reason().value()));
            }
        }
    }

    @Override
    public void close() {
        stopLoad();
        readygate.close();
        engine.close();
        http.close();
    }
}
