package dev.readygate.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The lines a vLLM engine start writes, in the formats of the configured vLLM ({@code deployment.formats}): 0.31's, or
 * 0.10 to 0.30's. Where issue 18 quotes a real format, that format is the one written; the sources ({@code file.py:N})
 * are placeholders. Every data-parallel engine core ({@code EngineCore_DP<i>}, pid {@code core + i}) writes its own
 * lines; the cores start in parallel, and the last one's header comes late, once the first core's weights are loaded,
 * as vLLM's log may show it (issue 18, item 6).
 */
final class VllmLines {

    static final String API = "APIServer";

    private static final Pattern EXCEPTION_LINE =
            Pattern.compile("(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|Exception)(?::.*)?");

    private static final String SITE = "/usr/local/lib/python3.12/dist-packages/vllm";

    private final SimulatorProperties.Deployment deployment;
    private final EngineLog log;
    /** The late engine core's lines held back since the start's headers, until the first core's weights are out. */
    private final List<Runnable> lateLines = new ArrayList<>();
    /** Whether the late engine core still holds its lines back in this start. */
    private boolean lateCoreWaits;

    VllmLines(SimulatorProperties.Deployment deployment, EngineLog log) {
        this.deployment = deployment;
        this.log = log;
    }

    private boolean v031() {
        return deployment.formats() == SimulatorProperties.Deployment.Formats.V0_31;
    }

    static String core(int index) {
        return "EngineCore_DP" + index;
    }

