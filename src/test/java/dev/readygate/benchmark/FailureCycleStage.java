package dev.readygate.benchmark;

import dev.readygate.ExternalTool;
import dev.readygate.benchmark.GatewayStage.Leg;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import dev.readygate.support.StreamingClients;
import dev.readygate.support.StreamingClients.Outcome;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Failed client requests over one scripted failure cycle (issue 27, item 9), side by side in one run: a crash, a GPU
 * fault (generation fails inside a 200 stream, {@code /health} stays 200), a cached (preload-hit) restart and a rollout
 * (the pod's SIGTERM), under the same steady load of streams on each of four paths:
 *
 * <ul>
 *   <li><b>no gateway</b>: clients straight to the engine through a modelled Service, whose endpoint is the kubelet's
 *       verdict on {@code /health} ({@link KubeletProber}: period 5 s, failure threshold 3) or the pod's termination,
 *       seen by clients {@value #PROPAGATION_MS} ms late (endpoint propagation: until then clients still reach the pod;
 *       with no endpoint a request fails at once, as a connection to a Service without one is refused);
 *   <li><b>nginx</b> and <b>HAProxy</b> in front of the same engine, with their passive health on ({@link ProxyConfigs});
 *   <li><b>readygate's gateway</b> in front of an engine of its own (the pod with readygate), on which the same script
 *       runs at the same moments; its rollout is readygate's own stop (what SIGTERM does: the context closes, draining
 *       where drain exists), then the engine's, then a new readygate and engine.
 * </ul>
 *
 * One replica, replaced in place (a GPU pod with no spare GPU to surge onto). The engines are in-process simulators at
 * {@value #DECODE_MS} ms a token; the GPU fault lasts {@value #GPU_FAULT_S} s, then the engine is restarted (as a person
 * or a generation-aware liveness check would). Each client request is counted in the fault during whose window it ended.
 */
final class FailureCycleStage {

    static final int DECODE_MS = 20;
    static final int TOKENS = 40;
    static final long PROPAGATION_MS = 2_000;
    static final int GPU_FAULT_S = 8;
    static final Duration PAUSE_AFTER_FAILURE = Duration.ofMillis(500);

    /** The cycle's steps, in order; {@code STEADY} is the window before the first fault. */
    enum Step {
        STEADY("steady"),
        CRASH("crash"),
        GPU_FAULT("GPU fault"),
        CACHED_RESTART("cached restart"),
        ROLLOUT("rollout");

        final String label;

        Step(String label) {
            this.label = label;
        }
    }

    /**
     * readygate's configuration for its leg, the one place it is set: hold and the retry before the first byte on, the
     * drain at its default ({@code readygate.gateway.drain-timeout}, 8 s).
     */
    static List<String> readygateSettings(RunningSimulator engine, Path stateDir, int trafficPort) {
        List<String> settings = new ArrayList<>(Stack.engineSettings(engine, stateDir));
        settings.addAll(List.of(
                "--server.address=127.0.0.1",
                // The cycle restarts the engine on purpose: not a restart loop to hold it out for.
                "--readygate.restart.loop-hold=0s",
                "--readygate.gateway.enabled=true",
                "--readygate.gateway.port=" + trafficPort,
                // Requests arriving during a start expected short wait for it; one whose connection failed before any
                // answer is sent once more to the next verified start.
                "--readygate.gateway.hold=true",
                "--readygate.gateway.retry-before-first-byte=true"));
        settings.addAll(Stack.READYGATE_SETTINGS);
        return settings;
    }

    private final Plan plan;
    private final Path dir;
    private final Clock clock = Clock.systemUTC();
    final Map<String, Object> results = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();
    /** Per leg and step: the client requests' outcomes. */
    final Map<Leg, Map<Step, Map<Outcome, Long>>> counts = new EnumMap<>(Leg.class);
    /** When each step began. */
    final Map<Step, Instant> began = new EnumMap<>(Step.class);

    private final List<Process> processes = new ArrayList<>();
    private final Map<Leg, StreamingClients> clients = new EnumMap<>(Leg.class);
    private @Nullable RunningSimulator shared;
    private @Nullable RunningSimulator own;
    private @Nullable KubeletProber kubelet;
    private volatile @Nullable ConfigurableApplicationContext readygate;
    /** Whether the no-gateway pod serves as the Service sees it now (before propagation): kubelet ready, not ending. */
    private final Timeline endpoint = new Timeline(false);

