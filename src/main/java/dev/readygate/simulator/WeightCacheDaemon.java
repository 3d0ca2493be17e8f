package dev.readygate.simulator;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;
import reactor.util.retry.Retry;

/**
 * The {@code vllm preload} weight-cache daemon: loads a checkpoint, binds one socket per GPU in its socket
 * directory once the weights are cached, serves {@code GET /health} on its health port (503 while loading, 200
 * once every rank serves), logs its READY line, and outlives engine restarts.
 */
final class WeightCacheDaemon implements AutoCloseable {

    /** The daemon process's state. */
    enum Phase {
        STOPPED,
        LOADING,
        SERVING
    }

    /** What an engine with {@code --load-format ipc_cache} finds when it asks the daemon for its weights. */
    sealed interface Lookup {
        /** The daemon's weights fit the engine's fingerprint and are mapped (they may be another checkpoint's). */
        record Hit(String checkpoint, int tensors) implements Lookup {}

        /** The engine cannot use the cache; {@code reason} is the text of vLLM's fallback warning. */
        record Unusable(String reason) implements Lookup {}
    }

    private final SimulatorProperties properties;
    /** Neither {@code vllm preload} nor its ranks put a {@code (Process pid=N)} prefix on their lines. */
    private static final String NO_PREFIX = "";