    /** The API server's first lines: the version (0.31: the banner), its arguments, the API server count. */
    void header(int pid, String version, String model, String args) {
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
            log.info(API, pid, "api_server.py:1839", "vLLM API server version " + version);
        }
        log.info(API, pid, "utils.py:253", "non-default args: " + args);
        if (deployment.dataParallelSize() > 1) {
            log.info(
                    API,
                    pid,
                    "arg_utils.py:1744",
                    "Defaulting api_server_count to data_parallel_size (" + deployment.dataParallelSize() + ").");
        }
    }

    /** Every engine core's header (the late core's, with data parallel, once the first core's weights are out). */
    void initializing(int core, String version, String config) {
        lateLines.clear();
        lateCoreWaits = deployment.dataParallelSize() > 1;
        eachCore(
                core,
                (name, pid) -> log.info(
                        name,
                        pid,
                        "core.py:93",
                        "Initializing a V1 LLM engine (v" + version + ") with config: " + config
                                + ", data_parallel_size=" + deployment.dataParallelSize()));
    }

    void startingToLoad(int core, String model) {
        eachCore(
                core,
                (name, pid) ->
                        log.info(name, pid, "gpu_model_runner.py:3012", "Starting to load model " + model + "..."));
    }

    /**
     * The weights read from disk: {@code Loading weights took} by the default loader (none by the Run:ai streamer or
     * tensorizer), then the drafter's with speculative decoding, then {@code Model loading took}.
     */
    void loaded(int core, double loadSeconds, double gib, double modelSeconds) {
        eachCoreLoading(core, (name, pid) -> {
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
    void mapped(int core, int tensors, String mode, SimulatorProperties.Preload preload, double gib, double seconds) {
        eachCoreLoading(core, (name, pid) -> {
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

    void cacheUnusable(int core, String reason) {
        eachCoreLoading(
                core,
                (name, pid) -> log.warning(
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
                    "gpu_model_runner.py:3039",
                    String.format(Locale.ROOT, "Model loading took %.4f GiB memory and %.6f seconds", gib, seconds));
        }
    }

    void compiling(int core, double dynamoSeconds) {
        eachCore(core, (name, pid) -> {
            log.info(
                    name,
                    pid,
                    "backends.py:548",
                    "Using cache directory: /root/.cache/vllm/torch_compile_cache/4f1c2e9a7b/rank_0_0/backbone for "
                            + "vLLM's torch.compile");
            log.info(
                    name,
                    pid,
                    "backends.py:559",
                    String.format(Locale.ROOT, "Dynamo bytecode transform time: %.2f s", dynamoSeconds));
        });
    }

    void kvCache(int core, double kvGib, int kvTokens, int maxModelLen) {
        String concurrency = String.format(
                Locale.ROOT, "%,d tokens per request: %.2fx", maxModelLen, (double) kvTokens / maxModelLen);
        eachCore(core, (name, pid) -> {
            log.info(
                    name,
                    pid,
                    "gpu_worker.py:298",
                    String.format(Locale.ROOT, "Available KV cache memory: %.2f GiB", kvGib));
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
                        "kv_cache_utils.py:1087",
                        String.format(Locale.ROOT, "GPU KV cache size: %,d tokens", kvTokens));
                log.info(name, pid, "kv_cache_utils.py:1091", "Maximum concurrency for " + concurrency);
            }
        });
    }

    void initEngine(int core, double seconds, double compilationSeconds) {
        String took = v031()
                ? String.format(Locale.ROOT, "%.2f s (compilation: %.2f s)", seconds, compilationSeconds)
                : String.format(Locale.ROOT, "%.2f seconds", seconds);
        eachCore(
                core,
                (name, pid) -> log.info(
                        name, pid, "core.py:210", "init engine (profile, create kv cache, warmup model) took " + took));
    }

    /** The API servers come up: one with a single engine core, one per core with data parallel. */
    void serving(int pid, String url) {
        int servers = deployment.apiServers();
        for (int i = 0; i < servers; i++) {
            String name = servers == 1 ? API : "ApiServer_" + i;
            int serverPid = servers == 1 ? pid : apiServerPid(pid, i);
            log.info(name, serverPid, "api_server.py:1971", "Supported tasks: ['generate']");
            log.info(name, serverPid, "api_server.py:2015", "Starting vLLM server on " + url);
            List<String> uvicorn = List.of(
                    "INFO:     Started server process [" + serverPid + "]",
                    "INFO:     Waiting for application startup.",
                    "INFO:     Application startup complete.");
            // vLLM 0.31's uvicorn lines are behind the API server's prefix; older ones had none.
            log.bare(v031() ? name : "", serverPid, uvicorn);
        }
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
    void startupFailure(int pid, String reason) {
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
                API,
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
     * The engine dies while serving: {@code EngineCore encountered a fatal error.} with the root exception, the API
     * server's output handler failing with {@code EngineDeadError}, and the launcher's {@code VLLM Engine failed,
     * terminating server.} (logger.fatal: CRITICAL).
     */
    void fatalError(int pid, String reason) {
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
                API,
                pid,
                "ERROR",
                "async_llm.py:487",
                List.of(
                        "AsyncLLM output_handler failed.",
                        "Traceback (most recent call last):",
                        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                                + "(above) for the root cause."));
        log.line(API, pid, "CRITICAL", "launcher.py:116", "VLLM Engine failed, terminating server.");
    }

    /**
     * {@code vllm snapshot restore} failed: the controller makes no log calls, so what shows is Python's traceback of
     * the uncaught error on its stderr (the module path is the simulator's guess).
     */
    void restoreFailure(String error) {
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

    /** The preload daemon's READY line. */
    static String daemonReady(SimulatorProperties.Deployment.Formats formats, double seconds, String socketDir) {
        if (formats == SimulatorProperties.Deployment.Formats.V0_31) {
            return "===== Weight cache daemon READY: node 0/1 serving 1 local rank(s) in " + socketDir + " =====";
        }
        return String.format(
                Locale.ROOT, "===== Weight cache daemon READY: all 1 ranks serving in %.2fs =====", seconds);
    }

    /**
     * Each engine core writes the line: {@code EngineCore_DP<i>} with pid {@code core + i}; the late core's waits while
     * it has not begun.
     */
    private void eachCore(int core, CoreLine line) {
        for (int i = 0; i < deployment.dataParallelSize(); i++) {
            int index = i;
            if (lateCoreWaits && index == deployment.dataParallelSize() - 1) {
                lateLines.add(() -> line.write(core(index), core + index));
            } else {
                line.write(core(index), core + index);
            }
        }
    }

    /** Each engine core writes its weights' lines; the late core begins (its held-back lines) after the first's. */
    private void eachCoreLoading(int core, CoreLine line) {
        for (int i = 0; i < deployment.dataParallelSize(); i++) {
            line.write(core(i), core + i);
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
}
