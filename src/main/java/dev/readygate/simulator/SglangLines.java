package dev.readygate.simulator;

import java.util.Locale;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The lines an SGLang engine start writes ({@code readygate.simulator.engine=sglang}), each format from SGLang's
 * source (sgl-project/sglang) as the fixtures in {@code src/test/resources/sglang-logs} name them: the prefix {@code
 * "[%(asctime)s%(prefix)s] %(message)s"} with {@code "%Y-%m-%d %H:%M:%S"} and a {@code " TP<r>"} rank tag with tensor
 * parallel only (configure_logger, python/sglang/srt/utils/common.py @004f0c7a); {@code "Load weight begin. avail
 * mem=%.2f GB"}, {@code "Load weight end. elapsed=%.2f s, type=%s, dtype=%s, avail mem=%.2f GB, mem usage=%.2f GB."}
 * (model_runner.py @0005834c); the weight cache's {@code "[IpcModelLoader] Fetched %d IPC handles from daemon in
 * %.2fs"}, {@code "Zero-copy: mapped %d tensors (%d new post-quant), time=%.3fs"}, {@code "Loaded model via IPC
 * (mode=%s), total=%.2fs"}, {@code "Started daemon-liveness watchdog for pid=%d"} and {@code "Weight cache not
 * available or config mismatch, falling back to disk load"} (python/sglang/srt/weight_cache/ipc_loader.py @6512c36d),
 * with the registry era's reason before it, {@code "Daemon socket not found at %s."}; {@code "KV Cache is allocated.
 * dtype: %s, #tokens: %d, K size: %.2f GB, V size: %.2f GB"}; {@code "Capture %s %s end. elapsed=%.2f s, mem
 * usage=%.2f GB, avail mem=%.2f GB."} (cuda_graph_setup.py @018cdcbe); uvicorn's lines; {@code "The server is fired up
 * and ready to roll!"} (http_server.py @0025436e, after its warmup request: {@code timing.sglang-warmup} after the port
 * opens, while {@code /health} answers 503). SGLang
 * writes no engine-core header, no torch.compile and no {@code init engine} line: those phases write nothing. It has no
 * sleep mode or snapshot restore here ({@link SimulatorProperties} refuses them with SGLang).
 */
final class SglangLines implements EngineLines {

    private static final double GPU_GIB = 139.8;

    private final SimulatorProperties properties;
    private final EngineLog log;
    private final Supplier<String> socket;
    /** The GPU memory still free while a start loads, as SGLang's {@code avail mem} prints it. */
    private double available = GPU_GIB;

    SglangLines(SimulatorProperties properties, EngineLog log, Supplier<String> socket) {
        this.properties = properties;
        this.log = log;
        this.socket = socket;
    }

    private int ranks() {
        return properties.deployment().tensorParallelSize();
    }

