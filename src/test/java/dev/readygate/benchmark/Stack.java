package dev.readygate.benchmark;

import dev.readygate.ReadygateApplication;
import dev.readygate.probe.ProbeHistory;
import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.PayloadApplicationEvent;

/**
 * One engine with its two judges, in this JVM and on one clock: the vLLM simulator, a readygate started from its
 * application class against it, and the kubelet baseline probing the engine's {@code /health}. Records three
 * timelines: whether readygate's {@code /readyz} says 200 (from its state-change events), whether the kubelet says
 * ready, and whether the engine can in truth serve (the simulator's {@code ableToServe}, polled every millisecond,
 * dated by {@code ableToServeSince} when it turns true).
 */
final class Stack implements AutoCloseable {

    /**
     * One readygate state change, with the heavy probes that led to a {@code ready}: their durations (request sent to
     * {@code [DONE]}), the instants of their verdicts, and the last failure of each kind (to tell a start that needed
     * a second try).
     */
    record Transition(
            Instant at,
            EngineState.Kind kind,
            boolean acceptsTraffic,
            @Nullable String reason,
            double representativeMs,
            double canaryMs,
            @Nullable Instant representativeAt,
            @Nullable Instant canaryAt,
            @Nullable Instant lastFailedProbeAt) {}

    /** The readygate settings every benchmark stack uses, besides its defaults. */
    static final List<String> READYGATE_SETTINGS = List.of(
            // Not the default (30 s): the hang figures are compared with heavy-timeout + 500 ms, and a shorter
            // heavy probe timeout keeps each hang sample short. Nothing else depends on it here.
            "--readygate.probe.heavy-timeout=3s",
            // A latency objective, so that a warm-up (the first requests pay the simulator's warm-up penalty) is a
            // verification failure (slow) rather than a pass: without an objective readygate cannot tell.
            "--readygate.probe.representative.max-time-to-first-token=250ms");

    final String name;
    final RunningSimulator engine;
    final ConfigurableApplicationContext readygate;
    final KubeletProber kubelet;
    final Timeline readygateReady = new Timeline(false);
    final Timeline able = new Timeline(false);
    final List<Transition> transitions = new CopyOnWriteArrayList<>();
    private final ProbeHistory history;
    private final Thread truth;
    private volatile boolean closed;
    private final Clock clock = Clock.systemUTC();

    private Stack(String name, RunningSimulator engine, Path stateDir, long seed, List<String> extraSettings) {
        this.name = name;
        this.engine = engine;
        List<String> args = new ArrayList<>(engineSettings(engine, stateDir));
        args.addAll(READYGATE_SETTINGS);
        if (extraSettings.stream().noneMatch(setting -> setting.startsWith("--readygate.restart.loop-hold="))) {
            // The stages restart the engine on purpose, hundreds of times: no restart loop to hold, except in the
            // crash-loop stage, which sets it.
            args.add("--readygate.restart.loop-hold=0s");
        }
        args.addAll(extraSettings);
        this.readygate = readygate(args, this::changed);
        this.history = readygate.getBean(ProbeHistory.class);
        this.kubelet = new KubeletProber("127.0.0.1", engine.port(), clock, seed);
        this.truth = Thread.ofPlatform().daemon().name("truth-" + name).start(this::pollTruth);
    }

    /**
     * readygate beside {@code engine} in this JVM: on a free port, quiet, its state in {@code stateDir}, and the
     * engine's evidence (snapshot, log, preload daemon) where the simulator keeps it.
     */
    static List<String> engineSettings(RunningSimulator engine, Path stateDir) {
        return List.of(
                "--server.port=0",
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + stateDir,
                "--readygate.evidence.snapshot-dir=" + engine.workDir().resolve("snapshot"),
                "--readygate.evidence.engine-log=" + engine.engineLogFile(),
                "--readygate.evidence.daemon-socket-dir=" + engine.workDir().resolve("weight-cache"),
                "--readygate.evidence.daemon-log=" + engine.workDir().resolve("preload-daemon.log"),
                "--readygate.evidence.daemon-health-url=" + engine.daemonHealthUrl());
    }

