package dev.readygate.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.IntConsumer;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The lines a vLLM engine start writes, in the formats of the configured vLLM ({@code deployment.formats}): 0.31's or
 * 0.10.1's, each line's format string taken from vLLM's own source at that version (docs/simulator.md names the file
 * for each; the {@code file.py:N} line numbers are those of real logs of that version, illustrative). A single engine
 * core is {@code EngineCore} (0.10.1: {@code EngineCore_0}); every data-parallel engine core ({@code EngineCore_DP<i>},
 * pid {@code core + i}) writes its own lines; the cores start in parallel, and the last one's header comes late, once
 * the first core's weights are loaded, as vLLM's log may show it (issue 18, item 6). With tensor parallel each core
 * runs {@code tensor-parallel-size} workers ({@code Worker_TP<r>}, pids after the API servers'), which write the
 * per-rank lines (model load, torch.compile, graph capture, and rank 0's {@code Available KV cache memory}); the core
 * keeps its header, the KV cache size and {@code init engine}.
 */
final class VllmLines implements EngineLines {

    static final String API = "APIServer";

    /** The exception line of {@code config-error}: pydantic-core's {@code ValidationError} title. */
    static final String CONFIG_ERROR =
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig";

    private static final Pattern EXCEPTION_LINE =
            Pattern.compile("(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|Exception)(?::.*)?");

    private static final String PACKAGES = "/usr/local/lib/python3.12/dist-packages";

    private static final String SITE = PACKAGES + "/vllm";

    private final SimulatorProperties.Deployment deployment;
    private final EngineLog log;
    /** The late engine core's lines held back since the start's headers, until the first core's weights are out. */
    private final List<Runnable> lateLines = new ArrayList<>();
    /** Whether the late engine core still holds its lines back in this start. */
    private boolean lateCoreWaits;
    /**
     * Whether the engine's torch.compile cache ({@code ~/.cache/vllm/torch_compile_cache}) holds its graphs: written by
     * the first start that compiles, read by every later one in the same container.
     */
    private boolean compileCached;

    VllmLines(SimulatorProperties.Deployment deployment, EngineLog log) {
        this.deployment = deployment;
        this.log = log;
    }

    private boolean v031() {
        return deployment.formats() == SimulatorProperties.Deployment.Formats.V0_31;
    }

    /**
     * The engine core's process name: vLLM's {@code set_process_title("EngineCore")} with one core, {@code
     * ("EngineCore", f"DP{dp_rank}")} with data parallel (v1/engine/core.py, run_engine_core); 0.10.1's {@code
     * EngineCore_<dp_rank>} always.
     */
    String core(int index) {
        if (!v031()) {
            return "EngineCore_" + index;
        }
        return deployment.dataParallelSize() > 1 ? "EngineCore_DP" + index : "EngineCore";
    }

    /**
     * A worker's process name: vLLM's {@code Worker} with {@code _DP<dp_rank>}, {@code _PP<pp_rank>} and {@code
     * _TP<tp_rank>} appended where that size is above 1 (v1/executor/multiproc_executor.py, WorkerProc's {@code
     * setup_proc_title_and_log_prefix}); 0.10.1's {@code VllmWorker TP<tp_rank>}; Ray's actor {@code RayWorkerWrapper}
     * behind its engine core's prefix. {@code rank} is the worker's rank in its engine core, stage by stage ({@code
     * pp_rank * tensor_parallel_size + tp_rank}); {@code core} the first engine core's pid.
     */
    String worker(int core, int index, int rank) {
        if (!v031()) {
            return "VllmWorker TP" + rank;
        }
        if (deployment.distributedExecutorBackend() == SimulatorProperties.Deployment.ExecutorBackend.RAY) {
            // Ray prefixes an actor's lines with its class and pid; the engine core, its driver, prints them behind
            // its own prefix (vllm/v1/executor/ray_distributed_executor.py, RayWorkerWrapper).
            return EngineLog.forwardedBy(core(index), core + index, "RayWorkerWrapper");
        }
        int tp = deployment.tensorParallelSize();
        return "Worker" + (deployment.dataParallelSize() > 1 ? "_DP" + index : "")
                + (deployment.pipelineParallelSize() > 1 ? "_PP" + rank / tp : "")
                + (tp > 1 ? "_TP" + rank % tp : "");
    }

    /** A worker's pid: after the engine cores' and the API servers', core by core, rank by rank. */
    int workerPid(int core, int index, int rank) {
        int apiServers = deployment.apiServers() > 1 ? deployment.apiServers() : 0;
        return core + deployment.dataParallelSize() + apiServers + index * deployment.ranksPerCore() + rank;
    }

    /** How far apart two starts' API server pids are: ten, or enough for every core, API server and worker. */
    @Override
    public int pidsPerStart() {
        int apiServers = deployment.apiServers() > 1 ? deployment.apiServers() : 0;
        int workers = deployment.ranksPerCore() > 1 ? deployment.dataParallelSize() * deployment.ranksPerCore() : 0;
        int used = 1 + deployment.dataParallelSize() + apiServers + workers;
        return Math.max(10, (used + 9) / 10 * 10);
    }

    /** The API server's prefix: {@code (APIServer pid=N)} (0.31's {@code decorate_logs("APIServer")}), none in 0.10.1. */
    @Override
    public String api() {
        return v031() ? API : "";
    }

    /** The API server's first lines: the version (0.31: the banner), its arguments, the API server count. */
    @Override
    public void header(int pid, String version, String model, String args) {
        if (v031()) {
            // log_version_and_model: vLLM's banner, as vLLM 0.16 on prints it.
            log.lines(
                    API,
                    pid,
                    "INFO",
                    "utils.py:302",
                    List.of(
                            "",
                            "       █     █     █▄   ▄█",
                            " ▄▄ ▄█ █     █     █ ▀▄▀ █  version " + version,
                            "  █▄█▀ █     █     █     █  model   " + model,
                            "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
                            ""));
        } else {
            log.info(api(), pid, "api_server.py:1805", "vLLM API server version " + version);
        }
        log.info(api(), pid, v031() ? "utils.py:253" : "utils.py:326", "non-default args: " + args);
        if (deployment.dataParallelSize() > 1) {
            log.info(
                    api(),
                    pid,
                    "arg_utils.py:1744",
                    "Defaulting api_server_count to data_parallel_size (" + deployment.dataParallelSize() + ").");
        }
    }

    /** Every engine core's header (the late core's, with data parallel, once the first core's weights are out). */
    @Override
    public void initializing(int core, String version, String config) {
        lateLines.clear();
        lateCoreWaits = deployment.dataParallelSize() > 1;
        eachCore(
                core,
                (name, pid) -> log.info(
                        name,
                        pid,
                        v031() ? "core.py:93" : "core.py:74",
                        "Initializing a V1 LLM engine (v" + version + ") with config: " + config
                                + ", tensor_parallel_size=" + deployment.tensorParallelSize()
                                + ", pipeline_parallel_size=" + deployment.pipelineParallelSize()
                                + ", data_parallel_size=" + deployment.dataParallelSize()));
    }

    @Override
    public void startingToLoad(int core, String model) {
        eachRank(
                core,
                false,
                (name, pid) -> log.info(
                        name,
                        pid,
                        v031() ? "gpu_model_runner.py:3012" : "gpu_model_runner.py:1953",
                        "Starting to load model " + model + "..."));
    }

    /**
     * The weights read from disk: {@code Loading weights took} by the default loader (none by the Run:ai streamer or
     * tensorizer), then the drafter's with speculative decoding, then {@code Model loading took}.
     */
    @Override
    public void loaded(int core, double totalLoadSeconds, double gib, double modelSeconds) {
        eachCoreLoading(core, (name, pid, rank) -> {
            // Each tensor-parallel rank reads its own shard: rank 0 takes longest here, and writes first.
            double loadSeconds = totalLoadSeconds * (1 - 0.03 * rank);
            if (deployment.loadFormat() == SimulatorProperties.Deployment.LoadFormat.AUTO) {
                log.info(
                        name,
                        pid,
                        "default_loader.py:262",
                        String.format(Locale.ROOT, "Loading weights took %.2f seconds", loadSeconds));
                if (deployment.speculativeDecoding()) {
                    log.info(name, pid, "gpu_model_runner.py:3030", "Loading drafter model...");
                    log.info(
                            name,
                            pid,
                            "default_loader.py:262",
                            String.format(Locale.ROOT, "Loading weights took %.2f seconds", loadSeconds * 0.02));
                }
            }
            modelLoading(name, pid, gib, modelSeconds);
        });
    }

    /** A cache hit: the tensors mapped, the memory split, then {@code Model loading took}. */
    @Override
    public void mapped(
            int core, int tensors, String mode, SimulatorProperties.Preload preload, double gib, double seconds) {
        eachCoreLoading(core, (name, pid, rank) -> {
            log.info(
                    name,
                    pid,
                    "ipc_loader.py:203",
                    String.format(
                            Locale.ROOT, "Mapped %d tensors from the weight cache daemon (%s mode)", tensors, mode));
            if (!preload.heldOutsideLine().isEmpty()) {
                log.info(name, pid, "ipc_loader.py:221", String.format(Locale.ROOT, preload.heldOutsideLine(), gib));
            }
            double reported = preload.hitModelLoading() == SimulatorProperties.Preload.HitModelLoading.ZERO ? 0.0 : gib;
            modelLoading(name, pid, reported, seconds);
        });
    }

    @Override
    public void cacheUnusable(int core, String reason) {
        eachCoreLoading(
                core,
                (name, pid, rank) -> log.warning(
                        name,
                        pid,
                        "ipc_loader.py:139",
                        "Weight cache unusable (" + reason + "); falling back to disk loading"));
    }

    private void modelLoading(String name, int pid, double gib, double seconds) {
        if (v031()) {
            log.info(
                    name,
                    pid,
                    "model_runner.py:4344",
                    String.format(Locale.ROOT, "Model loading took %.2f GiB memory and %.6f seconds", gib, seconds));
        } else {
            log.info(
                    name,
                    pid,
                    "gpu_model_runner.py:2007",
                    String.format(Locale.ROOT, "Model loading took %.4f GiB and %.6f seconds", gib, seconds));
        }
    }

    /**
     * torch.compile: the cache directory, Dynamo's bytecode transform, then the backbone's graphs compiled (and
     * cached) on the first start, or loaded from that cache on every later one (vllm/compilation/backends.py), and the
     * total (vllm/compilation/monitor.py).
     */
    @Override
    public void compiling(int core, double dynamoSeconds, double graphSeconds) {
        boolean cached = compileCached;
        compileCached = true;
        // 0.31 compiles one range of token counts, (1, max_num_batched_tokens); 0.10.1 one dynamic shape.
        String shape = v031() ? "compile range (1, 8192)" : "dynamic shape";
        forCores(index -> ranks(core, index, false, (name, pid, rank) -> {
            // vllm/compilation/backends.py: each rank's own cache directory, rank_{rank}_{dp_rank}.
            log.info(
                    name,
                    pid,
                    v031() ? "backends.py:913" : "backends.py:548",
                    "Using cache directory: /root/.cache/vllm/torch_compile_cache/4f1c2e9a7b/rank_" + rank + "_" + index
                            + "/backbone for vLLM's torch.compile");
            log.info(
                    name,
                    pid,
                    v031() ? "backends.py:973" : "backends.py:559",
                    String.format(Locale.ROOT, "Dynamo bytecode transform time: %.2f s", dynamoSeconds));
            if (cached) {
                log.info(
                        name,
                        pid,
                        v031() ? "backends.py:292" : "backends.py:161",
                        String.format(
                                Locale.ROOT,
                                "Directly load the compiled graph(s) for %s from the cache, took %.3f s",
                                shape,
                                graphSeconds / 10));
            } else {
                log.info(
                        name,
                        pid,
                        v031() ? "backends.py:386" : "backends.py:215",
                        String.format(Locale.ROOT, "Compiling a graph for %s takes %.2f s", shape, graphSeconds));
            }
            double total = dynamoSeconds + (cached ? graphSeconds / 10 : graphSeconds);
            log.info(
                    name,
                    pid,
                    v031() ? "monitor.py:53" : "monitor.py:34",
                    String.format(
                            Locale.ROOT,
                            v031() ? "torch.compile took %.2f s in total" : "torch.compile takes %.2f s in total",
                            total));
        }));
    }

    /** CUDA graphs captured, after the KV cache is allocated (v1/worker/gpu_model_runner.py, capture_model). */
    @Override
    public void graphsCaptured(int core, double seconds, double gib) {
        eachRank(
                core,
                false,
                (name, pid) -> log.info(
                        name,
                        pid,
                        v031() ? "gpu_model_runner.py:5366" : "gpu_model_runner.py:2567",
                        String.format(
                                Locale.ROOT, "Graph capturing finished in %.0f secs, took %.2f GiB", seconds, gib)));
    }

    @Override
    public void kvCache(int core, double kvGib, int kvTokens, int maxModelLen) {
        String concurrency = String.format(
                Locale.ROOT, "%,d tokens per request: %.2fx", maxModelLen, (double) kvTokens / maxModelLen);
        forCores(index -> {
            // Each worker sizes its memory; 0.31 logs it from rank 0 only, 0.10.1 from every rank (real logs).
            ranks(
                    core,
                    index,
                    v031(),
                    (name, pid, rank) -> log.info(
                            name,
                            pid,
                            v031() ? "gpu_worker.py:298" : "gpu_worker.py:276",
                            String.format(Locale.ROOT, "Available KV cache memory: %.2f GiB", kvGib)));
            String name = core(index);
            int pid = core + index;
            if (v031()) {
                log.info(
                        name,
                        pid,
                        "kv_cache_utils.py:1314",
                        String.format(Locale.ROOT, "GPU KV cache size: %,d tokens, ", kvTokens)
                                + "Maximum concurrency for " + concurrency);
            } else {
                log.info(
                        name,
                        pid,
                        "kv_cache_utils.py:849",
                        String.format(Locale.ROOT, "GPU KV cache size: %,d tokens", kvTokens));
                log.info(name, pid, "kv_cache_utils.py:853", "Maximum concurrency for " + concurrency);
            }
        });
    }

    @Override
    public void initEngine(int core, double seconds, double compilationSeconds) {
        String took = v031()
                ? String.format(Locale.ROOT, "%.2f s (compilation: %.2f s)", seconds, compilationSeconds)
                : String.format(Locale.ROOT, "%.2f seconds", seconds);
        eachCore(
                core,
                (name, pid) -> log.info(
                        name,
                        pid,
                        v031() ? "core.py:210" : "core.py:214",
                        "init engine (profile, create kv cache, warmup model) took " + took));
    }

    /**
     * The API servers come up: one with a single engine core, one per core with data parallel. 0.31: {@code Supported
     * tasks} and {@code Starting vLLM server on}, uvicorn's lines behind the API server's prefix; 0.10.1: {@code
     * Supported_tasks}, {@code Starting vLLM API server 0 on} (its API server index), no prefix on any.
     */
    @Override
    public void serving(int pid, String url) {
        int servers = deployment.apiServers();
        for (int i = 0; i < servers; i++) {
            String name = !v031() ? "" : servers == 1 ? API : "ApiServer_" + i;
            int serverPid = servers == 1 ? pid : apiServerPid(pid, i);
            if (v031()) {
                log.info(name, serverPid, "api_server.py:1971", "Supported tasks: ['generate']");
                log.info(name, serverPid, "api_server.py:2015", "Starting vLLM server on " + url);
            } else {
                log.info(name, serverPid, "api_server.py:1611", "Supported_tasks: ['generate']");
                log.info(name, serverPid, "api_server.py:1880", "Starting vLLM API server " + i + " on " + url);
            }
            log.bare(
                    name,
                    serverPid,
                    List.of(
                            "INFO:     Started server process [" + serverPid + "]",
                            "INFO:     Waiting for application startup.",
                            "INFO:     Application startup complete."));
        }
    }

    /** The API server stops serving (vllm/entrypoints/launcher.py, serve_http's shutdown). */
    @Override
    public void warmedUp() {
        // vLLM's API server listens once its engine is up: no warmup of its own to log.
    }

    @Override
    public void shuttingDown(int pid) {
        log.info(api(), pid, v031() ? "launcher.py:120" : "launcher.py:80", "Shutting down FastAPI HTTP server.");
    }

    /** The API server processes' pids: after the engine cores'. */
    int apiServerPid(int pid, int index) {
        return pid + 1 + deployment.dataParallelSize() + index;
    }

    /**
     * A start that dies before serving: the engine core logs {@code EngineCore failed to start.} with its traceback,
     * multiprocessing prints it again, and the API server gives up with {@code RuntimeError: Engine core initialization
     * failed}.
     */
    @Override
    public void startupFailure(int pid, String reason) {
        String exception = exceptionLine(reason);
        int core = pid + 1;
        log.lines(
                core(0),
                core,
                "ERROR",
                "core.py:1100",
                List.of(
                        "EngineCore failed to start.",
                        "Traceback (most recent call last):",
                        "  File \"" + SITE + "/v1/engine/core.py\", line 1090, in run_engine_core",
                        "    engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)",
                        "  File \"" + SITE + "/v1/worker/gpu_worker.py\", line 301, in determine_available_memory",
                        "    self.model_runner.profile_run()",
                        exception));
        log.bare(
                core(0),
                core,
                List.of(
                        "Process " + core(0) + ":",
                        "Traceback (most recent call last):",
                        "  File \"/usr/lib/python3.12/multiprocessing/process.py\", line 314, in _bootstrap",
                        "    self.run()",
                        "  File \"" + SITE + "/v1/engine/core.py\", line 1104, in run_engine_core",
                        "    raise e",
                        exception));
        log.bare(
                api(),
                pid,
                List.of(
                        "Traceback (most recent call last):",
                        "  File \"/usr/local/bin/vllm\", line 10, in <module>",
                        "    sys.exit(main())",
                        "  File \"" + SITE + "/v1/engine/utils.py\", line 1010, in wait_for_engine_startup",
                        "    raise RuntimeError(",
                        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): "
                                + "{'" + core(0) + "': 1}"));
    }

    /**
     * A configuration error in the API server, before any engine core exists: pydantic's {@code ValidationError}
     * from {@code VllmConfig(...)} (vllm/engine/arg_utils.py, create_engine_config) is uncaught, and Python writes its
     * traceback to stderr, behind the API server's prefix; the message line is pydantic-core's {@code   {msg}
     * [type=..., input_value=..., input_type=...]}, the input's repr cut short in the middle (with {@code --hf-token},
     * the token shows, as in fixture {@code v0.31-api-server-validation-error.log}).
     */
    @Override
    public void configError(int pid, @Nullable String hfToken) {
        String tail = hfToken != null ? "'hf_token': '" + hfToken + "'" : "'instance_id': ''";
        log.bare(
                api(),
                pid,
                List.of(
                        "Traceback (most recent call last):",
                        "  File \"" + SITE + "/engine/arg_utils.py\", line 1712, in create_engine_config",
                        "    config = VllmConfig(",
                        "             ^^^^^^^^^^^",
                        "  File \"" + PACKAGES + "/pydantic/_internal/_dataclasses.py\", line 123, in __init__",
                        "    s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)",
                        CONFIG_ERROR,
                        "  Value error, Cannot find the config file for awq_marlin [type=value_error, "
                                + "input_value=ArgsKwargs((), {'model_co..." + tail + "}), input_type=ArgsKwargs]",
                        "    For further information visit https://errors.pydantic.dev/2.11/v/value_error"));
    }

    /**
     * The engine dies while serving: {@code EngineCore encountered a fatal error.} with the root exception, the API
     * server's output handler failing with {@code EngineDeadError}, and the launcher's {@code VLLM Engine failed,
     * terminating server.} (logger.fatal: CRITICAL).
     */
    @Override
    public void fatalError(int pid, String reason) {
        int core = pid + 1;
        log.lines(
                core(0),
                core,
                "ERROR",
                "core.py:1062",
                List.of(
                        "EngineCore encountered a fatal error.",
                        "Traceback (most recent call last):",
                        "  File \"" + SITE + "/v1/engine/core.py\", line 1014, in run_engine_core",
                        "    engine_core.run_busy_loop()",
                        exceptionLine(reason)));
        log.lines(
                api(),
                pid,
                "ERROR",
                "async_llm.py:487",
                List.of(
                        "AsyncLLM output_handler failed.",
                        "Traceback (most recent call last):",
                        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                                + "(above) for the root cause."));
        log.line(api(), pid, "CRITICAL", "launcher.py:116", "VLLM Engine failed, terminating server.");
    }

    /**
     * {@code vllm snapshot restore} failed: the controller makes no log calls, so what shows is Python's traceback of
     * the uncaught error on its stderr (the module path is the simulator's guess).
     */
    @Override
    public void restoreFailure(String error) {
        log.bare(
                "",
                0,
                List.of(
                        "Traceback (most recent call last):",
                        "  File \"/usr/local/bin/vllm\", line 10, in <module>",
                        "    sys.exit(main())",
                        "  File \"" + SITE + "/snapshot/controller.py\", line 412, in restore",
                        "vllm.snapshot.manifest." + error));
    }

    /** A crash reason as the exception line that ends vLLM's traceback. */
    static String exceptionLine(String reason) {
        if (EXCEPTION_LINE.matcher(reason).matches()) {
            return reason;
        }
        return (reason.startsWith("CUDA error") ? "torch.AcceleratorError: " : "RuntimeError: ") + reason;
    }

    /**
     * The weight cache daemon's READY line, with vLLM's words for an unset socket dir ({@code "the default socket
     * dir"}): 0.31's {@code vllm preload} (vllm/entrypoints/cli/preload.py) counts node, local ranks and roles (the
     * model's, one without a drafter); before it, the daemon module (weight_cache/daemon.py, vLLM 0.30) all ranks.
     */
    static String daemonReady(SimulatorProperties.Deployment.Formats formats, String socketDir) {
        if (formats == SimulatorProperties.Deployment.Formats.V0_31) {
            return "===== Weight cache daemon READY: node 0/1 serving 1 local rank(s) x 1 role(s) in " + socketDir
                    + " =====";
        }
        return "===== Weight cache daemon READY: all 1 ranks serving in " + socketDir + " =====";
    }

    /**
     * Sleep mode ({@code POST /sleep}): each rank's allocator frees the weights and KV cache (vllm/device_allocator/cumem.py,
     * CuMemAllocator.sleep), the worker reports what is left (vllm/v1/worker/gpu_worker.py, Worker.sleep), then the engine
     * core's executor (vllm/v1/executor/abstract.py; 0.10.1: executor_base.py) how long it took.
     */
    @Override
    public void fellAsleep(int core, double freedGib, double backedUpGib, double stillInUseGib, double seconds) {
        int ranks = deployment.tensorParallelSize();
        eachRank(core, false, (name, pid) -> {
            log.info(
                    name,
                    pid,
                    "cumem.py:249",
                    String.format(
                            Locale.ROOT,
                            "CuMemAllocator: sleep freed %.2f GiB memory in total, of which %.2f GiB is backed up in CPU"
                                    + " and the rest %.2f GiB is discarded directly.",
                            freedGib / ranks,
                            backedUpGib / ranks,
                            (freedGib - backedUpGib) / ranks));
            log.info(
                    name,
                    pid,
                    "gpu_worker.py:117",
                    String.format(
                            Locale.ROOT,
                            "Sleep mode freed %.2f GiB memory, %.2f GiB memory is still in use.",
                            freedGib / ranks,
                            stillInUseGib));
        });
        eachCore(
                core,
                (name, pid) -> log.info(
                        name,
                        pid,
                        executor(312),
                        String.format(Locale.ROOT, "It took %.6f seconds to fall asleep.", seconds)));
    }

    /** A sleep while asleep: the executor warns and does nothing. */
    @Override
    public void alreadySleeping(int core) {
        eachCore(core, (name, pid) -> log.warning(name, pid, executor(302), "Executor is already sleeping."));
    }

    /** {@code POST /wake_up}: the API server's line (vllm/entrypoints/serve/sleep/api_router.py; 0.10.1: api_server.py). */
    @Override
    public void wakeRequested(int pid, String tags) {
        log.info(
                api(),
                pid,
                v031() ? "api_router.py:56" : "api_server.py:1054",
                "wake up the engine with tags: " + tags);
    }

    /** The executor woke the tags (its {@code %s}: the tags asked for, or the sleeping tags' set when none were). */
    @Override
    public void wokeUp(int core, double seconds, String tags) {
        eachCore(
                core,
                (name, pid) -> log.info(
                        name,
                        pid,
                        executor(330),
                        String.format(Locale.ROOT, "It took %.6f seconds to wake up tags %s.", seconds, tags)));
    }

    /** A wake while awake: the executor warns and does nothing. */
    @Override
    public void notSleeping(int core) {
        eachCore(core, (name, pid) -> log.warning(name, pid, executor(318), "Executor is not sleeping."));
    }

    /** A wake of a tag that does not sleep: the executor warns and wakes nothing. */
    @Override
    public void tagNotSleeping(int core, String tag, String sleepingTags) {
        eachCore(
                core,
                (name, pid) -> log.warning(
                        name, pid, executor(322), "Tag " + tag + " is not in sleeping tags " + sleepingTags));
    }

    /** The executor's source: 0.31's {@code abstract.py}, 0.10.1's {@code executor_base.py}. */
    private String executor(int line) {
        return v031() ? "abstract.py:" + line : "executor_base.py:" + (line - 123);
    }

    /** Each engine core writes the line: {@code EngineCore_DP<i>} with pid {@code core + i}. */
    private void eachCore(int core, CoreLine line) {
        forCores(index -> line.write(core(index), core + index));
    }

    /** Each rank of each engine core writes the line: the core itself, or with tensor parallel each of its workers. */
    private void eachRank(int core, boolean firstRankOnly, CoreLine line) {
        forCores(index -> ranks(core, index, firstRankOnly, (name, pid, rank) -> line.write(name, pid)));
    }

    /** Runs {@code perCore} for each engine core's index; the late core's waits while it has not begun. */
    private void forCores(IntConsumer perCore) {
        for (int i = 0; i < deployment.dataParallelSize(); i++) {
            int index = i;
            if (lateCoreWaits && index == deployment.dataParallelSize() - 1) {
                lateLines.add(() -> perCore.accept(index));
            } else {
                perCore.accept(index);
            }
        }
    }

    /** The core's own process (one rank), or its workers ({@code firstRankOnly}: rank 0's). */
    private void ranks(int core, int index, boolean firstRankOnly, RankLine line) {
        int size = deployment.ranksPerCore();
        if (size == 1) {
            line.write(core(index), core + index, 0);
            return;
        }
        for (int rank = 0; rank < (firstRankOnly ? 1 : size); rank++) {
            line.write(worker(core, index, rank), workerPid(core, index, rank), rank);
        }
    }

    /**
     * Each rank of each engine core writes its weights' lines; the late core begins (its held-back lines) after the
     * first's.
     */
    private void eachCoreLoading(int core, RankLine line) {
        for (int i = 0; i < deployment.dataParallelSize(); i++) {
            ranks(core, i, false, line);
            if (i == 0 && lateCoreWaits) {
                lateCoreWaits = false;
                lateLines.forEach(Runnable::run);
                lateLines.clear();
            }
        }
    }

    @FunctionalInterface
    private interface CoreLine {
        void write(String name, int pid);
    }

    @FunctionalInterface
    private interface RankLine {
        void write(String name, int pid, int rank);
    }
}