    /** Each tensor-parallel rank's scheduler writes the line, tagged {@code TP<r>} when there is more than one. */
    private void eachRank(java.util.function.IntFunction<String> line) {
        for (int rank = 0; rank < ranks(); rank++) {
            log.sglang(ranks() > 1 ? " TP" + rank : "", line.apply(rank));
        }
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    @Override
    public int pidsPerStart() {
        return 10;
    }

    @Override
    public String api() {
        return "";
    }

    @Override
    public void header(int pid, String version, String model, String args) {
        boolean cache = properties.preload().enabled();
        log.sglang(
                "",
                f(
                        "server_args=ServerArgs(model_path='%s', tokenizer_path='%s', host='%s', port=%d, tp_size=%d,"
                                + " weight_cache_mode='%s', weight_cache_socket=None, weight_cache_timeout=1800)",
                        model, model, properties.host(), properties.port(), ranks(), cache ? "client" : "off"));
    }

    @Override
    public void initializing(int core, String version, String config) {
        // SGLang's schedulers write no header of their own config.
    }

    @Override
    public void startingToLoad(int core, String model) {
        available = GPU_GIB;
        eachRank(rank -> f("Load weight begin. avail mem=%.2f GB", available));
    }

    @Override
    public void loaded(int core, double totalLoadSeconds, double gib, double modelSeconds) {
        log.raw(f(
                "Loading safetensors checkpoint shards: 100%% Completed | 5/5 [00:%02d<00:00,  1.10it/s]",
                Math.round(totalLoadSeconds)));
        double perRank = gib / ranks();
        available -= perRank;
        eachRank(rank -> f(
                "Load weight end. elapsed=%.2f s, type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB,"
                        + " mem usage=%.2f GB.",
                totalLoadSeconds, available, perRank));
    }

    @Override
    public void mapped(
            int core, int tensors, String mode, SimulatorProperties.Preload preload, double gib, double seconds) {
        startingToLoad(core, "");
        eachRank(rank -> f("[IpcModelLoader] Fetched %d IPC handles from daemon in %.2fs", tensors, seconds / 3));
        eachRank(rank -> f(
                "[IpcModelLoader] Zero-copy: mapped %d tensors (0 new post-quant), time=%.3fs", tensors, seconds / 2));
        eachRank(rank -> f("[IpcModelLoader] Loaded model via IPC (mode=client), total=%.2fs", seconds));
        eachRank(rank -> f("[IpcModelLoader] Started daemon-liveness watchdog for pid=%d", core + 1000 + rank));
        // The daemon's weights are mapped, not copied: the engine's own usage is the small remainder.
        available -= 0.13;
        eachRank(rank -> f(
                "Load weight end. elapsed=%.2f s, type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB,"
                        + " mem usage=0.13 GB.",
                seconds + 0.2, available));
    }

    /**
     * In client mode SGLang falls back to disk only when no daemon is there (a refused socket or a config mismatch
     * fails the start instead): whatever kept the simulator's cache from serving, the scheduler says the socket is
     * missing, then warns; the disk load follows.
     */
    @Override
    public void cacheUnusable(int core, String reason) {
        startingToLoad(core, "");
        eachRank(rank -> "[IpcModelLoader] Daemon socket not found at " + socket.get() + ".");
        eachRank(rank -> "[IpcModelLoader] Weight cache not available or config mismatch, falling back to disk load");
    }

    @Override
    public void compiling(int core, double dynamoSeconds, double graphSeconds) {
        // SGLang does not torch.compile unless asked (--enable-torch-compile).
    }

    @Override
    public void graphsCaptured(int core, double seconds, double gib) {
        double before = available;
        available -= gib;
        eachRank(rank -> f(
                "Capture target decode CUDA graph begin. backend=fa3, num_tokens_per_req=1, bs=[1, 2, 4, 8, 16, 24,"
                        + " 32], avail mem=%.2f GB",
                before));
        eachRank(rank -> f(
                "Capture target decode CUDA graph end. elapsed=%.2f s, mem usage=%.2f GB, avail mem=%.2f GB.",
                seconds, gib, available));
    }

    @Override
    public void kvCache(int core, double kvGib, int kvTokens, int maxModelLen) {
        double half = kvGib / 2;
        available = Math.max(1, available - kvGib);
        eachRank(rank -> f(
                "KV Cache is allocated. dtype: torch.bfloat16, #tokens: %d, K size: %.2f GB, V size: %.2f GB",
                kvTokens, half, half));
    }

    @Override
    public void initEngine(int core, double seconds, double compilationSeconds) {
        // No such line in SGLang.
    }

    @Override
    public void serving(int pid, String url) {
        log.sglang("", "INFO:     Started server process [" + pid + "]");
        log.sglang("", "INFO:     Waiting for application startup.");
        log.sglang("", "INFO:     Application startup complete.");
        log.sglang("", "INFO:     Uvicorn running on " + url + " (Press CTRL+C to quit)");
    }

    @Override
    public void warmedUp() {
        log.sglang("", "The server is fired up and ready to roll!");
    }

    @Override
    public void shuttingDown(int pid) {
        log.sglang("", "INFO:     Shutting down");
        log.sglang("", "INFO:     Finished server process [" + pid + "]");
    }

    /** The scheduler's {@code "Scheduler hit an exception: %s"} (scheduler.py), its traceback's last line. */
    @Override
    public void startupFailure(int pid, String reason) {
        eachRank(rank -> "Scheduler hit an exception: Traceback (most recent call last):");
        log.raw(VllmLines.exceptionLine(reason));
    }

    @Override
    public void configError(int pid, @Nullable String hfToken) {
        startupFailure(pid, VllmLines.CONFIG_ERROR);
    }

    @Override
    public void fatalError(int pid, String reason) {
        startupFailure(pid, reason);
    }

    @Override
    public void restoreFailure(String error) {
        throw unsupported("snapshot restore");
    }

    @Override
    public void fellAsleep(int core, double freedGib, double backedUpGib, double stillInUseGib, double seconds) {
        throw unsupported("sleep mode");
    }

    @Override
    public void alreadySleeping(int core) {
        throw unsupported("sleep mode");
    }

    @Override
    public void wakeRequested(int pid, String tags) {
        throw unsupported("sleep mode");
    }

    @Override
    public void wokeUp(int core, double seconds, String tags) {
        throw unsupported("sleep mode");
    }

    @Override
    public void notSleeping(int core) {
        throw unsupported("sleep mode");
    }

    @Override
    public void tagNotSleeping(int core, String tag, String sleepingTags) {
        throw unsupported("sleep mode");
    }

    private static UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException("the SGLang simulator has no " + what);
    }
}