    /**
     * Starts a simulator (test timings: loads of 0.1 to 0.3 s, 1 ms per token; {@code engineSettings} on top) and a
     * readygate beside it, and waits until both readygate and the kubelet say ready.
     */
    static Stack start(String name, Path dir, long seed, List<String> engineSettings, List<String> readygateSettings) {
        List<String> overrides = new ArrayList<>(engineSettings);
        overrides.add("log-to-stdout=false");
        RunningSimulator engine = RunningSimulator.serving(dir.resolve("engine"), overrides.toArray(String[]::new));
        return new Stack(name, engine, dir.resolve("state"), seed, readygateSettings);
    }

    int readygatePort() {
        return ((WebServerApplicationContext) readygate).getWebServer().getPort();
    }

    /** The last readygate transition into {@code ready} at or after {@code from}, or null. */
    @Nullable
    Transition readyTransitionAfter(Instant from) {
        for (Transition transition : transitions) {
            if (!transition.at().isBefore(from) && transition.kind() == EngineState.Kind.READY) {
                return transition;
            }
        }
        return null;
    }

    /** The first readygate transition to one of {@code kinds} at or after {@code from}, or null. */
    @Nullable
    Transition firstTransitionAfter(Instant from, EngineState.Kind... kinds) {
        List<EngineState.Kind> wanted = List.of(kinds);
        for (Transition transition : transitions) {
            if (!transition.at().isBefore(from) && wanted.contains(transition.kind())) {
                return transition;
            }
        }
        return null;
    }

    /** Waits (real time: this is a benchmark) until {@code condition} holds; false when {@code limit} passed first. */
    static boolean await(BooleanSupplier condition, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    /** Waits until readygate, the kubelet and the truth all say ready/able. */
    boolean awaitAllReady(Duration limit) {
        return await(() -> readygateReady.current() && kubelet.ready().current() && able.current(), limit);
    }

    static void pause(Duration duration) {
        long deadline = System.nanoTime() + duration.toNanos();
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    private void pollTruth() {
        while (!closed) {
            boolean now = engine.ableToServe();
            if (now != able.current()) {
                Instant at = clock.instant();
                if (now) {
                    Instant since = engine.ableToServeSince();
                    able.set(since != null && since.isBefore(at) ? since : at, true);
                } else {
                    able.set(at, false);
                }
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /**
     * Starts a readygate from its application class in this JVM with {@code args}; {@code changes} sees each of its
     * state changes, in the thread that made it.
     */
    static ConfigurableApplicationContext readygate(List<String> args, Consumer<EngineState> changes) {
        return new SpringApplicationBuilder(ReadygateApplication.class)
                .listeners(new StateListener(changes))
                .run(args.toArray(String[]::new));
    }

    /** One state change, in the thread that made it (so the probe history is that verification's). */
    private void changed(EngineState state) {
        ProbeReport representative = null;
        ProbeReport canary = null;
        Instant lastFailure = null;
        if (state.kind() == EngineState.Kind.READY) {
            representative = history.last(ProbeKind.REPRESENTATIVE);
            canary = history.last(ProbeKind.CANARY);
            lastFailure = later(history.lastFailure(ProbeKind.REPRESENTATIVE), history.lastFailure(ProbeKind.CANARY));
        }
        transitions.add(new Transition(
                state.since(),
                state.kind(),
                state.acceptsTraffic(),
                state.reason() == null ? null : state.reason().value(),
                totalMillis(representative),
                totalMillis(canary),
                representative == null ? null : representative.at(),
                canary == null ? null : canary.at(),
                lastFailure));
        readygateReady.set(state.since(), state.acceptsTraffic());
    }

    private static @Nullable Instant later(@Nullable ProbeReport a, @Nullable ProbeReport b) {
        return java.util.stream.Stream.of(a, b)
                .filter(java.util.Objects::nonNull)
                .map(ProbeReport::at)
                .max(Instant::compareTo)
                .orElse(null);
    }

    private static double totalMillis(@Nullable ProbeReport report) {
        return report == null || report.measurement() == null
                ? Double.NaN
                : report.measurement().total().toNanos() / 1e6;
    }

    /** readygate's state changes, handed on from its application events. */
    private record StateListener(Consumer<EngineState> changes) implements ApplicationListener<ApplicationEvent> {
        @Override
        public void onApplicationEvent(ApplicationEvent event) {
            if (event instanceof PayloadApplicationEvent<?> payload
                    && payload.getPayload() instanceof EngineStateChanged change) {
                changes.accept(change.current());
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        kubelet.close();
        readygate.close();
        engine.close();
    }
}
