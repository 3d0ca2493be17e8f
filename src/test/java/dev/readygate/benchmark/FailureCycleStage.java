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
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
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
 *       runs at the same moments, reached through a modelled Service too: the pod's readiness is the kubelet's verdict
 *       on readygate's {@code /readyz} as charts/readygate probes it (period 1 s, failure threshold 2), so a pod whose
 *       engine is out long enough drops out of the Service as it would in a cluster. Its in-place rollout is the
 *       chart's stop: the endpoint goes, readygate forwards as before for {@value #GATEWAY_PRE_STOP_MS} ms (its preStop)
 *       and then stops (its context closes: the drain), then the engine's restart, then a new readygate.
 * </ul>
 *
 * Steps one to four keep one replica, replaced in place (a GPU pod with no spare GPU to surge onto). The fifth, a
 * rollout that surges, runs on the two paths a Service routes (no gateway, readygate): a new pod starts beside the old
 * one, and once the Service sends it requests the old pod is deleted and stops as charts/readygate stops a pod
 * (readygate's preStop, then its drain; the engine serves through its own preStop of {@value #ENGINE_PRE_STOP_MS} ms,
 * the no-gateway pod's engine too). nginx and HAProxy stand for a proxy with one upstream, which has no second pod to
 * go to; their clients stop before it. The engines are in-process simulators at {@value #DECODE_MS} ms a token; the GPU
 * fault lasts {@value #GPU_FAULT_S} s, then the engine is restarted (as a person or a generation-aware liveness check
 * would). Each client request is counted in the step during whose window it ended.
 *
 * <p>With two replicas ({@code failure-cycle-replicas}), every path has a second pod (its own engine; for readygate's
 * paths its own readygate too) that serves steadily through the whole cycle, while the script runs on the first pod
 * only; nginx and HAProxy have both engines as upstreams; the clients are twice as many, so each engine carries the same
 * load as with one. This is where a pod whose engine cannot serve should leave the Service (readygate's {@code /readyz}
 * as the pod's readiness) rather than stay in it and refuse ({@code /readyz/gateway}). The surge is left out: with a
 * second replica serving it shows nothing the rollout in place does not.
 */
final class FailureCycleStage {

    static final int DECODE_MS = 20;
    static final int TOKENS = 40;
    static final long PROPAGATION_MS = 2_000;
    static final int GPU_FAULT_S = 8;
    static final Duration PAUSE_AFTER_FAILURE = Duration.ofMillis(500);
    /** charts/readygate's {@code gateway.preStopSeconds}: readygate forwards as before this long after its pod ends. */
    static final long GATEWAY_PRE_STOP_MS = 2_000;
    /** charts/readygate's {@code engine.drainSeconds}: the engine's preStop, through which it still serves. */
    static final long ENGINE_PRE_STOP_MS = 10_000;

    /** The cycle's steps, in order; {@code STEADY} is the window before the first fault. */
    enum Step {
        STEADY("steady"),
        CRASH("crash"),
        GPU_FAULT("GPU fault"),
        CACHED_RESTART("cached restart"),
        ROLLOUT("rollout"),
        SURGE_ROLLOUT("rollout with a surge");

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
    /** Pods per path: 1, or 2 with the script on the first only. */
    final int replicas;
    /** The no-gateway path's scripted engine (nginx's and HAProxy's first upstream). */
    private @Nullable RunningSimulator scripted;

    private final Clock clock = Clock.systemUTC();
    // Written by the cycle's threads at once (each pod's stop and surge runs on its own): thread-safe.
    final Map<String, Object> results = java.util.Collections.synchronizedMap(new LinkedHashMap<>());
    final List<String> failures = new CopyOnWriteArrayList<>();
    /** Per leg: the steps it took part in (nginx and HAProxy stop before the surge). */
    final Map<Leg, List<Step>> stepsTaken = new EnumMap<>(Leg.class);
    /** Per leg and step: the client requests' outcomes. */
    final Map<Leg, Map<Step, Map<Outcome, Long>>> counts = new EnumMap<>(Leg.class);
    /** Per leg and step: why its requests failed or were cut (the status, 0 for none, and what the client saw). */
    final Map<Leg, Map<Step, Map<String, Long>>> why = new EnumMap<>(Leg.class);
    /** readygate's state changes, each pod's, as "pod N ms kind reason" (ms since the cycle began). */
    final List<String> states = new CopyOnWriteArrayList<>();
    /** When each step began. */
    final Map<Step, Instant> began = new EnumMap<>(Step.class);

    private final List<Process> processes = new ArrayList<>();
    private final Map<Leg, StreamingClients> clients = new EnumMap<>(Leg.class);
    private final Map<Leg, StreamingClients> stopped = new EnumMap<>(Leg.class);
    /** Every engine still running, closed at the end. */
    private final List<RunningSimulator> engines = new CopyOnWriteArrayList<>();

    private final List<KubeletProber> probers = new CopyOnWriteArrayList<>();
    /** The no-gateway pod's kubelet (engine a's). */
    private @Nullable KubeletProber kubelet;

    /** The Service in front of the no-gateway pods. */
    private final Service direct = new Service();

    /** readygate's two paths: the pod's readiness on the engine (the chart's default), and on the traffic port. */
    private final List<GatewayLeg> gateways = List.of(
            new GatewayLeg(Leg.READYGATE, KubeletProber.Probe.READYGATE_READYZ, "b"),
            new GatewayLeg(Leg.READYGATE_ON_GATEWAY, KubeletProber.Probe.READYGATE_GATEWAY, "c"));

    private volatile boolean closed;
    /** When the cycle ended: requests that end later are not counted. */
    private Instant end = Instant.MAX;

    FailureCycleStage(Plan plan, Path dir, int replicas) {
        if (replicas < 1 || replicas > 2) {
            throw new IllegalArgumentException("the failure cycle models 1 or 2 replicas, not " + replicas);
        }
        this.plan = plan;
        this.dir = dir;
        this.replicas = replicas;
    }

    /** A path's name here: the direct one goes through the modelled kubelet and Service. */
    static String label(Leg leg) {
        return switch (leg) {
            case DIRECT -> "no gateway (kubelet + Service)";
            case READYGATE -> "readygate gateway, pod readiness `/readyz` (engine)";
            case READYGATE_ON_GATEWAY -> "readygate gateway, pod readiness `/readyz/gateway`";
            default -> leg.label;
        };
    }

    /**
     * One path through readygate's gateway: its Service, the pod's engine and the readygate in front of it, and what
     * the kubelet asks for the pod's readiness.
     */
    private final class GatewayLeg {
        final Leg leg;
        final KubeletProber.Probe probe;
        final String name;
        final Service service = new Service();
        /** The readygates of the pods the script leaves alone (with two replicas). */
        final List<ConfigurableApplicationContext> steady = new CopyOnWriteArrayList<>();

        volatile @Nullable RunningSimulator engine;
        volatile @Nullable ConfigurableApplicationContext readygate;
        int traffic;

        GatewayLeg(Leg leg, KubeletProber.Probe probe, String name) {
            this.leg = leg;
            this.probe = probe;
            this.name = name;
        }

        RunningSimulator engine() {
            return Objects.requireNonNull(engine);
        }
    }

    /** Runs {@code action} for each of readygate's paths at once, and waits for all. */
    private void eachGateway(java.util.function.Consumer<GatewayLeg> action) {
        List<Thread> threads = gateways.stream()
                .map(g -> Thread.ofPlatform().name("cycle-" + g.name).start(() -> action.accept(g)))
                .toList();
        threads.forEach(FailureCycleStage::join);
    }

    int clientsPerLeg() {
        return (plan.mode().equals("full") ? 8 : 4) * replicas;
    }

    void run(NoiseMonitor noise) {
        try {
            Files.createDirectories(dir);
            RunningSimulator a = engine("engine-a");
            scripted = a;
            int[] upstreams = new int[replicas];
            upstreams[0] = a.port();
            for (GatewayLeg g : gateways) {
                g.engine = engine("engine-" + g.name);
                g.traffic = FootprintStage.freePort();
            }
            Pod podA = new Pod(url(a.port()), prober(a.port(), KubeletProber.Probe.VLLM_HEALTH));
            kubelet = podA.kubelet;
            direct.pods.add(podA);
            for (int i = 1; i < replicas; i++) {
                RunningSimulator other = engine("engine-a-replica" + i);
                upstreams[i] = other.port();
                direct.pods.add(new Pod(url(other.port()), prober(other.port(), KubeletProber.Probe.VLLM_HEALTH)));
            }
            Thread.ofPlatform().daemon().name("service-endpoint").start(this::followEndpoints);
            for (GatewayLeg g : gateways) {
                // The steady pods first: the scripted pod is always the Service's last.
                for (int i = 1; i < replicas; i++) {
                    g.steady.add(podWithReadygate(
                            g,
                            engine("engine-" + g.name + "-replica" + i),
                            FootprintStage.freePort(),
                            "readygate-state-" + g.name + "-replica" + i,
                            true));
                }
                startReadygate(g, g.engine(), g.traffic, "readygate-state-" + g.name, true);
            }
            String body = StreamingClients.completion("Qwen/Qwen3-0.6B", TOKENS);
            Optional<Integer> nginx = nginx(noise, upstreams);
            Optional<Integer> haproxy = haproxy(noise, upstreams);
            if (!Stack.await(
                    () -> direct.everyPodReachable(clock.instant())
                            && gateways.stream().allMatch(g -> g.service.everyPodReachable(clock.instant())),
                    Duration.ofSeconds(30))) {
                throw new IOException("the kubelet model never said ready");
            }
            noise.begin("failure cycle");
            start(Leg.DIRECT, direct, body);
            nginx.ifPresent(port -> start(Leg.NGINX, port, body));
            haproxy.ifPresent(port -> start(Leg.HAPROXY, port, body));
            gateways.forEach(g -> start(g.leg, g.service, body));
            results.put(
                    "legs",
                    clients.keySet().stream().map(FailureCycleStage::label).toList());
            results.put("clients_per_leg", clientsPerLeg());
            results.put("replicas", replicas);
            cycle(a);
            noise.end();
            tally();
            Benchmark.progress("failure cycle: %s", counts);
            Benchmark.progress("failure cycle, why: %s", why);
            results.put("endpoints_ms", endpointChanges());
            Benchmark.progress("failure cycle, endpoints: %s", results.get("endpoints_ms"));
            results.put("readygate_states", List.copyOf(states));
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
            gateways.forEach(g -> {
                ConfigurableApplicationContext context = g.readygate;
                if (context != null) {
                    context.close();
                }
                g.steady.forEach(ConfigurableApplicationContext::close);
            });
            probers.forEach(KubeletProber::close);
            engines.forEach(RunningSimulator::close);
        }
    }

    private RunningSimulator engine(String name) {
        RunningSimulator engine = RunningSimulator.serving(dir.resolve(name), engineSettings());
        engines.add(engine);
        return engine;
    }

    private KubeletProber prober(int port, KubeletProber.Probe probe) {
        KubeletProber prober = new KubeletProber("127.0.0.1", port, probe, clock, 27 + probers.size());
        probers.add(prober);
        return prober;
    }

    private static URI url(int port) {
        return URI.create("http://127.0.0.1:" + port + "/v1/completions");
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

    /** The script, on every pod at once; each step waits until every path serves again, then a little more. */
    private void cycle(RunningSimulator a) {
        began.put(Step.STEADY, clock.instant());
        Stack.pause(Duration.ofSeconds(5));

        step(Step.CRASH, () -> {
            int startA = a.latestStartNumber();
            a.crash();
            gateways.forEach(g -> g.engine().crash());
            kubeletSees(a, startA);
        });

        step(Step.GPU_FAULT, () -> {
            a.fault("generation-fails", false);
            gateways.forEach(g -> g.engine().fault("generation-fails", false));
            Stack.pause(Duration.ofSeconds(GPU_FAULT_S));
            a.clearFaults();
            gateways.forEach(g -> g.engine().clearFaults());
            int startA = a.latestStartNumber();
            kubeletTerminated();
            a.restart(StartupPath.COLD);
            gateways.forEach(g -> g.engine().restart(StartupPath.COLD));
            kubeletSees(a, startA);
        });

        step(Step.CACHED_RESTART, () -> {
            Thread podA = Thread.ofPlatform().start(() -> {
                int startA = a.latestStartNumber();
                kubeletTerminated();
                a.restart(StartupPath.PRELOAD_HIT);
                kubeletSees(a, startA);
            });
            // A planned restart: the operator's script announces it to readygate first (POST /gateway/drain answers
            // once nothing is in flight), as the chart's docs say; nginx and HAProxy have no such thing.
            eachGateway(g -> {
                announceEngineStop(g);
                g.engine().restart(StartupPath.PRELOAD_HIT);
            });
            join(podA);
        });

        step(Step.ROLLOUT, () -> {
            // The pod without readygate: SIGTERM ends the engine at once; its endpoint goes when the Service hears.
            Pod oldA = direct.pods.getFirst();
            Thread podA = Thread.ofPlatform().start(() -> {
                oldA.terminating = true;
                int startA = a.latestStartNumber();
                kubeletTerminated();
                a.restart(StartupPath.PRELOAD_HIT);
                kubeletSees(a, startA);
                oldA.terminating = false;
            });
            // The pods with readygate: the endpoint goes; readygate forwards through its preStop, then stops (the
            // drain), then the engine's restart, then the new pod's readygate.
            eachGateway(g -> {
                stopReadygate(g.service.pods.getLast(), g.readygate, "readygate_stop_ms_" + g.name);
                g.engine().restart(StartupPath.PRELOAD_HIT);
                startReadygate(g, g.engine(), g.traffic, "readygate-state-" + g.name, false);
            });
            join(podA);
        });

        if (replicas > 1) {
            end = clock.instant();
            return;
        }
        // The surge: a new pod on each path a Service routes; nginx and HAProxy (one upstream) have nowhere to go.
        for (Leg leg : List.of(Leg.NGINX, Leg.HAPROXY)) {
            StreamingClients leaving = clients.remove(leg);
            if (leaving != null) {
                leaving.close();
                stopped.put(leg, leaving);
            }
        }
        step(Step.SURGE_ROLLOUT, () -> {
            Thread podA = Thread.ofPlatform().start(() -> surge(a));
            eachGateway(this::surge);
            join(podA);
        });
        end = clock.instant();
    }

    /**
     * A rollout that surges, on the no-gateway path: a new pod starts beside the old one; once the Service sends it
     * requests, the old pod is deleted: its endpoint goes (learned late), and its engine serves through the preStop of
     * charts/readygate's engine container, then stops.
     */
    private void surge(RunningSimulator a) {
        long starting = System.nanoTime();
        RunningSimulator fresh = engine("engine-a2");
        Pod next = new Pod(url(fresh.port()), prober(fresh.port(), KubeletProber.Probe.VLLM_HEALTH));
        direct.pods.add(next);
        awaitReachable(next, starting, "a");
        direct.pods.getFirst().terminating = true;
        long deleted = System.nanoTime();
        pauseUntil(deleted, ENGINE_PRE_STOP_MS);
        a.close();
        engines.remove(a);
    }

    /**
     * A rollout that surges, on one of readygate's paths: a new pod (engine and readygate) starts beside the old one;
     * once the Service sends it requests, the old pod is deleted and stops as charts/readygate stops a pod: readygate's
     * preStop, then its drain; the engine serves through its own preStop, then stops.
     */
    private void surge(GatewayLeg g) {
        long starting = System.nanoTime();
        RunningSimulator old = g.engine();
        Pod oldPod = g.service.pods.getLast();
        ConfigurableApplicationContext oldReadygate = g.readygate;
        RunningSimulator fresh = engine("engine-" + g.name + "2");
        startReadygate(g, fresh, FootprintStage.freePort(), "readygate-state-" + g.name + "-surge", false);
        awaitReachable(g.service.pods.getLast(), starting, g.name);
        long deleted = System.nanoTime();
        stopReadygate(oldPod, oldReadygate, "readygate_surge_stop_ms_" + g.name);
        pauseUntil(deleted, ENGINE_PRE_STOP_MS);
        old.close();
        engines.remove(old);
    }

    private void awaitReachable(Pod pod, long starting, String name) {
        if (!Stack.await(() -> pod.reachable(clock.instant()), Duration.ofSeconds(60))) {
            failures.add(Step.SURGE_ROLLOUT.label + ": the new pod " + name + " was not in its Service within 60 s");
        }
        results.put("surge_new_pod_reachable_ms_" + name, (System.nanoTime() - starting) / 1_000_000);
    }

    private static void pauseUntil(long since, long millis) {
        long left = since + millis * 1_000_000 - System.nanoTime();
        if (left > 0) {
            Stack.pause(Duration.ofNanos(left));
        }
    }

    /** readygate's pod ends: its endpoint goes, readygate forwards through its preStop, then stops (the drain). */
    private void stopReadygate(Pod pod, @Nullable ConfigurableApplicationContext context, String figure) {
        pod.terminating = true;
        Stack.pause(Duration.ofMillis(GATEWAY_PRE_STOP_MS));
        long stopping = System.nanoTime();
        if (context != null) {
            context.close();
        }
        results.put(figure, (System.nanoTime() - stopping) / 1_000_000);
        pod.kubelet.close();
    }

    private void step(Step step, Runnable action) {
        Instant at = clock.instant();
        began.put(step, at);
        Benchmark.progress("failure cycle: %s", step.label);
        action.run();
        // Every path serves again: a request sent after the action completed on each (one sent after the step began
        // may have been served through a preStop, before the pod's endpoint went).
        Instant done = clock.instant();
        // With a second replica every path serves again at once: wait for the scripted pod itself.
        if (replicas > 1 && !Stack.await(this::scriptedPodsServe, Duration.ofSeconds(90))) {
            failures.add(step.label + ": the scripted pods did not serve again within 90 s");
        }
        boolean back = Stack.await(
                () -> clients.values().stream()
                        .allMatch(c -> c.requests().stream()
                                .anyMatch(r -> r.outcome() == Outcome.COMPLETED
                                        && r.sent().isAfter(done))),
                Duration.ofSeconds(90));
        if (!back) {
            failures.add(step.label + ": not every path served again within 90 s");
        }
        Stack.pause(Duration.ofSeconds(3));
    }

    /**
     * Each path's scripted pod serves again: the no-gateway pod and each readygate pod in their Services, the scripted
     * engine's {@code /health} 200 (nginx's and HAProxy's first upstream), each scripted readygate's {@code /readyz} 200.
     */
    private boolean scriptedPodsServe() {
        Instant now = clock.instant();
        RunningSimulator a = Objects.requireNonNull(scripted);
        return direct.pods.getFirst().reachable(now)
                && HttpConnection.status("127.0.0.1", a.port(), "/health", 1000) == 200
                && gateways.stream().allMatch(g -> {
                    ConfigurableApplicationContext running = g.readygate;
                    return g.service.pods.getLast().reachable(now)
                            && running != null
                            && HttpConnection.status("127.0.0.1", adminPort(running), "/readyz", 1000) == 200;
                });
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

    /**
     * Each pod's endpoint as its Service saw it (before propagation): the milliseconds since the cycle began at which it
     * came and went, and when each step began.
     */
    private Map<String, Object> endpointChanges() {
        Instant zero = began.getOrDefault(Step.STEADY, Instant.EPOCH);
        Map<String, Object> out = new LinkedHashMap<>();
        began.forEach(
                (step, at) -> out.put(step.label, Duration.between(zero, at).toMillis()));
        Map<String, Service> services = new LinkedHashMap<>();
        services.put("no gateway", direct);
        gateways.forEach(g -> services.put("readygate " + g.name, g.service));
        for (Map.Entry<String, Service> service : services.entrySet()) {
            for (int i = 0; i < service.getValue().pods.size(); i++) {
                out.put(
                        service.getKey() + " pod " + i,
                        service.getValue().pods.get(i).endpoint.changes().stream()
                                .map(change -> (change.value() ? "+" : "-")
                                        + Duration.between(zero, change.at()).toMillis())
                                .toList());
            }
        }
        return out;
    }

    /** The Services' view, every 5 ms: each pod's kubelet verdict, and no endpoint for a pod that is terminating. */
    private void followEndpoints() {
        while (!closed) {
            Instant now = clock.instant();
            direct.pods.forEach(pod -> pod.follow(now));
            gateways.forEach(g -> g.service.pods.forEach(pod -> pod.follow(now)));
            LockSupport.parkNanos(5_000_000);
        }
    }

    /**
     * One pod as a Service sees it: an endpoint while its kubelet says ready and it is not terminating, learned
     * {@value #PROPAGATION_MS} ms late (until then clients still reach it).
     */
    private static final class Pod {
        final URI url;
        final KubeletProber kubelet;
        final Timeline endpoint = new Timeline(false);
        volatile boolean terminating;

        Pod(URI url, KubeletProber kubelet) {
            this.url = url;
            this.kubelet = kubelet;
        }

        void follow(Instant now) {
            endpoint.set(now, kubelet.ready().current() && !terminating);
        }

        boolean reachable(Instant at) {
            return endpoint.valueAt(at.minusMillis(PROPAGATION_MS));
        }
    }

    /** A Service: each request goes to one of the pods reachable when it is sent, in turn; with none it fails at once. */
    private static final class Service {
        final List<Pod> pods = new CopyOnWriteArrayList<>();
        private final AtomicInteger turn = new AtomicInteger();

        boolean reachable(Instant at) {
            return pods.stream().anyMatch(pod -> pod.reachable(at));
        }

        boolean everyPodReachable(Instant at) {
            return pods.stream().allMatch(pod -> pod.reachable(at));
        }

        URI pick(Instant at) {
            List<Pod> reachable = pods.stream().filter(pod -> pod.reachable(at)).toList();
            List<Pod> from = reachable.isEmpty() ? pods : reachable;
            return from.get(Math.floorMod(turn.getAndIncrement(), from.size())).url;
        }
    }

    private void start(Leg leg, Service service, String body) {
        stepsTaken.put(
                leg,
                replicas == 1
                        ? List.of(Step.values())
                        : List.of(Step.STEADY, Step.CRASH, Step.GPU_FAULT, Step.CACHED_RESTART, Step.ROLLOUT));
        clients.put(
                leg,
                StreamingClients.start(
                        () -> service.pick(clock.instant()),
                        clientsPerLeg(),
                        body,
                        Map.of(),
                        PAUSE_AFTER_FAILURE,
                        service::reachable));
    }

    /** A leg straight to a proxy's port: always reachable, taking every step but the surge. */
    private void start(Leg leg, int port, String body) {
        URI url = url(port);
        stepsTaken.put(leg, List.of(Step.STEADY, Step.CRASH, Step.GPU_FAULT, Step.CACHED_RESTART, Step.ROLLOUT));
        clients.put(
                leg,
                StreamingClients.start(() -> url, clientsPerLeg(), body, Map.of(), PAUSE_AFTER_FAILURE, at -> true));
    }

    /** {@code POST /gateway/drain} to the pod's readygate, from the pod itself: answered once nothing is in flight. */
    private void announceEngineStop(GatewayLeg g) {
        ConfigurableApplicationContext running = g.readygate;
        if (running == null) {
            return;
        }
        int port = adminPort(running);
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
        results.put("readygate_announced_drain_ms_" + g.name, (System.nanoTime() - announcing) / 1_000_000);
    }

    /**
     * Starts a readygate in front of {@code engine} (in this JVM, as a pod's new container) and its pod in the path's
     * Service, the kubelet asking what the path's pod readiness follows; when asked to, waits until it says ready.
     */
    private void startReadygate(
            GatewayLeg g, RunningSimulator engine, int traffic, String stateDir, boolean awaitReady) {
        g.readygate = podWithReadygate(g, engine, traffic, stateDir, awaitReady);
        g.engine = engine;
    }

    /** A new pod on the path: a readygate in front of {@code engine}, in the path's Service. */
    private ConfigurableApplicationContext podWithReadygate(
            GatewayLeg g, RunningSimulator engine, int traffic, String stateDir, boolean awaitReady) {
        Timeline ready = new Timeline(false);
        String pod = g.name + g.service.pods.size();
        ConfigurableApplicationContext context =
                Stack.readygate(readygateSettings(engine, dir.resolve(stateDir), traffic), state -> {
                    ready.set(state.since(), state.acceptsTraffic());
                    Instant zero = began.get(Step.STEADY);
                    states.add(pod + " "
                            + (zero == null
                                    ? "-"
                                    : Duration.between(zero, state.since()).toMillis()) + " " + state.kind()
                            + (state.reason() == null
                                    ? ""
                                    : " " + state.reason().value()));
                });
        g.service.pods.add(new Pod(url(traffic), prober(adminPort(context), g.probe)));
        if (awaitReady && !Stack.await(ready::current, Duration.ofSeconds(60))) {
            throw new IllegalStateException("readygate did not say ready within 60 s");
        }
        return context;
    }

    /** readygate's own port (its web server's), where the kubelet and the operator reach it. */
    private static int adminPort(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    /** Each leg's requests, by the step in whose window they ended. */
    private void tally() {
        List<Map.Entry<Step, Instant>> windows = new ArrayList<>(began.entrySet());
        Map<Leg, StreamingClients> all = new EnumMap<>(Leg.class);
        all.putAll(stopped);
        all.putAll(clients);
        all.forEach((leg, traffic) -> {
            Map<Step, Map<Outcome, Long>> byStep = new EnumMap<>(Step.class);
            for (Step step : Step.values()) {
                Map<Outcome, Long> zero = new EnumMap<>(Outcome.class);
                for (Outcome outcome : Outcome.values()) {
                    zero.put(outcome, 0L);
                }
                byStep.put(step, zero);
            }
            Map<Step, Map<String, Long>> whyByStep = new EnumMap<>(Step.class);
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
                    if (request.outcome() == Outcome.FAILED || request.outcome() == Outcome.CUT) {
                        whyByStep
                                .computeIfAbsent(step, s -> new LinkedHashMap<>())
                                .merge(request.status() + " " + request.detail(), 1L, Long::sum);
                    }
                }
            }
            counts.put(leg, byStep);
            why.put(leg, whyByStep);
        });
    }

    private Optional<Integer> nginx(NoiseMonitor noise, int... engines) throws IOException {
        Optional<Path> nginx = ExternalTool.NGINX.find();
        if (nginx.isEmpty()) {
            results.put("nginx", "skipped: no nginx (Debian's nginx package)");
            return Optional.empty();
        }
        Path prefix = Files.createDirectories(dir.resolve("nginx"));
        int port = FootprintStage.freePort();
        Files.writeString(prefix.resolve("nginx.conf"), ProxyConfigs.nginx(prefix.toString(), port, engines));
        launch(noise, List.of(nginx.get().toString(), "-p", prefix.toString(), "-c", "nginx.conf"), "nginx.log");
        return awaitProxy("nginx", port);
    }

    private Optional<Integer> haproxy(NoiseMonitor noise, int... engines) throws IOException {
        Optional<Path> haproxy = ExternalTool.HAPROXY.find();
        if (haproxy.isEmpty()) {
            results.put("haproxy", "skipped: no haproxy (Debian's haproxy package)");
            return Optional.empty();
        }
        int port = FootprintStage.freePort();
        Path config = dir.resolve("haproxy.cfg");
        Files.writeString(
                config, ProxyConfigs.haproxy(port, Runtime.getRuntime().availableProcessors(), engines));
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
                row.put("why", why.getOrDefault(leg, Map.of()).getOrDefault(step, Map.of()));
                steps.put(step.label, row);
            });
            out.put(label(leg), steps);
        });
        return out;
    }
}
