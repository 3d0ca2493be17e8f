package dev.readygate.simulator;

import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.netty.resources.LoopResources;
import tools.jackson.databind.json.JsonMapper;

/**
 * The simulated engine's process lifecycle: a start runs one of the four restart paths with its log lines and
 * duration while the port refuses connections (vLLM binds without listening until the engine is initialized), then
 * listens; a stop or crash closes the listener and every open connection. Starts, stops and crashes are serialized
 * on the lifecycle scheduler; a newer request supersedes a start still in progress.
 */
final class SimulatedEngine implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(SimulatedEngine.class);

    /** What the engine process is doing. */
    enum Phase {
        /** No process: the port refuses connections. */
        STOPPED,
        /** Process started, engine initializing: the port still refuses connections. */
        LOADING,
        /** Listening and answering. */
        SERVING
    }

    private final SimulatorProperties properties;
    // The revision served from the next start on: a rollout switches it (the scenario's `switch`).
    private volatile String revision;
    private final SimulatedModel model;
    private final FaultSet faults;
    private final WeightCacheDaemon daemon;
    private final SnapshotArtifacts snapshot;
    private final EngineLog log;
    private final EngineLines lines;
    private final JsonMapper json;
    private final Clock clock;
    private final Scheduler timer;
    private final Scheduler lifecycle;
    private final LoopResources loops;
    private final GpuMemoryModel gpu;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.STOPPED);
    private final AtomicInteger starts = new AtomicInteger();
    private final AtomicInteger nextPid;
    private final Disposable.Swap pending = Disposables.swap();
    // The open connections of the listener that serves now; one group per listener, closed with it for good: a
    // connection accepted while its listener closes is closed when it registers, as a dead process's would be.
    private volatile ChannelGroup connections = newConnections();
    // Whether the listener that serves now was closed: a request on any of its connections is then never answered (the
    // connection is dropped), whatever the channel group caught; a dead process answers nothing.
    private volatile AtomicBoolean closed = new AtomicBoolean();
    private volatile @Nullable EngineInstance current;
    private volatile @Nullable DisposableServer server;
    private volatile @Nullable Instant listeningSince;
    private volatile @Nullable Instant stoppedAt;
    private volatile StartupPath lastRequested;
    private volatile @Nullable String lastFailure;
    private volatile @Nullable StartContext starting;
    private volatile @Nullable String container;

    /** The engine container's start id file, in the work directory. */
    static final String CONTAINER_FILE = "engine-container.json";

    SimulatedEngine(
            SimulatorProperties properties,
            SimulatedModel model,
            FaultSet faults,
            WeightCacheDaemon daemon,
            SnapshotArtifacts snapshot,
            EngineLog log,
            JsonMapper json,
            Clock clock,
            Scheduler timer,
            Scheduler lifecycle,
            LoopResources loops,
            GpuMemoryModel gpu) {
        this.revision = properties.model().revision();
        this.properties = properties;
        this.model = model;
        this.faults = faults;
        this.daemon = daemon;
        this.snapshot = snapshot;
        this.log = log;
        this.lines = properties.sglang()
                ? new SglangLines(properties, log, () -> daemon.socketPath().toString())
                : new VllmLines(properties.deployment(), log);
        this.json = json;
        this.clock = clock;
        this.timer = timer;
        this.lifecycle = lifecycle;
        this.loops = loops;
        this.gpu = gpu;
        this.nextPid = new AtomicInteger(properties.pid());
        this.lastRequested = properties.startup();
    }

    /**
     * Stops the engine if it runs, then starts it along {@code path}. Completes when the start is under way (the
     * listener comes back after the path's duration); a later start or stop cancels it.
     */
    Mono<Void> restart(StartupPath path) {
        return stopProcess()
                .then(Mono.fromRunnable(() -> begin(path)).subscribeOn(lifecycle))
                .then();
    }

    /** Stops the engine for good (SIGTERM): no automatic restart. */
    Mono<Void> stop() {
        return stopProcess();
    }

    /** The engine process dies: listener and connections gone; restarted after a delay if auto-restart is on. */
    Mono<Void> crash(String reason) {
        return Mono.fromRunnable(() -> {
                    EngineInstance instance = current;
                    if (instance != null) {
                        lines.fatalError(instance.pid(), reason);
                    }
                })
                .subscribeOn(lifecycle)
                .then(closeListener(true))
                .then(Mono.fromRunnable(this::scheduleAutoRestart));
    }

    private void scheduleAutoRestart() {
        if (!properties.autoRestart()) {
            return;
        }
        StartupPath path = lastRequested;
        // The container restart policy starts a new container, which writes its start id before the engine starts.
        pending.update(Mono.delay(properties.autoRestartDelay(), timer)
                .publishOn(lifecycle)
                .subscribe(tick -> {
                    containerStarted();
                    begin(path);
                }));
    }

    /**
     * A new container starts: it writes its start id as the chart's engine entrypoint does
     * ({@code engine-container.json} in the work directory, {@code {"container_start": "<id>", "started_at": ...}}).
     * A restart through the admin API or a scenario restarts the engine process in the same container. Blocking
     * file I/O: on the lifecycle scheduler.
     */
    void containerStarted() {
        String id = UUID.randomUUID().toString();
        Path file = properties.effectiveWorkDir().resolve(CONTAINER_FILE);
        try {
            Files.createDirectories(file.getParent());
            Path temporary = file.resolveSibling("." + CONTAINER_FILE + ".tmp");
            Files.writeString(
                    temporary, "{\"container_start\": \"" + id + "\", \"started_at\": \"" + clock.instant() + "\"}\n");
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            container = id;
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot write " + file, ex);
        }
    }

    /** The container's start id, once one was written. */
    @Nullable
    String container() {
        return container;
    }

    private Mono<Void> stopProcess() {
        return Mono.fromRunnable(() -> {
                    pending.update(null);
                    EngineInstance instance = current;
                    if (instance != null && phase.get() != Phase.STOPPED) {
                        lines.shuttingDown(instance.pid());
                    }
                })
                .subscribeOn(lifecycle)
                .then(Mono.defer(() -> phase.get() == Phase.SERVING
                        ? Mono.delay(properties.timing().shutdownTime(), timer).then()
                        : Mono.empty()))
                .then(closeListener(false));
    }

    private static ChannelGroup newConnections() {
        return new DefaultChannelGroup("vllm-simulator-connections", GlobalEventExecutor.INSTANCE, true);
    }

    private Mono<Void> closeListener(boolean crashed) {
        return Mono.defer(() -> {
            DisposableServer listening = server;
            server = null;
            listeningSince = null;
            if (phase.getAndSet(Phase.STOPPED) != Phase.STOPPED) {
                stoppedAt = clock.instant();
                gpu.engineStopped();
            }
            if (crashed) {
                lastFailure = "crashed";
            }
            closed.set(true);
            connections.close();
            if (listening == null) {
                return Mono.empty();
            }
            listening.dispose();
            return listening.onDispose();
        });
    }

    /** Runs on the lifecycle scheduler: the process starts and walks the path's timeline. */
    private void begin(StartupPath requested) {
        lastRequested = requested;
        lastFailure = null;
        int pid = nextPid.getAndAdd(lines.pidsPerStart());
        phase.set(Phase.LOADING);
        StartContext context = new StartContext(starts.incrementAndGet(), requested, pid, clock.instant());
        context.failing = faults.has(Fault.STARTUP_FAILURE) && requested != StartupPath.SNAPSHOT_RESTORE;
        boolean configError = faults.has(Fault.CONFIG_ERROR) && requested != StartupPath.SNAPSHOT_RESTORE;
        starting = context;
        List<Step> steps = configError
                ? configErrorSteps(pid)
                : switch (requested) {
                    case COLD -> coldSteps(pid, properties.loadTime(), false, context.kvTokens, context.failing);
                    case PRELOAD_HIT, PRELOAD_FALLBACK -> preloadSteps(pid, requested);
                    case SNAPSHOT_RESTORE -> restoreSteps();
                };
        pending.update(header(pid, requested, configError)
                .then(runSteps(steps))
                .then(Mono.defer(() -> listen(context)))
                .subscribe(null, error -> {
                    lastFailure = error.getMessage();
                    phase.set(Phase.STOPPED);
                    if (error instanceof StartupFailure) {
                        // vLLM wrote why; the process exited, and a container restarts it.
                        logger.warn(
                                "vLLM simulator: start {} ({}) died before serving: {}",
                                context.number,
                                requested.value(),
                                error.getMessage());
                        scheduleAutoRestart();
                        return;
                    }
                    String reason = error.getMessage() != null ? error.getMessage() : error.toString();
                    if (requested == StartupPath.SNAPSHOT_RESTORE) {
                        lines.restoreFailure(reason);
                    } else {
                        lines.startupFailure(pid, reason);
                    }
                    // In the simulator's own log too, not only in the vLLM log file it writes.
                    logger.warn("vLLM simulator: start {} ({}) failed", context.number, requested.value(), error);
                }));
    }

    /** What a path found out while it ran: the path it took and the weights it serves. */
    private final class StartContext {
        final int number;
        final StartupPath requested;
        volatile int pid;
        final Instant processStart;
        volatile SnapshotArtifacts.@Nullable Manifest manifest;
        volatile StartupPath taken;
        volatile @Nullable String fallbackReason;
        volatile String checkpoint;
        // Under startup-failure: this start dies while profiling, before it serves.
        volatile boolean failing;
        // Sized when the process starts, from the memory left (a leak across restarts can shrink it).
        final int kvTokens = gpu.kvCacheTokens();

        StartContext(int number, StartupPath requested, int pid, Instant processStart) {
            this.number = number;
            this.requested = requested;
            this.pid = pid;
            this.processStart = processStart;
            this.taken = requested;
            this.checkpoint = properties.model().checkpoint();
        }
    }

    /** One log-emitting step of a start timeline, {@code after} the previous one. */
    private record Step(Duration after, Runnable action) {}

    /** A start that died before serving, after vLLM logged why. */
    private static final class StartupFailure extends RuntimeException {
        StartupFailure(String reason) {
            super(reason, null, false, false);
        }
    }

    private Mono<Void> header(int pid, StartupPath requested, boolean configError) {
        return Mono.fromRunnable(() -> {
            if (requested == StartupPath.SNAPSHOT_RESTORE) {
                return;
            }
            lines.header(
                    pid, properties.vllmVersion(), properties.model().root(), nonDefaultArgs(requested, configError));
        });
    }

    /**
     * Under {@code config-error}: the API server's configuration check raises right after the arguments, before any
     * engine core exists, and the process exits.
     */
    private List<Step> configErrorSteps(int pid) {
        return List.of(new Step(properties.loadTime().multipliedBy(2).dividedBy(100), () -> {
            lines.configError(pid, properties.hfToken());
            throw new StartupFailure(VllmLines.CONFIG_ERROR);
        }));
    }

    private String nonDefaultArgs(StartupPath requested, boolean configError) {
        SimulatorProperties.Model m = properties.model();
        StringBuilder args = new StringBuilder("{'model_tag': '")
                .append(m.root())
                .append("', 'host': '")
                .append(properties.host())
                .append("', 'port': ")
                .append(properties.port())
                .append(", 'model': '")
                .append(m.root())
                .append("', 'revision': '")
                .append(revision)
                .append("', 'max_model_len': ")
                .append(m.maxModelLen());
        if (!m.servedModelName().equals(m.root())) {
            args.append(", 'served_model_name': ['").append(m.servedModelName()).append("']");
        }
        SimulatorProperties.Deployment deployment = properties.deployment();
        if (deployment.distributedExecutorBackend() != SimulatorProperties.Deployment.ExecutorBackend.MP) {
            args.append(", 'distributed_executor_backend': '")
                    .append(deployment.distributedExecutorBackend().vllmName())
                    .append("'");
        }
        if (deployment.pipelineParallelSize() > 1) {
            args.append(", 'pipeline_parallel_size': ").append(deployment.pipelineParallelSize());
        }
        if (deployment.tensorParallelSize() > 1) {
            args.append(", 'tensor_parallel_size': ").append(deployment.tensorParallelSize());
        }
        if (deployment.dataParallelSize() > 1) {
            args.append(", 'data_parallel_size': ").append(deployment.dataParallelSize());
        }
        if (properties.sleepMode()) {
            // --enable-sleep-mode: EngineArgs.enable_sleep_mode, after the parallel sizes in the dataclass.
            args.append(", 'enable_sleep_mode': True");
        }
        if (deployment.speculativeDecoding()) {
            args.append(", 'speculative_config': {'method': 'eagle3', 'model': '")
                    .append(drafter())
                    .append("', 'num_speculative_tokens': 3}");
        }
        if (requested == StartupPath.PRELOAD_HIT || requested == StartupPath.PRELOAD_FALLBACK) {
            args.append(", 'load_format': 'ipc_cache', 'model_loader_extra_config': {");
            if (properties.preload().socketDir() != null) {
                args.append("'socket_dir': '").append(daemon.socketDir()).append("', ");
            }
            args.append("'mode': '")
                    .append(properties.preload().mode().name().toLowerCase(Locale.ROOT))
                    .append("'}");
        } else if (deployment.loadFormat() != SimulatorProperties.Deployment.LoadFormat.AUTO) {
            args.append(", 'load_format': '")
                    .append(deployment.loadFormat().vllmName())
                    .append("'");
        }
        if (configError) {
            // An AWQ kernel for a checkpoint without an AWQ config: VllmConfig's validation refuses it.
            args.append(", 'quantization': 'awq_marlin'");
        }
        // vLLM logs its arguments as given, secrets included: readygate must redact them.
        if (properties.apiKey() != null) {
            args.append(", 'api_key': ['").append(properties.apiKey()).append("']");
        }
        if (properties.hfToken() != null) {
            args.append(", 'hf_token': '").append(properties.hfToken()).append("'");
        }
        return args.append('}').toString();
    }

    /** The revision the engine serves (from its next start on, after a switch). */
    String revision() {
        return revision;
    }

    /** Serves another revision from the next start on; the running engine keeps serving the old one. */
    void switchRevision(String newRevision) {
        this.revision = newRevision;
    }

    /** Engine argv as {@code engine_argv} in a snapshot manifest records it. */
    List<String> engineArgv() {
        SimulatorProperties.Model m = properties.model();
        return List.of(
                "vllm",
                "serve",
                m.root(),
                "--host",
                properties.host(),
                "--port",
                String.valueOf(properties.port()),
                "--revision",
                revision,
                "--max-model-len",
                String.valueOf(m.maxModelLen()),
                "--served-model-name",
                m.servedModelName());
    }

    private List<Step> coldSteps(int pid, Duration total, boolean afterFallback, int kvTokens, boolean failing) {
        SimulatorProperties.Model m = properties.model();
        int core = pid + 1;
        List<Step> steps = new ArrayList<>();
        if (!afterFallback) {
            steps.add(initializing(core, false));
            steps.add(new Step(total.multipliedBy(5).dividedBy(100), () -> lines.startingToLoad(core, m.root())));
        }
        double loadSeconds = seconds(total) * 0.45;
        steps.add(new Step(
                total.multipliedBy(45).dividedBy(100),
                () -> lines.loaded(core, loadSeconds, m.weightsGib(), loadSeconds + 0.05 * seconds(total))));
        steps.addAll(initSteps(pid, total, kvTokens, failing));
        return steps;
    }

    /** The engine cores' first line, with their config (abridged). */
    private Step initializing(int core, boolean ipcCache) {
        SimulatorProperties.Model m = properties.model();
        SimulatorProperties.Deployment deployment = properties.deployment();
        String loadFormat = ipcCache ? "ipc_cache" : deployment.loadFormat().vllmName();
        String speculative = deployment.speculativeDecoding()
                ? "SpeculativeConfig(method='eagle3', model='" + drafter() + "', num_spec_tokens=3)"
                : "None";
        String config = "model='" + m.root() + "', speculative_config=" + speculative + ", tokenizer='" + m.root()
                + "', revision=" + revision + ", load_format=" + loadFormat + ", max_seq_len=" + m.maxModelLen()
                + ", served_model_name=" + m.servedModelName();
        return new Step(Duration.ZERO, () -> lines.initializing(core, properties.vllmVersion(), config));
    }

    /** The speculative-decoding drafter (an EAGLE-3 head). */
    private String drafter() {
        return properties.model().root() + "-EAGLE3";
    }

    /**
     * Profiling, KV cache and warm-up: the part of engine init that every non-snapshot start runs; under {@code
     * startup-failure}, profiling runs out of memory instead and the start dies.
     */
    private List<Step> initSteps(int pid, Duration total, int kvTokens, boolean failing) {
        SimulatorProperties.Model m = properties.model();
        int core = pid + 1;
        double kvGib = kvTokens * 112.0 / 1024 / 1024;
        Step compile = new Step(
                total.multipliedBy(20).dividedBy(100),
                () -> lines.compiling(core, seconds(total) * 0.1, seconds(total) * 0.08));
        if (failing) {
            String reason = properties.faults().startupFailure();
            return List.of(compile, new Step(total.multipliedBy(5).dividedBy(100), () -> {
                lines.startupFailure(pid, reason);
                throw new StartupFailure(reason);
            }));
        }
        return List.of(
                compile,
                new Step(
                        total.multipliedBy(15).dividedBy(100),
                        () -> lines.kvCache(core, kvGib, kvTokens, m.maxModelLen())),
                new Step(
                        total.multipliedBy(5).dividedBy(100),
                        () -> lines.graphsCaptured(core, seconds(total) * 0.05, 0.51)),
                new Step(
                        total.multipliedBy(5).dividedBy(100),
                        () -> lines.initEngine(core, seconds(total) * 0.45, seconds(total) * 0.2)));
    }

    private List<Step> preloadSteps(int pid, StartupPath requested) {
        SimulatorProperties.Model m = properties.model();
        int core = pid + 1;
        Duration hitTime = properties.timing().preloadHitLoadTime();
        Duration detect = properties.timing().fallbackDetectTime();
        List<Step> steps = new ArrayList<>();
        steps.add(initializing(core, true));
        steps.add(new Step(detect, () -> {
            StartContext context = starting;
            WeightCacheDaemon.Lookup lookup = requested == StartupPath.PRELOAD_FALLBACK
                    ? new WeightCacheDaemon.Lookup.Unusable("Cannot connect to weight cache daemon at "
                            + daemon.socketPath() + ": [Errno 111] Connection refused")
                    : daemon.lookup(m.layout(), revision);
            switch (lookup) {
                case WeightCacheDaemon.Lookup.Hit hit -> {
                    lines.mapped(
                            core,
                            hit.tensors(),
                            properties.preload().mode().name().toLowerCase(Locale.ROOT),
                            properties.preload(),
                            m.weightsGib(),
                            seconds(hitTime) * 0.2);
                    if (context != null) {
                        context.taken = StartupPath.PRELOAD_HIT;
                        context.checkpoint = hit.checkpoint();
                    }
                }
                case WeightCacheDaemon.Lookup.Unusable unusable -> {
                    lines.cacheUnusable(core, unusable.reason());
                    if (context != null) {
                        context.taken = StartupPath.PRELOAD_FALLBACK;
                        context.fallbackReason = unusable.reason();
                    }
                }
            }
        }));
        return steps;
    }

    private List<Step> restoreSteps() {
        Duration total = properties.timing().snapshotRestoreTime();
        // vLLM's snapshot controller and restored server make no log calls: the restore itself is silent.
        return List.of(new Step(total.multipliedBy(80).dividedBy(100), () -> {
            SnapshotArtifacts.Manifest manifest = snapshot.read();
            // Identity is validated before CRIU runs, field by field (reference §5.2, §5.3).
            if (!manifest.vllmVersion().equals(properties.vllmVersion())) {
                throw new IllegalStateException("SnapshotCompatibilityError: snapshot mismatch: vllm_version");
            }
            if (!manifest.gpuUuid().equals(properties.model().gpuUuid())) {
                throw new IllegalStateException("SnapshotCompatibilityError: snapshot mismatch: gpu_uuid");
            }
            if (!manifest.driverVersion().equals(properties.model().driverVersion())) {
                throw new IllegalStateException("SnapshotCompatibilityError: snapshot mismatch: driver_version");
            }
            StartContext context = starting;
            if (context != null) {
                context.checkpoint = manifest.checkpoint();
                // CRIU restores the captured process ids.
                context.pid = manifest.pid();
                context.manifest = manifest;
            }
        }));
    }

    private Mono<Void> listen(StartContext context) {
        return Mono.defer(() -> {
                    if (context.requested != StartupPath.SNAPSHOT_RESTORE
                            && context.taken != StartupPath.PRELOAD_HIT
                            && context.requested != StartupPath.COLD) {
                        // A fallback loads from disk like a cold start, after the failed cache attempt.
                        return coldTail(context);
                    }
                    if (context.taken == StartupPath.PRELOAD_HIT) {
                        return runSteps(initSteps(
                                context.pid,
                                properties.timing().preloadHitLoadTime(),
                                context.kvTokens,
                                context.failing));
                    }
                    return Mono.empty();
                })
                .then(Mono.defer(() -> bind(context)));
    }

    private Mono<Void> coldTail(StartContext context) {
        return runSteps(coldSteps(context.pid, properties.loadTime(), true, context.kvTokens, context.failing));
    }

    private Mono<Void> runSteps(List<Step> steps) {
        Mono<Void> timeline = Mono.empty();
        for (Step step : steps) {
            timeline = timeline.then(
                    Mono.delay(step.after(), timer).publishOn(lifecycle).then(Mono.fromRunnable(step.action())));
        }
        return timeline;
    }

    private Mono<Void> bind(StartContext context) {
        EngineMetrics metrics = new EngineMetrics(
                properties.model().servedModelName(),
                context.processStart.toEpochMilli() / 1000.0,
                properties.model(),
                context.kvTokens,
                properties.deployment());
        EngineInstance instance = new EngineInstance(
                context.number,
                context.requested,
                context.taken,
                context.fallbackReason,
                context.pid,
                context.processStart,
                context.checkpoint,
                metrics,
                new PrefixCache(context.kvTokens),
                new AtomicInteger(),
                new AtomicReference<>(),
                new BatchSlots(properties.model().maxNumSeqs(), metrics.waiting),
                new EngineSleep(
                        lines,
                        gpu,
                        properties,
                        timer,
                        metrics,
                        context.pid,
                        context.kvTokens,
                        () -> faults.has(Fault.WAKE_CORRUPTS)),
                properties.sglang() ? clock.instant().plus(properties.timing().sglangWarmup()) : Instant.MIN);
        boolean restored = context.requested == StartupPath.SNAPSHOT_RESTORE;
        if (!restored) {
            lines.serving(context.pid, "http://" + properties.host() + ":" + properties.port());
        } else {
            restoredLog(context.pid, "Starting vLLM server on http://" + properties.host() + ":" + properties.port());
            restoredLog(context.pid, "Application startup complete.");
        }
        EngineApi api = new EngineApi(properties, model, faults, json, clock, timer, instance);
        ChannelGroup group = newConnections();
        connections = group;
        AtomicBoolean listenerClosed = new AtomicBoolean();
        closed = listenerClosed;
        HttpServerRoutes routes = HttpServerRoutes.newRoutes();
        api.routes(routes);
        return HttpServer.create()
                .runOn(loops)
                .host(properties.host())
                .port(properties.port())
                .doOnChannelInit((observer, channel, remote) -> group.add(channel))
                .handle((request, response) -> listenerClosed.get()
                        ? Mono.<Void>fromRunnable(() -> request.withConnection(Connection::dispose))
                        : Mono.from(routes.apply(request, response)))
                .bind()
                .flatMap(bound -> Mono.fromRunnable(() -> serve(bound, context, instance, restored))
                        .subscribeOn(lifecycle)
                        // Cancelled before it served (a newer stop or start): the listener must not outlive the start.
                        // Once it serves, closing it is closeListener's.
                        .doOnCancel(() -> {
                            if (server != bound) {
                                bound.dispose();
                            }
                        }))
                .then();
    }

    /** Runs on the lifecycle scheduler: the listener is up and the engine serves. */
    private void serve(DisposableServer bound, StartContext context, EngineInstance instance, boolean restored) {
        server = bound;
        current = instance;
        listeningSince = clock.instant();
        phase.set(Phase.SERVING);
        // A cache hit maps the daemon's weights (charged to the daemon); every other path holds its own.
        gpu.engineLoaded(context.pid + 1, context.taken != StartupPath.PRELOAD_HIT, context.kvTokens);
        if (restored) {
            verifyRestore(context, instance);
        }
        if (properties.sglang()) {
            Mono.delay(properties.timing().sglangWarmup(), timer)
                    .publishOn(lifecycle)
                    .subscribe(done -> {
                        if (current == instance) {
                            lines.warmedUp();
                        }
                    });
        }
        if (faults.has(Fault.CRASH_LOOP)) {
            pending.update(Mono.delay(properties.faults().crashLoopUptime(), timer)
                    .then(crash("CUDA error: an illegal memory access was encountered"))
                    .subscribe());
        }
    }

    /**
     * What the snapshot controller does once the listener is up: the oracle request is the first request the
     * restored server serves; a mismatch kills the restored tree (it never falls back to a normal start).
     */
    private void verifyRestore(StartContext context, EngineInstance instance) {
        instance.metrics().preloadServedRequests(properties.snapshot().countersAtRestore());
        SnapshotArtifacts.Manifest manifest = context.manifest;
        SimulatedModel.Token actual = model.start(
                        instance.answeringCheckpoint(faults, properties.faults().wrongCheckpoint()),
                        model.tokenizer().encode(SnapshotArtifacts.ORACLE_PROMPT, false),
                        new SimulatedModel.Sampling(1, 1, false, 0, 0L, 0))
                .next();
        if (manifest != null
                && (!manifest.oracleTokenIds().equals(List.of(actual.id()))
                        || !manifest.oracleText().equals(actual.text())
                        || Math.abs(manifest.oracleLogprob() - actual.logprob()) > 1e-6)) {
            String failure = "snapshot oracle mismatch: expected=(%s, '%s', %s), actual=([%d], '%s', %s)"
                    .formatted(
                            manifest.oracleTokenIds(),
                            manifest.oracleText(),
                            manifest.oracleLogprob(),
                            actual.id(),
                            actual.text(),
                            actual.logprob());
            lines.restoreFailure("SnapshotRestoreError: " + failure);
            pending.update(closeListener(false)
                    .then(Mono.fromRunnable(() -> lastFailure = "SnapshotRestoreError: " + failure))
                    .subscribe());
            return;
        }
        snapshot.markRestored(properties.host(), properties.port(), context.pid, clock.instant());
    }

    private void restoredLog(int pid, String message) {
        switch (properties.snapshot().restoreLog()) {
            case CHILD_LOG -> snapshot.appendChildLog("(APIServer pid=" + pid + ") INFO " + message);
            case ENGINE_LOG -> log.info(lines.api(), pid, "api_server.py:2015", message);
            case NONE -> {}
        }
    }

    private static double seconds(Duration duration) {
        return duration.toNanos() / 1e9;
    }

    Phase phase() {
        return phase.get();
    }

    @Nullable
    EngineInstance current() {
        return phase.get() == Phase.SERVING ? current : null;
    }

    /** The latest start, in progress or done: what {@code /admin/state} shows. */
    @Nullable
    StartInfo latestStart() {
        StartContext context = starting;
        return context == null
                ? null
                : new StartInfo(
                        context.number,
                        context.requested,
                        context.taken,
                        context.fallbackReason,
                        context.pid,
                        context.processStart,
                        context.checkpoint);
    }

    /** A start as far as it got: the path it took so far and the weights it serves. */
    record StartInfo(
            int number,
            StartupPath requested,
            StartupPath path,
            @Nullable String fallbackReason,
            int pid,
            Instant processStart,
            String servedCheckpoint) {}

    @Nullable
    Instant listeningSince() {
        return listeningSince;
    }

    @Nullable
    Instant stoppedAt() {
        return stoppedAt;
    }

    @Nullable
    String lastFailure() {
        return lastFailure;
    }

    @Override
    public void close() {
        pending.dispose();
        connections.close();
        DisposableServer listening = server;
        if (listening != null) {
            listening.disposeNow();
        }
    }
}
