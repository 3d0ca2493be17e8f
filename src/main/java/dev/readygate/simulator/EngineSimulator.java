package dev.readygate.simulator;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.resources.LoopResources;
import tools.jackson.databind.json.JsonMapper;

/**
 * The vLLM 0.31 engine simulator: one engine, its preload daemon, its snapshot artifacts, the faults and the admin
 * API, wired together. Runs standalone ({@code readygate simulate}) or in-process (demo, tests).
 */
public final class EngineSimulator implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(EngineSimulator.class);

    private final SimulatorProperties properties;
    private final Clock clock;
    private final WorkDirLock workDir;
    private final ExecutorService lifecycleExecutor;
    private final Scheduler lifecycle;
    /**
     * The simulator's own event loops: in the demo and in tests it shares a JVM with readygate, whose shutdown
     * disposes Reactor Netty's global loops; an engine must not die with its sidecar.
     */
    private final LoopResources loops;

    private final JsonMapper json = JsonMapper.builder().build();
    private final SimulatedModel model;
    private final FaultSet faults;
    private final EngineLog engineLog;
    private final EngineLog daemonLog;
    private final WeightCacheDaemon daemon;
    private final SnapshotArtifacts snapshot;
    private final GpuMemoryModel gpu;
    private final SimulatedEngine engine;
    private final Traffic traffic;
    private final Disposable.Swap scenarioRun = Disposables.swap();
    private final AtomicReference<ScenarioProgress> scenarioProgress = new AtomicReference<>();
    private volatile @Nullable DisposableServer admin;

    /** Where a running scenario stands. */
    record ScenarioProgress(
            String name,
            int step,
            int steps,
            int round,
            @Nullable String note) {}

    /**
     * @param properties the configuration
     * @param clock the source of timestamps
     * @param timer the scheduler all simulated durations run on (virtual time in tests)
     * @param stdout where vLLM log lines are echoed, or null for none
     * @throws IllegalStateException when the work directory cannot be created or another simulator uses it
     */
    public EngineSimulator(SimulatorProperties properties, Clock clock, Scheduler timer, @Nullable PrintStream stdout) {
        // First: nothing is written to the work directory, nor a thread started, before it is this simulator's alone.
        this.workDir = WorkDirLock.take(properties.effectiveWorkDir(), clock.instant());
        this.properties = properties;
        this.clock = clock;
        this.lifecycleExecutor = SerialExecutor.start("simulator-lifecycle-" + properties.port());
        this.lifecycle = Schedulers.fromExecutorService(lifecycleExecutor);
        this.loops = LoopResources.create("vllm-sim-" + properties.port(), 2, true);
        this.model = new SimulatedModel(
                properties.model().eosEvery(), properties.model().batchVariance());
        this.faults = new FaultSet(clock);
        PrintStream echo = properties.logToStdout() ? stdout : null;
        this.engineLog = new EngineLog(
                properties.effectiveLogFile(),
                echo,
                clock,
                properties.deployment(),
                "simulator-log-" + properties.port());
        this.daemonLog = new EngineLog(
                properties.preload().logFile() != null
                        ? properties.preload().logFile()
                        : properties.effectiveWorkDir().resolve("preload-daemon.log"),
                echo,
                clock,
                properties.deployment(),
                "simulator-daemon-log-" + properties.port());
        this.gpu = new GpuMemoryModel(properties);
        this.daemon = new WeightCacheDaemon(properties, daemonLog, clock, timer, lifecycle, loops, gpu);
        this.snapshot = new SnapshotArtifacts(
                properties.snapshot().dir() != null
                        ? properties.snapshot().dir()
                        : properties.effectiveWorkDir().resolve("snapshot"),
                json,
                clock);
        this.engine = new SimulatedEngine(
                properties, model, faults, daemon, snapshot, engineLog, json, clock, timer, lifecycle, loops, gpu);
        this.timer = timer;
        this.traffic = new Traffic(properties, loops, timer);
    }

    private final Scheduler timer;

    /**
     * Creates the snapshot artifacts, starts the preload daemon when enabled, binds the admin API, begins the first
     * engine start and then the scenario, if any. Completes once the first start is under way, not when the engine
     * listens.
     */
    public Mono<Void> start() {
        String location = properties.scenario();
        Scenario scenario = location != null ? Scenario.load(location).scaled(properties.timeScale()) : null;
        if (scenario != null) {
            requireSleepMode(scenario, properties);
        }
        return Mono.fromRunnable(() -> {
                    snapshot.create(properties, model, engine.engineArgv(), properties.pid() - 50);
                    engine.containerStarted();
                })
                .subscribeOn(lifecycle)
                .then(properties.preload().enabled() ? daemon.start(null, null, null) : Mono.empty())
                .then(AdminApi.bind(this))
                .doOnNext(server -> admin = server)
                .then(engine.restart(properties.startup()))
                .then(Mono.fromRunnable(() -> {
                    logger.info(
                            "vLLM simulator: engine on {}:{}, admin on {}:{}, {} start, log {}",
                            properties.host(),
                            properties.port(),
                            properties.host(),
                            properties.adminPort(),
                            properties.startup().value(),
                            properties.effectiveLogFile());
                    if (scenario != null) {
                        runScenario(scenario);
                    }
                }));
    }

    /** Runs a scenario from its first step, replacing any running one. */
    public void runScenario(Scenario scenario) {
        Flux<Void> round = Flux.range(0, scenario.steps().size())
                .concatMap(
                        i -> {
                            Scenario.Step step = scenario.steps().get(i);
                            return Mono.delay(step.after(), timer).then(Mono.defer(() -> {
                                ScenarioProgress previous = scenarioProgress.get();
                                int roundNumber = previous == null ? 1 : previous.round() + (i == 0 ? 1 : 0);
                                scenarioProgress.set(new ScenarioProgress(
                                        scenario.name(),
                                        i + 1,
                                        scenario.steps().size(),
                                        i == 0 && previous == null ? 1 : roundNumber,
                                        step.note()));
                                if (step.note() != null) {
                                    logger.info(
                                            "scenario {} step {}/{}: {}",
                                            scenario.name(),
                                            i + 1,
                                            scenario.steps().size(),
                                            step.note());
                                }
                                return apply(step.action()).onErrorResume(error -> {
                                    logger.warn(
                                            "scenario {} step {} failed: {}",
                                            scenario.name(),
                                            i + 1,
                                            error.getCause() == null
                                                    ? error.getMessage()
                                                    : error.getMessage() + " (" + error.getCause() + ")");
                                    return Mono.empty();
                                });
                            }));
                        },
                        0);
        scenarioProgress.set(null);
        scenarioRun.update((scenario.repeat() ? round.repeat() : round).subscribe());
    }

    Mono<Void> apply(Scenario.Action action) {
        return switch (action) {
            case Scenario.Action.Restart restart -> engine.restart(restart.path());
            case Scenario.Action.SetFault set ->
                Mono.fromRunnable(() -> setFault(set.fault(), set.enabled(), set.scope()));
            case Scenario.Action.ClearFaults clear -> Mono.fromRunnable(faults::clear);
            case Scenario.Action.Crash crash -> engine.crash("simulated crash");
            case Scenario.Action.Stop stop -> engine.stop();
            case Scenario.Action.Daemon d ->
                d.start() ? daemon.start(d.checkpoint(), d.layout(), engine.revision()) : daemon.stop();
            case Scenario.Action.Switch s -> Mono.fromRunnable(() -> engine.switchRevision(s.revision()));
            case Scenario.Action.Traffic t -> Mono.fromRunnable(() -> traffic.set(t.clients()));
            case Scenario.Action.Log l -> Mono.fromRunnable(l.rotate() ? engineLog::rotate : engineLog::truncate);
            case Scenario.Action.Sleep sleep ->
                sleepMode(instance -> instance.sleep().sleep(sleep.level()));
            case Scenario.Action.Wake wake ->
                sleepMode(instance -> instance.sleep().wakeUp(wake.tags().isEmpty() ? null : wake.tags()));
            case Scenario.Action.ReloadWeights reload ->
                sleepMode(instance -> Mono.fromRunnable(instance.sleep()::reloadWeights));
            case Scenario.Action.Note note -> Mono.empty();
        };
    }

    /** A sleep-mode call to the engine that serves now, as its endpoint would be called; nothing while none serves. */
    private Mono<Void> sleepMode(java.util.function.Function<EngineInstance, Mono<Void>> call) {
        return Mono.defer(() -> {
            EngineInstance instance = engine.current();
            return instance == null ? Mono.empty() : call.apply(instance);
        });
    }

    /** A scenario that sleeps or wakes the engine needs sleep mode, or its endpoints would answer 404. */
    static void requireSleepMode(Scenario scenario, SimulatorProperties properties) {
        if (properties.sleepMode()) {
            return;
        }
        for (int i = 0; i < scenario.steps().size(); i++) {
            Scenario.Action action = scenario.steps().get(i).action();
            if (action instanceof Scenario.Action.Sleep
                    || action instanceof Scenario.Action.Wake
                    || action instanceof Scenario.Action.ReloadWeights) {
                throw new IllegalArgumentException("readygate.simulator.scenario: " + scenario.name() + " step "
                        + (i + 1) + " uses sleep mode, which needs readygate.simulator.sleep-mode=true");
            }
        }
    }

    void setFault(Fault fault, boolean enabled, FaultSet.Scope scope) {
        if (enabled) {
            faults.enable(fault, scope);
        } else {
            faults.disable(fault);
        }
        logger.info(
                "vLLM simulator: fault {} {}",
                fault.value(),
                enabled ? "on (" + scope.name().toLowerCase(java.util.Locale.ROOT) + ")" : "off");
        if (enabled && fault == Fault.CRASH_LOOP && engine.phase() == SimulatedEngine.Phase.SERVING) {
            engine.crash("CUDA error: an illegal memory access was encountered").subscribe();
        }
    }

    public Mono<Void> restart(StartupPath path) {
        return engine.restart(path);
    }

    /** Waits until every log line written so far is in the log files (tests and shutdown only). */
    public void flushLogs() {
        engineLog.flush();
        daemonLog.flush();
        gpu.flush();
    }

    @Nullable
    ScenarioProgress scenarioProgress() {
        return scenarioProgress.get();
    }

    LoopResources loops() {
        return loops;
    }

    /** The simulated GPU as the DCGM exporter shows it. */
    String dcgmMetrics() {
        return gpu.dcgmMetrics();
    }

    GpuMemoryModel gpu() {
        return gpu;
    }

    SimulatedEngine engine() {
        return engine;
    }

    WeightCacheDaemon daemon() {
        return daemon;
    }

    FaultSet faults() {
        return faults;
    }

    SnapshotArtifacts snapshot() {
        return snapshot;
    }

    EngineLog engineLog() {
        return engineLog;
    }

    SimulatorProperties properties() {
        return properties;
    }

    JsonMapper json() {
        return json;
    }

    SimulatedModel model() {
        return model;
    }

    /**
     * Whether the engine, right now, would serve a representative request correctly: it listens, no fault that blocks
     * serving is active, it serves the configured checkpoint, and it is warmed up (the first
     * {@code timing.warmup-requests} requests after a start, which pay the warm-up penalty, have been admitted).
     */
    public boolean ableToServe() {
        EngineInstance instance = engine.current();
        return instance != null
                && !faults.anyBlocking()
                && !instance.sleep().sleeping()
                && instance.sleep().weightsIntact()
                && instance.servedCheckpoint().equals(properties.model().checkpoint())
                && instance.served().get() >= properties.timing().warmupRequests();
    }

    /**
     * Since when {@link #ableToServe()} has been true, or null while it is false: the latest of the instant the engine
     * began listening, the instant the last blocking fault was cleared, and the instant the last warm-up request was
     * admitted.
     */
    public @Nullable Instant ableToServeSince() {
        EngineInstance instance = engine.current();
        Instant listening = engine.listeningSince();
        if (!ableToServe() || instance == null || listening == null) {
            return null;
        }
        Instant since = latest(listening, faults.lastBlockingCleared());
        return properties.timing().warmupRequests() > 0
                ? latest(since, instance.warmedUpAt().get())
                : since;
    }

    private static Instant latest(Instant instant, @Nullable Instant other) {
        return other != null && other.isAfter(instant) ? other : instant;
    }

    /** The state {@code GET /admin/state} answers. */
    Map<String, Object> state() {
        Map<String, Object> state = new LinkedHashMap<>();
        SimulatedEngine.StartInfo instance = engine.latestStart();
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("phase", engine.phase().name().toLowerCase(java.util.Locale.ROOT));
        e.put("start", instance == null ? 0 : instance.number());
        e.put("requestedPath", instance == null ? null : instance.requested().value());
        e.put("path", instance == null ? null : instance.path().value());
        e.put("fallbackReason", instance == null ? null : instance.fallbackReason());
        e.put("pid", instance == null ? null : instance.pid());
        e.put(
                "processStartTime",
                instance == null ? null : instance.processStart().toString());
        e.put("listeningSince", string(engine.listeningSince()));
        e.put("stoppedAt", string(engine.stoppedAt()));
        e.put("servedCheckpoint", instance == null ? null : instance.servedCheckpoint());
        e.put("configuredCheckpoint", properties.model().checkpoint());
        e.put("ableToServe", ableToServe());
        e.put("ableToServeSince", string(ableToServeSince()));
        e.put("lastFailure", engine.lastFailure());
        e.put("container", engine.container());
        e.put("trafficClients", traffic.streams());
        EngineInstance serving = engine.current();
        if (properties.sleepMode() && serving != null) {
            Map<String, Object> sleep = new LinkedHashMap<>();
            sleep.put("level", serving.sleep().level());
            sleep.put("sleepingTags", serving.sleep().sleepingTags());
            sleep.put("weights", serving.sleep().weights());
            e.put("sleep", sleep);
        }
        state.put("engine", e);
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("phase", daemon.phase().name().toLowerCase(java.util.Locale.ROOT));
        d.put("checkpoint", daemon.checkpoint());
        d.put("layout", daemon.layout());
        d.put("released", daemon.released());
        d.put("socket", daemon.socketPath().toString());
        d.put("healthPort", properties.preload().healthPort());
        d.put("servingSince", string(daemon.servingSince()));
        state.put("daemon", d);
        state.put(
                "faults",
                faults.active().stream()
                        .map(a -> Map.of(
                                "name",
                                a.fault().value(),
                                "scope",
                                a.scope().name().toLowerCase(java.util.Locale.ROOT),
                                "since",
                                a.since().toString()))
                        .toList());
        Map<String, Object> s = new LinkedHashMap<>();
        SnapshotArtifacts.Manifest manifest = snapshot.manifest();
        s.put("dir", snapshot.dir().toString());
        s.put("oracleTokenIds", manifest == null ? null : manifest.oracleTokenIds());
        s.put("oracleText", manifest == null ? null : manifest.oracleText());
        s.put("oracleLogprob", manifest == null ? null : manifest.oracleLogprob());
        state.put("snapshot", s);
        ScenarioProgress progress = scenarioProgress.get();
        state.put("scenario", progress);
        state.put(
                "ports",
                Map.of(
                        "engine",
                        properties.port(),
                        "admin",
                        properties.adminPort(),
                        "daemonHealth",
                        properties.preload().healthPort()));
        state.put("logFile", properties.effectiveLogFile().toString());
        Map<String, Object> memory = new LinkedHashMap<>();
        memory.put("usedMiB", gpu.byOwner());
        memory.put("nvidiaSmi", gpu.script().toString());
        state.put("gpu", memory);
        return state;
    }

    private static @Nullable String string(@Nullable Instant instant) {
        return instant == null ? null : instant.toString();
    }

    @Override
    public void close() {
        try {
            scenarioRun.dispose();
            traffic.close();
            engine.close();
            daemon.close();
            DisposableServer server = admin;
            if (server != null) {
                server.disposeNow();
            }
            engineLog.close();
            daemonLog.close();
            lifecycle.dispose();
            loops.disposeLater(java.time.Duration.ZERO, java.time.Duration.ofSeconds(2))
                    .block(java.time.Duration.ofSeconds(5));
            lifecycleExecutor.shutdownNow();
            // Last: a start or stop still running on the loops above may publish GPU memory once more.
            gpu.close();
        } finally {
            // Once nothing writes there any more: another simulator may take the directory.
            workDir.close();
        }
    }
}