    private volatile boolean terminating;
    private volatile boolean closed;
    /** When the cycle ended: requests that end later are not counted. */
    private Instant end = Instant.MAX;

    FailureCycleStage(Plan plan, Path dir) {
        this.plan = plan;
        this.dir = dir;
    }

    /** A path's name here: the direct one goes through the modelled kubelet and Service. */
    static String label(Leg leg) {
        return leg == Leg.DIRECT ? "no gateway (kubelet + Service)" : leg.label;
    }

    int clientsPerLeg() {
        return plan.mode().equals("full") ? 8 : 4;
    }

    void run(NoiseMonitor noise) {
        try {
            Files.createDirectories(dir);
            RunningSimulator a = RunningSimulator.serving(dir.resolve("engine-a"), engineSettings());
            shared = a;
            RunningSimulator b = RunningSimulator.serving(dir.resolve("engine-b"), engineSettings());
            own = b;
            KubeletProber prober = new KubeletProber("127.0.0.1", a.port(), clock, 27);
            kubelet = prober;
            Thread.ofPlatform().daemon().name("service-endpoint").start(this::followEndpoint);
            int traffic = FootprintStage.freePort();
            startReadygate(b, traffic, true);
            String body = StreamingClients.completion("Qwen/Qwen3-0.6B", TOKENS);
            Optional<Integer> nginx = nginx(noise, a.port());
            Optional<Integer> haproxy = haproxy(noise, a.port());
            if (!Stack.await(() -> endpoint.current(), Duration.ofSeconds(30))) {
                throw new IOException("the kubelet model never said ready");
            }
            noise.begin("failure cycle");
            start(Leg.DIRECT, a.port(), body);
            nginx.ifPresent(port -> start(Leg.NGINX, port, body));
            haproxy.ifPresent(port -> start(Leg.HAPROXY, port, body));
            start(Leg.READYGATE, traffic, body);
            results.put(
                    "legs",
                    clients.keySet().stream().map(FailureCycleStage::label).toList());
            results.put("clients_per_leg", clientsPerLeg());
            cycle(a, b, traffic);
            noise.end();
            tally();
            Benchmark.progress("failure cycle: %s", counts);
        } catch (IOException | RuntimeException ex) {
            failures.add(ex.toString());
            Benchmark.progress("failure cycle failed: %s", ex);
        } finally {
            closed = true;
            clients.values().forEach(StreamingClients::close);
            processes.forEach(process -> {
                noise.ownEnding(process.pid());
                FootprintStage.stop(process);
            });
            ConfigurableApplicationContext context = readygate;
            if (context != null) {
                context.close();
            }
            if (kubelet != null) {
                kubelet.close();
            }
            if (shared != null) {
                shared.close();
            }
            if (own != null) {
                own.close();
            }
        }
    }

    /** The simulator of each pod: a start of a few seconds, a preload hit of about one, one rate per stream. */
    private String[] engineSettings() {
        return new String[] {
            "load-time=4s",
            "auto-restart-delay=1s",
            "timing.preload-hit-load-time=1s",
            "timing.daemon-load-time=500ms",
            "timing.decode-per-token=" + DECODE_MS + "ms",
            "timing.batch-slowdown=0",
            "model.batch-variance=0",
            "model.eos-every=1000000"
        };
    }