    private final EngineLog log;
    private final Clock clock;
    private final Scheduler timer;
    private final Scheduler lifecycle;
    private final LoopResources loops;
    private final GpuMemoryModel gpu;
    private final Path socketDir;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.STOPPED);
    private final Disposable.Swap loading = Disposables.swap();
    private final List<ServerSocketChannel> sockets = new ArrayList<>();
    private volatile String checkpoint;
    private volatile String layout;
    private volatile String revision;
    private volatile boolean released;
    private volatile @Nullable Instant servingSince;
    private volatile @Nullable DisposableServer health;
    // Every start is a new `vllm preload` process with its own pid (and its rank's, the next one), as a real restart
    // is; a restart that leaves the old cache resident is modelled as the same process loading again.
    private final int firstPid;
    private final AtomicInteger starts = new AtomicInteger();
    private volatile int pid;

    WeightCacheDaemon(
            SimulatorProperties properties,
            EngineLog log,
            Clock clock,
            Scheduler timer,
            Scheduler lifecycle,
            LoopResources loops,
            GpuMemoryModel gpu) {
        this.properties = properties;
        this.log = log;
        this.clock = clock;
        this.timer = timer;
        this.lifecycle = lifecycle;
        this.loops = loops;
        this.gpu = gpu;
        SimulatorProperties.Preload preload = properties.preload();
        this.socketDir = preload.socketDir() != null
                ? preload.socketDir()
                : properties.effectiveWorkDir().resolve("weight-cache");
        this.checkpoint = preload.checkpoint() != null
                ? preload.checkpoint()
                : properties.model().checkpoint();
        this.layout =
                preload.layout() != null ? preload.layout() : properties.model().layout();
        this.revision = properties.model().revision();
        this.firstPid = properties.pid() - 100;
        this.pid = firstPid;
    }

    /**
     * Starts the daemon holding the given checkpoint and revision (null keeps the current one); a running daemon is
     * restarted.
     */
    Mono<Void> start(@Nullable String newCheckpoint, @Nullable String newLayout, @Nullable String newRevision) {
        boolean switching = ((newCheckpoint != null && !newCheckpoint.equals(checkpoint))
                        || (newRevision != null && !newRevision.equals(revision)))
                && phase.get() != Phase.STOPPED;
        // A checkpoint switch that leaves the old cache resident keeps its memory held (a stale cache).
        boolean keepResident = switching && properties.memory().staleCacheOnSwitch();
        return stop(keepResident)
                .then(Mono.fromRunnable(() -> {
                    int started = starts.getAndIncrement();
                    if (started > 0 && !keepResident) {
                        pid = firstPid - 2 * started;
                    }
                    if (newCheckpoint != null) {
                        checkpoint = newCheckpoint;
                    }
                    if (newLayout != null) {
                        layout = newLayout;
                    }
                    if (newRevision != null) {
                        revision = newRevision;
                    }
                    released = false;
                    phase.set(Phase.LOADING);
                }))
                .subscribeOn(lifecycle)
                .then(bindHealth())
                .then(Mono.fromRunnable(
                        () -> loading.update(Mono.delay(properties.timing().daemonLoadTime(), timer)
                                .publishOn(lifecycle)
                                .doOnNext(tick -> becomeReady())
                                .subscribe())));
    }

    /**
     * The rank has loaded and cached its shard and binds its socket; then {@code vllm preload} announces READY. The
     * lines are vLLM's (weight_cache/daemon.py: the rank's, with the default loader's {@code Loading weights took};
     * preload.py or, before 0.31, daemon.py: READY), none behind a process prefix: neither {@code vllm preload} nor
     * its spawned ranks decorate their logs.
     */
    private void becomeReady() {
        if (properties.sglang()) {
            becomeReadyAsSglang();
            return;
        }
        Duration took = properties.timing().daemonLoadTime();
        boolean v031 = properties.deployment().formats() == SimulatorProperties.Deployment.Formats.V0_31;
        log.info(
                NO_PREFIX,
                pid + 1,
                "default_loader.py:262",
                "Loading weights took %.2f seconds".formatted(took.toMillis() / 1000.0 * 0.8));
        log.info(
                NO_PREFIX,
                pid + 1,
                "daemon.py:178",
                "Weight cache daemon rank 0 cached %d tensors"
                        .formatted(properties.model().tensors()));
        bindSockets();
        log.info(NO_PREFIX, pid + 1, "daemon.py:206", "Weight cache daemon rank 0 serving on " + socketPath());
        log.bare(NO_PREFIX, pid + 1, List.of("Weight cache daemon rank 0 ready: serving on " + socketPath()));
        gpu.daemonReady(pid);
        servingSince = clock.instant();
        phase.set(Phase.SERVING);
        log.info(
                NO_PREFIX,
                pid,
                v031 ? "preload.py:214" : "daemon.py:402",
                VllmLines.daemonReady(
                        properties.deployment().formats(),
                        // vLLM's words when no socket dir is configured (it uses a per-user temporary one).
                        properties.preload().socketDir() == null ? "the default socket dir" : socketDir.toString()));
    }

    /**
     * SGLang's daemon (python -m sglang.srt.weight_cache.daemon, python/sglang/srt/weight_cache/daemon.py @366325d6):
     * its lines behind its own logging format ({@code "%(asctime)s [Daemon gpu={gpu_id} tp_rank={tp_rank}]
     * %(levelname)s %(message)s"}), "Model loaded from disk in {elapsed:.2f}s", "Exported {n} tensors as IPC handles.
     * Ready to serve.", then {@code serve()}: the socket bound, the {@code .ready} file written ({@code pid=} and
     * {@code config=} its CacheConfig as a Python dict), "Listening on {socket_path}". One rank: the simulator's
     * SGLang is TP 1 per daemon.
     */
    private void becomeReadyAsSglang() {
        Duration took = properties.timing().daemonLoadTime();
        String tag = "[WeightCacheDaemon gpu=0 tp_rank=0] ";
        log.sglangDaemon(
                "INFO", tag + "Loading model from disk: " + properties.model().root());
        log.sglangDaemon("INFO", tag + "Model loaded from disk in %.2fs".formatted(took.toMillis() / 1000.0 * 0.8));
        log.sglangDaemon(
                "INFO",
                tag
                        + "Exported %d tensors as IPC handles. Ready to serve."
                                .formatted(properties.model().tensors()));
        bindSockets();
        if (Files.exists(socketPath())) {
            // serve() writes the file once its socket listens; a socket it cannot bind ends the daemon there.
            writeReadyFile();
        }
        log.sglangDaemon("INFO", "[WeightCacheDaemon gpu=0] Listening on " + socketPath());
        gpu.daemonReady(pid);
        servingSince = clock.instant();
        phase.set(Phase.SERVING);
    }

    /** SGLang's {@code .ready} file, beside its socket: {@code pid=N} and {@code config={...}} (a Python dict). */
    private void writeReadyFile() {
        String config = ("{'model_path': '%s', 'model_arch': '%s', 'tp_size': 1, 'tp_rank': 0, 'pp_size': 1,"
                        + " 'pp_rank': 0, 'dp_size': 1, 'ep_size': 1, 'moe_dp_size': 1, 'moe_dp_rank': 0,"
                        + " 'moe_ep_rank': 0, 'attn_dp_size': 1, 'enable_dp_lm_head': False, 'attn_cp_size': 1,"
                        + " 'moe_dense_tp_size': None, 'moe_a2a_backend': 'none', 'quant_method': '',"
                        + " 'quant_config_hash': '', 'dtype': 'torch.bfloat16', 'revision': '%s',"
                        + " 'device_capability': '9.0', 'torch_version': '2.9.1+cu129'}")
                .formatted(properties.model().root(), layout.split("/", 2)[0], revision);
        try {
            Files.writeString(readyPath(), "pid=" + pid + "\nconfig=" + config + "\n");
        } catch (IOException ex) {
            log.sglangDaemon("ERROR", "[WeightCacheDaemon gpu=0] Cannot write " + readyPath() + ": " + ex.getMessage());
        }
    }

    /** SGLang's ready file: its socket's name with {@code .ready} ({@code SGLANG_WEIGHT_CACHE_READY_TEMPLATE}). */
    Path readyPath() {
        String socket = socketPath().getFileName().toString();
        return socketDir.resolve(socket.substring(0, socket.length() - ".sock".length()) + ".ready");
    }

    /** Stops the daemon (SIGTERM to {@code vllm preload}): sockets unlinked, health port closed. */
    Mono<Void> stop() {
        return stop(false);
    }

    private Mono<Void> stop(boolean keepResident) {
        return Mono.<Void>fromRunnable(() -> {
                    if (phase.getAndSet(Phase.STOPPED) == Phase.STOPPED) {
                        return;
                    }
                    loading.update(null);
                    closeSockets();
                    servingSince = null;
                    // SIGTERM: vllm preload terminates its ranks and logs nothing.
                    gpu.daemonStopped(keepResident);
                })
                .subscribeOn(lifecycle)
                .then(Mono.defer(() -> {
                    DisposableServer server = health;
                    health = null;
                    if (server == null) {
                        return Mono.empty();
                    }
                    server.dispose();
                    return server.onDispose();
                }));
    }

    /**
     * The engine asks for weights matching its fingerprint: the layout (the checkpoint's safetensors headers, not its
     * values, as in vLLM 0.31) and the revision.
     */
    Lookup lookup(String engineLayout, String engineRevision) {
        Path socket = socketPath();
        if (phase.get() != Phase.SERVING) {
            return new Lookup.Unusable(
                    "Weight cache socket " + socket + " is unavailable: [Errno 2] No such file or directory");
        }
        if (released) {
            return new Lookup.Unusable("Weight cache daemon error: Weights were released");
        }
        if (!layout.equals(engineLayout)) {
            return mismatch("['checkpoint']");
        }
        if (!revision.equals(engineRevision)) {
            return mismatch("['revision']");
        }
        if (properties.preload().mode() == SimulatorProperties.Preload.Mode.COPY) {
            released = true;
            log.info(NO_PREFIX, pid + 1, "daemon.py:264", "Weight cache daemon rank 0 released cached weights");
        }
        return new Lookup.Hit(checkpoint, properties.model().tensors());
    }

    /** The daemon's rank logs the mismatched fields (a Python list), the engine is told the same. */
    private Lookup mismatch(String fields) {
        log.warning(NO_PREFIX, pid + 1, "daemon.py:241", "WeightCacheKey mismatch on fields: " + fields);
        return new Lookup.Unusable("WeightCacheKey mismatch on fields: " + fields);
    }

    Phase phase() {
        return phase.get();
    }

    String checkpoint() {
        return checkpoint;
    }

    String layout() {
        return layout;
    }

    boolean released() {
        return released;
    }

    @Nullable
    Instant servingSince() {
        return servingSince;
    }

    Path socketDir() {
        return socketDir;
    }

    int pid() {
        return pid;
    }

    Path socketPath() {
        if (properties.sglang()) {
            // SGLANG_WEIGHT_CACHE_SOCKET_TEMPLATE's default: /tmp/sglang_weight_cache_{device_uuid}.sock.
            return socketDir.resolve("sglang_weight_cache_" + properties.model().gpuUuid() + ".sock");
        }
        String name = switch (properties.preload().socketNaming()) {
            case GPU_INDEX -> "vllm_weight_cache_gpu0.sock";
            case GPU_UUID -> "vllm_weight_cache_" + properties.model().gpuUuid().toLowerCase(Locale.ROOT) + ".sock";
        };
        return socketDir.resolve(name);
    }

    private Mono<Void> bindHealth() {
        int port = properties.preload().healthPort();
        if (port == 0) {
            return Mono.empty();
        }
        return HttpServer.create()
                .runOn(loops)
                .host(properties.host())
                .port(port)
                .route(routes -> routes.get(
                        "/health",
                        (request, response) -> phase.get() == Phase.SERVING
                                ? response.status(HttpResponseStatus.OK).send()
                                : response.status(HttpResponseStatus.SERVICE_UNAVAILABLE)
                                        .send()))
                .bind()
                // Seen twice in the demo's test on a loaded machine (cause not found): the restarted daemon's health
                // port would not bind at once. A new `vllm preload` process retrying its port for up to 2 s is
                // plausible; a daemon that cannot bind stays stopped, never loading for ever.
                .retryWhen(Retry.fixedDelay(20, Duration.ofMillis(100))
                        .scheduler(timer)
                        .filter(error ->
                                error.getMessage() != null && error.getMessage().startsWith("Failed to bind")))
                .doOnNext(server -> health = server)
                .doOnError(error -> phase.set(Phase.STOPPED))
                .then();
    }

    private void bindSockets() {
        try {
            Files.createDirectories(socketDir);
            try {
                Files.setPosixFilePermissions(socketDir, PosixFilePermissions.fromString("rwx------"));
            } catch (UnsupportedOperationException ex) {
                // Not a POSIX file system: permissions are the daemon's business, not the simulator's.
            }
            Path path = socketPath();
            Files.deleteIfExists(path);
            ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            channel.bind(UnixDomainSocketAddress.of(path));
            sockets.add(channel);
        } catch (IOException ex) {
            log.error(NO_PREFIX, pid, "daemon.py:301", "Cannot bind weight cache socket: " + ex.getMessage());
        }
    }

    private void closeSockets() {
        for (ServerSocketChannel channel : sockets) {
            try {
                channel.close();
            } catch (IOException ex) {
                // Closing a listening socket only fails when it is already gone.
            }
        }
        sockets.clear();
        try {
            Files.deleteIfExists(socketPath());
            // SGLang's daemon unlinks its ready file with its socket on SIGTERM (serve()'s finally).
            Files.deleteIfExists(readyPath());
        } catch (IOException ex) {
            log.warning(NO_PREFIX, pid, "daemon.py:318", "Cannot unlink weight cache socket: " + ex.getMessage());
        }
    }

    @Override
    public void close() {
        loading.dispose();
        closeSockets();
        DisposableServer server = health;
        if (server != null) {
            server.disposeNow();
        }
    }
}