    /** The script, on both pods at once; each step waits until every path serves again, then a little more. */
    private void cycle(RunningSimulator a, RunningSimulator b, int traffic) throws IOException {
        began.put(Step.STEADY, clock.instant());
        Stack.pause(Duration.ofSeconds(5));

        step(Step.CRASH, () -> {
            int startA = a.latestStartNumber();
            a.crash();
            kubeletSees(a, startA);
            b.crash();
        });

        step(Step.GPU_FAULT, () -> {
            a.fault("generation-fails", false);
            b.fault("generation-fails", false);
            Stack.pause(Duration.ofSeconds(GPU_FAULT_S));
            a.clearFaults();
            b.clearFaults();
            int startA = a.latestStartNumber();
            kubeletTerminated();
            a.restart(StartupPath.COLD);
            kubeletSees(a, startA);
            b.restart(StartupPath.COLD);
        });

        step(Step.CACHED_RESTART, () -> {
            int startA = a.latestStartNumber();
            kubeletTerminated();
            a.restart(StartupPath.PRELOAD_HIT);
            kubeletSees(a, startA);
            // A planned restart: the operator's script announces it to readygate first (POST /gateway/drain answers
            // once nothing is in flight), as the chart's docs say; nginx and HAProxy have no such thing.
            announceEngineStop();
            b.restart(StartupPath.PRELOAD_HIT);
        });

        step(Step.ROLLOUT, () -> {
            // The pod without readygate: SIGTERM ends the engine at once; its endpoint goes when the Service hears.
            Thread podA = Thread.ofPlatform().start(() -> {
                terminating = true;
                int startA = a.latestStartNumber();
                kubeletTerminated();
                a.restart(StartupPath.PRELOAD_HIT);
                kubeletSees(a, startA);
                terminating = false;
            });
            // The pod with readygate: readygate's own stop first (a drain, where it exists), then the engine's, then
            // the new pod's readygate and engine.
            ConfigurableApplicationContext old = readygate;
            long stopping = System.nanoTime();
            if (old != null) {
                old.close();
            }
            results.put("readygate_stop_ms", (System.nanoTime() - stopping) / 1_000_000);
            b.restart(StartupPath.PRELOAD_HIT);
            try {
                startReadygate(b, traffic, false);
            } catch (IOException ex) {
                throw new java.io.UncheckedIOException(ex);
            }
            join(podA);
        });
        end = clock.instant();
    }

    private void step(Step step, Runnable action) {
        Instant at = clock.instant();
        began.put(step, at);
        Benchmark.progress("failure cycle: %s", step.label);
        action.run();
        // Every path serves again: a request sent after the action completed on each.
        boolean back = Stack.await(
                () -> clients.values().stream()
                        .allMatch(c -> c.requests().stream()
                                .anyMatch(r -> r.outcome() == Outcome.COMPLETED
                                        && r.sent().isAfter(at))),
                Duration.ofSeconds(90));
        if (!back) {
            failures.add(step.label + ": not every path served again within 90 s");
        }
        Stack.pause(Duration.ofSeconds(3));
    }

    /** The kubelet learns the engine's container ended. */
    private void kubeletTerminated() {
        KubeletProber prober = kubelet;
        if (prober != null) {
            prober.containerTerminated();
        }
    }

    /** Once the engine's next start began (a new container), the kubelet's readiness worker starts over. */
    private void kubeletSees(RunningSimulator engine, int before) {
        kubeletTerminated();
        Stack.await(() -> engine.latestStartNumber() > before, Duration.ofSeconds(30));
        KubeletProber prober = kubelet;
        if (prober != null) {
            prober.containerStarted();
        }
    }

    /** The Service's view: the kubelet's verdict, and no endpoint for a pod that is terminating. */
    private void followEndpoint() {
        while (!closed) {
            KubeletProber prober = kubelet;
            boolean serving = prober != null && prober.ready().current() && !terminating;
            endpoint.set(clock.instant(), serving);
            LockSupport.parkNanos(5_000_000);
        }
    }

    /** Whether a client reaches the pod at {@code at}: the Service's view {@value #PROPAGATION_MS} ms ago. */
    private boolean reachable(Instant at) {
        return endpoint.valueAt(at.minusMillis(PROPAGATION_MS));
    }

    private void start(Leg leg, int port, String body) {
        URI url = URI.create("http://127.0.0.1:" + port + "/v1/completions");
        clients.put(
                leg,
                StreamingClients.start(
                        () -> url,
                        clientsPerLeg(),
                        body,
                        Map.of(),
                        PAUSE_AFTER_FAILURE,
                        leg == Leg.DIRECT ? this::reachable : at -> true));
    }

    /** {@code POST /gateway/drain} to the pod's readygate, from the pod itself: answered once nothing is in flight. */
    private void announceEngineStop() {
        ConfigurableApplicationContext running = readygate;
        if (running == null) {
            return;
        }
        String port = running.getEnvironment().getProperty("local.server.port");
        long announcing = System.nanoTime();
        try {
            java.net.http.HttpResponse<String> answer = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(
                                            URI.create("http://127.0.0.1:" + port + "/gateway/drain"))
                                    .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
                                    .timeout(Duration.ofSeconds(60))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() != 200) {
                failures.add(
                        "cached restart: the announcement was answered " + answer.statusCode() + " " + answer.body());
            }
        } catch (IOException ex) {
            failures.add("cached restart: the announcement failed: " + ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            failures.add("cached restart: interrupted while announcing");
        }
        results.put("readygate_announced_drain_ms", (System.nanoTime() - announcing) / 1_000_000);
    }

    /** Starts a readygate (in this JVM, as the pod's new container) and, when asked to, waits until it says ready. */
    private void startReadygate(RunningSimulator engine, int traffic, boolean awaitReady) throws IOException {
        Timeline ready = new Timeline(false);
        ConfigurableApplicationContext context = Stack.readygate(
                readygateSettings(engine, dir.resolve("readygate-state"), traffic),
                state -> ready.set(state.since(), state.acceptsTraffic()));
        readygate = context;
        if (awaitReady && !Stack.await(ready::current, Duration.ofSeconds(60))) {
            throw new IOException("readygate did not say ready within 60 s");
        }
    }

    /** Each leg's requests, by the step in whose window they ended. */
    private void tally() {
        List<Map.Entry<Step, Instant>> windows = new ArrayList<>(began.entrySet());
        clients.forEach((leg, traffic) -> {
            Map<Step, Map<Outcome, Long>> byStep = new EnumMap<>(Step.class);
            for (Step step : Step.values()) {
                Map<Outcome, Long> zero = new EnumMap<>(Outcome.class);
                for (Outcome outcome : Outcome.values()) {
                    zero.put(outcome, 0L);
                }
                byStep.put(step, zero);
            }
            for (StreamingClients.Request request : traffic.requests()) {
                if (request.ended().isAfter(end)) {
                    continue;
                }
                Step step = null;
                for (Map.Entry<Step, Instant> window : windows) {
                    if (!request.ended().isBefore(window.getValue())) {
                        step = window.getKey();
                    }
                }
                if (step != null) {
                    byStep.get(step).merge(request.outcome(), 1L, Long::sum);
                }
            }
            counts.put(leg, byStep);
        });
    }

    private Optional<Integer> nginx(NoiseMonitor noise, int engine) throws IOException {
        Optional<Path> nginx = ExternalTool.NGINX.find();
        if (nginx.isEmpty()) {
            results.put("nginx", "skipped: no nginx (Debian's nginx package)");
            return Optional.empty();
        }
        Path prefix = Files.createDirectories(dir.resolve("nginx"));
        int port = FootprintStage.freePort();
        Files.writeString(prefix.resolve("nginx.conf"), ProxyConfigs.nginx(prefix.toString(), port, engine));
        launch(noise, List.of(nginx.get().toString(), "-p", prefix.toString(), "-c", "nginx.conf"), "nginx.log");
        return awaitProxy("nginx", port);
    }

    private Optional<Integer> haproxy(NoiseMonitor noise, int engine) throws IOException {
        Optional<Path> haproxy = ExternalTool.HAPROXY.find();
        if (haproxy.isEmpty()) {
            results.put("haproxy", "skipped: no haproxy (Debian's haproxy package)");
            return Optional.empty();
        }
        int port = FootprintStage.freePort();
        Path config = dir.resolve("haproxy.cfg");
        Files.writeString(
                config, ProxyConfigs.haproxy(port, engine, Runtime.getRuntime().availableProcessors()));
        launch(noise, List.of(haproxy.get().toString(), "-db", "-f", config.toString()), "haproxy.log");
        return awaitProxy("haproxy", port);
    }

    private Optional<Integer> awaitProxy(String name, int port) throws IOException {
        if (!Stack.await(
                () -> HttpConnection.status("127.0.0.1", port, "/health", 1000) == 200, Duration.ofSeconds(30))) {
            throw new IOException(name + " did not pass /health through within 30 s");
        }
        results.put(name, "on");
        return Optional.of(port);
    }

    private void launch(NoiseMonitor noise, List<String> command, String log) throws IOException {
        processes.add(GatewayStage.launch(noise, dir, command, log));
    }

    private static void join(Thread thread) {
        try {
            thread.join(Duration.ofSeconds(60));
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** The figures of one leg and step as {@code results.json} holds them. */
    Map<String, Object> figures() {
        Map<String, Object> out = new LinkedHashMap<>();
        counts.forEach((leg, bySteps) -> {
            Map<String, Object> steps = new LinkedHashMap<>();
            bySteps.forEach((step, byOutcome) -> {
                Map<String, Object> row = new LinkedHashMap<>();
                byOutcome.forEach((outcome, n) -> row.put(outcome.name().toLowerCase(Locale.ROOT), n));
                steps.put(step.label, row);
            });
            out.put(label(leg), steps);
        });
        return out;
    }
}
