package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every message the simulator writes, pinned to the {@code %}-format string vLLM logs it with (docs/simulator.md §2.8
 * names the file and version of each): each format is turned into a regular expression ({@link #regex}) and every
 * line the simulator writes must match one of its formats' expressions, whole, and every format must be written. A
 * message that drifts from vLLM's format, or a line vLLM never wrote, fails here.
 */
class VllmLinesTests {

    // --- vLLM 0.31's formats (vLLM main as read in docs/simulator.md §2.8; 0.31.0's tag not resolved) ---

    /** vllm/entrypoints/utils.py, log_non_default_args (unconfirmed at a commit: as issue 18's 0.31 logs show it). */
    static final String NON_DEFAULT_ARGS = "non-default args: %s";
    /** vllm/engine/arg_utils.py (unconfirmed at a commit: as issue 18's 0.31 data-parallel logs show it). */
    static final String API_SERVER_COUNT = "Defaulting api_server_count to data_parallel_size (%d).";
    /** vllm/v1/engine/core.py, EngineCore.__init__ (same text in 0.10.1). */
    static final String INITIALIZING = "Initializing a V1 LLM engine (v%s) with config: %s";
    /** vllm/v1/worker/gpu_model_runner.py, load_model (same text in 0.10.1). */
    static final String STARTING_TO_LOAD = "Starting to load model %s...";
    /** vllm/model_executor/model_loader/default_loader.py, load_weights (same text in 0.10.1). */
    static final String LOADING_WEIGHTS = "Loading weights took %.2f seconds";
    /** vllm/v1/worker/gpu_model_runner.py, load_model with a drafter. */
    static final String LOADING_DRAFTER = "Loading drafter model...";
    /** vllm/v1/worker/gpu/model_runner.py, load_model: {@code format_gib} is Python's {@code round(x, 2)}. */
    static final String MODEL_LOADING = "Model loading took %s GiB memory and %.6f seconds";
    /** vllm/compilation/backends.py, VllmBackend.__call__ (same text in 0.10.1). */
    static final String CACHE_DIRECTORY = "Using cache directory: %s for vLLM's torch.compile";
    /** vllm/compilation/backends.py, VllmBackend.__call__ (same text in 0.10.1). */
    static final String DYNAMO = "Dynamo bytecode transform time: %.2f s";
    /** vllm/compilation/backends.py, CompilerManager.compile (compile ranges since vLLM 0.13). */
    static final String COMPILING = "Compiling a graph for compile range %s takes %.2f s";
    /** vllm/compilation/backends.py, CompilerManager.load (as vLLM 0.31-era logs show it). */
    static final String CACHE_LOADED =
            "Directly load the compiled graph(s) for compile range %s from the cache, took %.3f s";
    /** vllm/compilation/monitor.py, monitor_torch_compile's default message (v0.32.0 adds a {@code %s} tag). */
    static final String COMPILE_TOTAL = "torch.compile took %.2f s in total";
    /** vllm/v1/worker/gpu_model_runner.py, capture_model (same text in 0.10.1). */
    static final String GRAPHS_CAPTURED = "Graph capturing finished in %.0f secs, took %.2f GiB";
    /** vllm/v1/worker/gpu_worker.py, determine_available_memory ({@code format_gib} in newer versions). */
    static final String KV_MEMORY = "Available KV cache memory: %s GiB";
    /**
     * vllm/v1/core/kv_cache_utils.py: one line, as issue 18 quotes real 0.31 logs (unconfirmed in source; the
     * token counts are {@code f"{n:,}"}).
     */
    static final String KV_CACHE_ONE_LINE =
            "GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx";
    /** vllm/v1/engine/core.py, _initialize_kv_caches. */
    static final String INIT_ENGINE =
            "init engine (profile, create kv cache, warmup model) took %.2f s (compilation: %.2f s)";
    /** vllm/entrypoints/openai/api_server.py (S-api-server). */
    static final String SUPPORTED_TASKS = "Supported tasks: %s";
    /** vllm/entrypoints/openai/api_server.py (S-api-server). */
    static final String STARTING_SERVER = "Starting vLLM server on %s";
    /** vllm/entrypoints/launcher.py, serve_http (@02828a12; same text in 0.10.1). */
    static final String SHUTTING_DOWN = "Shutting down FastAPI HTTP server.";
    /** vllm/model_executor/model_loader/weight_cache/ipc_loader.py (@0094a8a1). */
    static final String MAPPED = "Mapped %d tensors from the weight cache daemon (%s mode)";
    /** The default of {@code preload.held-outside-line}: its text after the colon is the simulator's guess. */
    static final String HELD_OUTSIDE = "Weights are held outside this process: %.2f GiB";
    /** vllm/model_executor/model_loader/weight_cache/ipc_loader.py (@0094a8a1). */
    static final String UNUSABLE = "Weight cache unusable (%s); falling back to disk loading";

    // --- sleep mode (--enable-sleep-mode, VLLM_SERVER_DEV_MODE=1); /tmp/sleep-facts.md's reading, commits as noted ---

    /** vllm/device_allocator/cumem.py, CuMemAllocator.sleep (@010c2112). */
    static final String CUMEM_SLEEP =
            "CuMemAllocator: sleep freed %.2f GiB memory in total, of which %.2f GiB is backed up"
                    + " in CPU and the rest %.2f GiB is discarded directly.";
    /** vllm/v1/worker/gpu_worker.py, Worker.sleep (@35d5cda1). */
    static final String SLEEP_FREED = "Sleep mode freed %.2f GiB memory, %.2f GiB memory is still in use.";
    /** vllm/v1/executor/abstract.py, Executor.sleep (commit not recorded; 0.10.1: executor_base.py). */
    static final String FELL_ASLEEP = "It took %.6f seconds to fall asleep.";
    /** vllm/v1/executor/abstract.py, Executor.wake_up (commit not recorded; 0.10.1: executor_base.py). */
    static final String WOKE_UP = "It took %.6f seconds to wake up tags %s.";
    /** vllm/v1/executor/abstract.py, Executor.sleep: a sleep while asleep (commit not recorded). */
    static final String ALREADY_SLEEPING = "Executor is already sleeping.";
    /** vllm/v1/executor/abstract.py, Executor.wake_up: a wake while awake (commit not recorded). */
    static final String NOT_SLEEPING = "Executor is not sleeping.";
    /** vllm/v1/executor/abstract.py, Executor.wake_up: a tag that does not sleep (commit not recorded). */
    static final String TAG_NOT_SLEEPING = "Tag %s is not in sleeping tags %s";
    /** vllm/entrypoints/serve/sleep/api_router.py, wake_up (@09cb327f; 0.10.1: entrypoints/openai/api_server.py). */
    static final String WAKE_REQUESTED = "wake up the engine with tags: %s";

    static final List<String> SLEEP_MODE = List.of(
            CUMEM_SLEEP,
            SLEEP_FREED,
            FELL_ASLEEP,
            WOKE_UP,
            ALREADY_SLEEPING,
            NOT_SLEEPING,
            TAG_NOT_SLEEPING,
            WAKE_REQUESTED);

    // --- an uncaught configuration error in the API server (config-error): Python's traceback, no logger header ---

    /** pydantic-core 2.x, ValidationError's title: {@code {count} validation error for {title}}. */
    static final String VALIDATION_ERROR = "pydantic_core._pydantic_core.ValidationError: %d validation error for %s";
    /** pydantic-core 2.x, each error's line: {@code   {msg} [type={type}, input_value={repr}, input_type={type}]}. */
    static final String VALIDATION_DETAIL = "  %s [type=%s, input_value=%s, input_type=%s]";
    /** pydantic-core 2.x, the documentation link after each error (pydantic 2.11 here). */
    static final String VALIDATION_URL = "    For further information visit https://errors.pydantic.dev/%s/v/%s";

    // --- vLLM 0.10.1's formats (legacy) ---

    /** vllm/entrypoints/openai/api_server.py, run_server. */
    static final String API_SERVER_VERSION = "vLLM API server version %s";
    /** vllm/v1/worker/gpu_model_runner.py, load_model. */
    static final String MODEL_LOADING_LEGACY = "Model loading took %.4f GiB and %.6f seconds";
    /** vllm/compilation/backends.py, CompilerManager.compile (runtime_shape None). */
    static final String COMPILING_LEGACY = "Compiling a graph for dynamic shape takes %.2f s";
    /** vllm/compilation/backends.py, CompilerManager.load (runtime_shape None). */
    static final String CACHE_LOADED_LEGACY =
            "Directly load the compiled graph(s) for dynamic shape from the cache, took %.3f s";
    /** vllm/compilation/monitor.py, end_monitoring_torch_compile (also v0.10.2's and v0.16.0's). */
    static final String COMPILE_TOTAL_LEGACY = "torch.compile takes %.2f s in total";
    /** vllm/v1/worker/gpu_worker.py, determine_available_memory. */
    static final String KV_MEMORY_LEGACY = "Available KV cache memory: %.2f GiB";
    /** vllm/v1/core/kv_cache_utils.py, get_kv_cache_config. */
    static final String KV_CACHE_SIZE_LEGACY = "GPU KV cache size: %s tokens";
    /** vllm/v1/core/kv_cache_utils.py, get_kv_cache_config. */
    static final String CONCURRENCY_LEGACY = "Maximum concurrency for %s tokens per request: %.2fx";
    /** vllm/v1/engine/core.py, _initialize_kv_caches. */
    static final String INIT_ENGINE_LEGACY = "init engine (profile, create kv cache, warmup model) took %.2f seconds";
    /** vllm/entrypoints/openai/api_server.py, run_server. */
    static final String SUPPORTED_TASKS_LEGACY = "Supported_tasks: %s";
    /** vllm/entrypoints/openai/api_server.py, run_server (its API server index). */
    static final String STARTING_SERVER_LEGACY = "Starting vLLM API server %d on %s";

    // --- the weight cache daemon (vllm preload) ---

    /** vllm/model_executor/model_loader/weight_cache/daemon.py, WeightCacheDaemon.load_model (@0094a8a1). */
    static final String DAEMON_CACHED = "Weight cache daemon rank %d cached %d tensors";
    /** weight_cache/daemon.py, WeightCacheDaemon.serve_forever, logged (@0094a8a1). */
    static final String DAEMON_SERVING = "Weight cache daemon rank %d serving on %s";
    /** weight_cache/daemon.py, WeightCacheDaemon.serve_forever, printed: no logger header (@0094a8a1). */
    static final String DAEMON_READY_PRINT = "Weight cache daemon rank %d ready: serving on %s";
    /** vllm/entrypoints/cli/preload.py, PreloadSubcommand.cmd (@1834c0c8). */
    static final String DAEMON_READY =
            "===== Weight cache daemon READY: node %d/%d serving %d local rank(s) x %d role(s) in %s =====";
    /** weight_cache/daemon.py, main (@0094a8a1): the daemon module before {@code vllm preload}. */
    static final String DAEMON_READY_LEGACY = "===== Weight cache daemon READY: all %d ranks serving in %s =====";

    /** uvicorn's own lines (uvicorn/server.py, uvicorn/lifespan/on.py), printed without vLLM's logger. */
    static final List<String> UVICORN = List.of(
            "INFO:     Started server process [%d]",
            "INFO:     Waiting for application startup.", "INFO:     Application startup complete.");

    /** vLLM's header: {@code (Process pid=N) LEVEL MM-dd HH:mm:ss [file.py:N] message}, the prefix optional. */
    private static final Pattern HEADER = Pattern.compile(
            "^(?:\\((?<process>[A-Za-z_0-9]+(?: TP\\d+)?) pid=\\d+\\) )?(?<level>INFO|WARNING|ERROR|CRITICAL) "
                    + "\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\[(?<source>[\\w.]+\\.py:\\d+)] (?<message>.*)$");

    private static final Pattern BARE =
            Pattern.compile("^(?:\\((?<process>[A-Za-z_0-9]+(?: TP\\d+)?) pid=\\d+\\) )?(?<message>.*)$");

    /** The banner's lines (vllm/entrypoints/utils.py, log_version_and_model, as a public vLLM 0.16 log shows it). */
    private static final Pattern BANNER = Pattern.compile(
            "|\\s+█\\s+█\\s+█▄\\s+▄█|\\s*▄▄ ▄█ █\\s+█\\s+█ ▀▄▀ █\\s+version .+|\\s*█▄█▀ █\\s+█\\s+█\\s+█\\s+model\\s+.+"
                    + "|\\s*▀▀\\s+▀▀▀▀▀ ▀▀▀▀▀ ▀\\s+▀");

    @TempDir
    Path workDir;

    private RunningSimulator running;

    @AfterEach
    void stop() {
        if (running != null) {
            running.close();
        }
    }

    @Test
    void formatsBecomeWholeLineExpressions() {
        assertThat(regex("Loading weights took %.2f seconds")
                        .matcher("Loading weights took 1.35 seconds")
                        .matches())
                .isTrue();
        assertThat(regex("Loading weights took %.2f seconds")
                        .matcher("Loading weights took 1.3 seconds")
                        .matches())
                .isFalse();
        assertThat(regex("Graph capturing finished in %.0f secs, took %.2f GiB")
                        .matcher("Graph capturing finished in 5 secs, took 0.42 GiB")
                        .matches())
                .isTrue();
        assertThat(regex("Mapped %d tensors (%s mode)")
                        .matcher("Mapped 339 tensors (zero_copy mode)")
                        .matches())
                .isTrue();
        assertThat(regex("Mapped %d tensors (%s mode)")
                        .matcher("Mapped x tensors (zero_copy mode)")
                        .matches())
                .isFalse();
        assertThat(regex("100%% done").matcher("100% done").matches()).isTrue();
    }

    @Test
    void v031LinesAreVllm031Formats() {
        List<Line> lines = drive("deployment.formats=v0-31");
        List<String> formats = List.of(
                NON_DEFAULT_ARGS,
                INITIALIZING,
                STARTING_TO_LOAD,
                LOADING_WEIGHTS,
                MODEL_LOADING,
                CACHE_DIRECTORY,
                DYNAMO,
                COMPILING,
                CACHE_LOADED,
                COMPILE_TOTAL,
                GRAPHS_CAPTURED,
                KV_MEMORY,
                KV_CACHE_ONE_LINE,
                INIT_ENGINE,
                SUPPORTED_TASKS,
                STARTING_SERVER,
                SHUTTING_DOWN,
                MAPPED,
                HELD_OUTSIDE,
                UNUSABLE);

        assertEveryLineIsOneOf(lines, formats);
        assertThat(lines)
                .filteredOn(line -> line.level() != null)
                .filteredOn(line -> !line.process().equals(VllmLines.API))
                .allMatch(line -> line.process().equals("EngineCore"), "a single engine core is (EngineCore pid=N)");
        assertThat(lines)
                .filteredOn(line -> line.message().startsWith("Supported tasks")
                        || line.message().startsWith("Shutting down"))
                .isNotEmpty()
                .allMatch(line -> line.process().equals("APIServer"));
        assertThat(lines)
                .filteredOn(line -> line.level() == null && line.message().startsWith("INFO:"))
                .hasSize(3)
                .allMatch(line -> line.process().equals("APIServer"), "0.31's uvicorn lines behind the prefix");
        assertThat(lines)
                .anyMatch(line ->
                        line.level() != null && BANNER.matcher(line.message()).matches());
    }

    @Test
    void legacyLinesAreVllm0101Formats() {
        List<Line> lines = drive("deployment.formats=legacy");
        List<String> formats = List.of(
                API_SERVER_VERSION,
                NON_DEFAULT_ARGS,
                INITIALIZING,
                STARTING_TO_LOAD,
                LOADING_WEIGHTS,
                MODEL_LOADING_LEGACY,
                CACHE_DIRECTORY,
                DYNAMO,
                COMPILING_LEGACY,
                CACHE_LOADED_LEGACY,
                COMPILE_TOTAL_LEGACY,
                GRAPHS_CAPTURED,
                KV_MEMORY_LEGACY,
                KV_CACHE_SIZE_LEGACY,
                CONCURRENCY_LEGACY,
                INIT_ENGINE_LEGACY,
                SUPPORTED_TASKS_LEGACY,
                STARTING_SERVER_LEGACY,
                SHUTTING_DOWN,
                MAPPED,
                HELD_OUTSIDE,
                UNUSABLE);

        assertEveryLineIsOneOf(lines, formats);
        assertThat(lines)
                .filteredOn(line -> line.level() != null && !line.process().isEmpty())
                .isNotEmpty()
                .allMatch(line -> line.process().equals("EngineCore_0"), "0.10.1's engine core is EngineCore_0");
        assertThat(lines)
                .filteredOn(line -> line.message().startsWith("Supported_tasks")
                        || line.message().startsWith("Shutting down")
                        || line.message().startsWith("vLLM API server version"))
                .hasSize(3)
                .allMatch(line -> line.process().isEmpty(), "0.10.1's API server has no prefix");
    }

    @Test
    void dataParallelAndDrafterLinesAreVllmFormats() {
        List<Line> lines = drive("deployment.data-parallel-size=2", "deployment.speculative-decoding=true");

        assertThat(lines)
                .anyMatch(line -> matches(API_SERVER_COUNT, line))
                .anyMatch(line -> matches(LOADING_DRAFTER, line))
                .filteredOn(line -> line.level() != null && line.process().startsWith("EngineCore"))
                .extracting(Line::process)
                .containsOnly("EngineCore_DP0", "EngineCore_DP1");
    }

    /**
     * Tensor parallel: the per-rank lines come from the workers (v1/executor/multiproc_executor.py names them {@code
     * Worker_TP<r>}; 0.10.1 {@code VllmWorker TP<r>}, as real 0.10.1 logs show), in the same formats; the engine
     * core keeps its header, the KV cache size and {@code init engine}.
     */
    @Test
    void tensorParallelWorkersWriteTheRankLinesInVllmFormats() {
        List<Line> lines = drive("deployment.tensor-parallel-size=2");
        assertThat(lines)
                .filteredOn(line -> line.level() != null && line.process().startsWith("Worker"))
                .extracting(Line::process)
                .containsOnly("Worker_TP0", "Worker_TP1");
        assertThat(lines)
                .filteredOn(line -> line.process().equals("EngineCore"))
                .allMatch(line ->
                        matches(INITIALIZING, line) || matches(KV_CACHE_ONE_LINE, line) || matches(INIT_ENGINE, line));
        assertThat(lines)
                .filteredOn(line -> matches(KV_MEMORY, line))
                .singleElement()
                .extracting(Line::process)
                .isEqualTo("Worker_TP0");

        List<Line> legacy = drive("deployment.tensor-parallel-size=2", "deployment.formats=legacy");
        assertThat(legacy)
                .filteredOn(line -> line.process().startsWith("VllmWorker"))
                .extracting(Line::process)
                .containsOnly("VllmWorker TP0", "VllmWorker TP1");
        assertThat(legacy)
                .filteredOn(line -> matches(KV_MEMORY_LEGACY, line))
                .extracting(Line::process)
                .containsExactly("VllmWorker TP0", "VllmWorker TP1");
    }

    /**
     * {@code config-error}: the API server's uncaught {@code ValidationError} from {@code VllmConfig(...)}
     * (vllm/engine/arg_utils.py, create_engine_config; pydantic-core's text), line for line as fixture {@code
     * v0.31-api-server-validation-error.log} shows it, behind the API server's prefix (none in 0.10.1).
     */
    @Test
    void configErrorIsPydanticsUncaughtValidationError() throws IOException {
        List<String> fixture =
                Files.readAllLines(Path.of("src/test/resources/vllm-logs/v0.31-api-server-validation-error.log"))
                        .stream()
                        .dropWhile(line -> !line.contains(") Traceback"))
                        .toList();
        for (String formats : List.of("v0-31", "legacy")) {
            SimulatorProperties properties = RunningSimulator.properties(workDir, "deployment.formats=" + formats);
            Path file = workDir.resolve("config-error-" + formats + ".log");
            Clock clock = Clock.fixed(Instant.parse("2026-10-05T14:02:11Z"), ZoneOffset.UTC);
            try (EngineLog log = new EngineLog(file, null, clock, properties.deployment(), "vllm-lines-test")) {
                new VllmLines(properties.deployment(), log).configError(1, "hf_SECRETvalue");
                log.flush();
            }
            List<Line> lines = parse(Files.readString(file));
            String prefix = formats.equals("v0-31") ? "(APIServer pid=1) " : "";
            assertThat(lines)
                    .extracting(Line::text)
                    .containsExactlyElementsOf(fixture.stream()
                            .map(line -> line.replace("(APIServer pid=1) ", prefix))
                            .toList());
            assertThat(lines).allMatch(line -> line.level() == null, "Python's traceback, not a logged line");
            assertThat(lines)
                    .anyMatch(line ->
                            regex(VALIDATION_ERROR).matcher(line.message()).matches())
                    .anyMatch(line ->
                            regex(VALIDATION_DETAIL).matcher(line.message()).matches())
                    .anyMatch(line ->
                            regex(VALIDATION_URL).matcher(line.message()).matches());
        }
    }

    /**
     * Sleep mode's lines, each in its vLLM format, from the process vLLM writes it in: the allocator's and the worker's
     * from each rank (the engine core itself with tensor parallel 1), the executor's from the engine core, the wake
     * request from the API server (none in 0.10.1).
     */
    @Test
    void sleepModeLinesAreVllmFormats() {
        for (String formats : List.of("v0-31", "legacy")) {
            List<Line> lines = driveSleep("deployment.formats=" + formats);
            assertThat(lines).hasSize(8);
            for (Line line : lines) {
                assertThat(SLEEP_MODE.stream().anyMatch(format -> matches(format, line)))
                        .as("a sleep-mode line in one of vLLM's formats: %s", line.text())
                        .isTrue();
            }
            for (String format : SLEEP_MODE) {
                assertThat(lines).as("written: " + format).anyMatch(line -> matches(format, line));
            }
            String core = formats.equals("v0-31") ? "EngineCore" : "EngineCore_0";
            assertThat(lines)
                    .filteredOn(line -> matches(WAKE_REQUESTED, line))
                    .singleElement()
                    .extracting(Line::process)
                    .isEqualTo(formats.equals("v0-31") ? "APIServer" : "");
            assertThat(lines)
                    .filteredOn(line -> !matches(WAKE_REQUESTED, line))
                    .allMatch(line -> line.process().equals(core), core);
        }
        List<Line> tensorParallel = driveSleep("deployment.tensor-parallel-size=2");
        assertThat(tensorParallel)
                .filteredOn(line -> matches(CUMEM_SLEEP, line) || matches(SLEEP_FREED, line))
                .extracting(Line::process)
                .containsExactly("Worker_TP0", "Worker_TP0", "Worker_TP1", "Worker_TP1");
        assertThat(tensorParallel)
                .filteredOn(line -> matches(FELL_ASLEEP, line))
                .extracting(Line::process)
                .containsExactly("EngineCore");
    }

    private List<Line> driveSleep(String... overrides) {
        SimulatorProperties properties = RunningSimulator.properties(workDir, overrides);
        Path file = workDir.resolve("vllm-sleep-lines-" + System.nanoTime() + ".log");
        Clock clock = Clock.fixed(Instant.parse("2026-10-05T14:02:11Z"), ZoneOffset.UTC);
        try (EngineLog log = new EngineLog(file, null, clock, properties.deployment(), "vllm-lines-test")) {
            VllmLines lines = new VllmLines(properties.deployment(), log);
            int pid = 4242;
            int core = pid + 1;
            lines.fellAsleep(core, 8.12, 1.12, 0.51, 0.139712);
            lines.alreadySleeping(core);
            lines.wakeRequested(pid, "['weights']");
            lines.wokeUp(core, 0.107283, "['weights']");
            lines.tagNotSleeping(core, "weights", "{'kv_cache'}");
            lines.notSleeping(core);
            log.flush();
        }
        return parseFile(file);
    }

    @Test
    void daemonLinesAreVllmPreloadFormats() {
        running = RunningSimulator.serving(workDir.resolve("v0-31"));
        List<String> daemon = running.daemonLog().lines().toList();
        assertDaemonLines(daemon, DAEMON_READY);
        assertThat(daemon).last().asString().contains("in the default socket dir =====");
        running.close();

        running = RunningSimulator.serving(workDir.resolve("legacy"), "deployment.formats=legacy");
        assertDaemonLines(running.daemonLog().lines().toList(), DAEMON_READY_LEGACY);
        assertThat(VllmLines.daemonReady(SimulatorProperties.Deployment.Formats.LEGACY, "/run/wc"))
                .matches(regex(DAEMON_READY_LEGACY));
        assertThat(VllmLines.daemonReady(SimulatorProperties.Deployment.Formats.V0_31, "/run/wc"))
                .matches(regex(DAEMON_READY));
    }

    @Test
    void aStartedSimulatorsEngineLogIsVllmFormats() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        running.simulator.restart(StartupPath.COLD).block(java.time.Duration.ofSeconds(10));
        running.awaitServing();
        List<Line> lines = parse(running.engineLog());
        assertEveryLineIsOneOf(
                lines,
                List.of(
                        NON_DEFAULT_ARGS,
                        INITIALIZING,
                        STARTING_TO_LOAD,
                        LOADING_WEIGHTS,
                        MODEL_LOADING,
                        CACHE_DIRECTORY,
                        DYNAMO,
                        COMPILING,
                        CACHE_LOADED,
                        COMPILE_TOTAL,
                        GRAPHS_CAPTURED,
                        KV_MEMORY,
                        KV_CACHE_ONE_LINE,
                        INIT_ENGINE,
                        SUPPORTED_TASKS,
                        STARTING_SERVER,
                        SHUTTING_DOWN));
    }

    private static void assertDaemonLines(List<String> daemon, String ready) {
        List<Line> lines = daemon.stream().map(VllmLinesTests::line).toList();
        List<String> formats = List.of(LOADING_WEIGHTS, DAEMON_CACHED, DAEMON_SERVING, ready);
        assertThat(lines).isNotEmpty().allMatch(line -> line.process().isEmpty(), "vllm preload has no prefix");
        for (Line line : lines) {
            boolean known = line.level() == null
                    ? regex(DAEMON_READY_PRINT).matcher(line.message()).matches()
                    : formats.stream().anyMatch(format -> matches(format, line));
            assertThat(known)
                    .as("a daemon line in one of vLLM's formats: %s", line.text())
                    .isTrue();
        }
        for (String format : formats) {
            assertThat(lines).as("written: " + format).anyMatch(line -> line.level() != null && matches(format, line));
        }
        assertThat(lines).anyMatch(line -> line.level() == null);
    }

    /**
     * Every line matches one of {@code formats} (a logged line), the banner, or uvicorn's lines (bare), and every
     * format is written at least once.
     */
    private static void assertEveryLineIsOneOf(List<Line> lines, List<String> formats) {
        assertThat(lines).isNotEmpty();
        for (Line line : lines) {
            boolean known = line.level() == null
                    ? UVICORN.stream()
                            .anyMatch(format ->
                                    regex(format).matcher(line.message()).matches())
                    : BANNER.matcher(line.message()).matches()
                            || formats.stream().anyMatch(format -> matches(format, line));
            assertThat(known)
                    .as("a line in one of vLLM's formats: %s", line.text())
                    .isTrue();
        }
        for (String format : formats) {
            assertThat(lines).as("written: " + format).anyMatch(line -> line.level() != null && matches(format, line));
        }
    }

    private static boolean matches(String format, Line line) {
        return regex(format).matcher(line.message()).matches();
    }

    /**
     * A Python {@code %}-format string as a whole-message expression: {@code %s} any text, {@code %d} an integer,
     * {@code %.Nf} a number with N decimals ({@code %.0f} none), {@code %%} a per cent sign; the rest literally.
     */
    static Pattern regex(String format) {
        Matcher specifier = Pattern.compile("%(?:%|\\.(\\d+)f|[sd])").matcher(format);
        StringBuilder regex = new StringBuilder();
        int at = 0;
        while (specifier.find()) {
            regex.append(Pattern.quote(format.substring(at, specifier.start())));
            String found = specifier.group();
            if (found.equals("%%")) {
                regex.append('%');
            } else if (found.equals("%s")) {
                regex.append(".+");
            } else if (found.equals("%d")) {
                regex.append("-?\\d+");
            } else {
                int decimals = Integer.parseInt(specifier.group(1));
                regex.append(decimals == 0 ? "-?\\d+" : "-?\\d+\\.\\d{" + decimals + "}");
            }
            at = specifier.end();
        }
        regex.append(Pattern.quote(format.substring(at)));
        return Pattern.compile(regex.toString());
    }

    /**
     * Runs VllmLines through two starts (a cold one that compiles, a preload hit that loads the compiled graphs,
     * and a fallback), a shutdown, into a log file read back as lines.
     */
    private List<Line> drive(String... overrides) {
        SimulatorProperties properties = RunningSimulator.properties(workDir, overrides);
        Path file = workDir.resolve("vllm-lines-" + System.nanoTime() + ".log");
        Clock clock = Clock.fixed(Instant.parse("2026-10-05T14:02:11Z"), ZoneOffset.UTC);
        try (EngineLog log = new EngineLog(file, null, clock, properties.deployment(), "vllm-lines-test")) {
            VllmLines lines = new VllmLines(properties.deployment(), log);
            int pid = 4242;
            int core = pid + 1;
            String model = "Qwen/Qwen3-0.6B";
            lines.header(pid, "0.31.0", model, "{'model_tag': 'Qwen/Qwen3-0.6B'}");
            lines.initializing(core, "0.31.0", "model='Qwen/Qwen3-0.6B', load_format=auto");
            lines.startingToLoad(core, model);
            lines.loaded(core, 1.35, 1.1214, 1.5);
            lines.compiling(core, 0.3, 0.6);
            lines.kvCache(core, 7.0, 65536, 4096);
            lines.graphsCaptured(core, 5, 0.42);
            lines.initEngine(core, 1.35, 0.6);
            lines.serving(pid, "http://127.0.0.1:18000");
            lines.shuttingDown(pid);
            lines.initializing(core + 10, "0.31.0", "model='Qwen/Qwen3-0.6B', load_format=ipc_cache");
            lines.mapped(core + 10, 339, "zero_copy", properties.preload(), 1.1214, 0.16);
            lines.compiling(core + 10, 0.3, 0.6);
            lines.cacheUnusable(core + 20, "Weight cache daemon error: Weights were released");
            log.flush();
        }
        return parseFile(file);
    }

    private static List<Line> parseFile(Path file) {
        try {
            return parse(Files.readString(file));
        } catch (IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    private static List<Line> parse(String log) {
        List<Line> lines = new ArrayList<>();
        log.lines().forEach(text -> lines.add(line(text)));
        return lines;
    }

    private static Line line(String text) {
        Matcher header = HEADER.matcher(text);
        if (header.matches()) {
            return new Line(
                    text,
                    header.group("process") == null ? "" : header.group("process"),
                    header.group("level"),
                    header.group("message"));
        }
        Matcher bare = BARE.matcher(text);
        bare.matches();
        return new Line(text, bare.group("process") == null ? "" : bare.group("process"), null, bare.group("message"));
    }

    /** One log line: its process prefix (empty for none), level (null for a line written without vLLM's logger). */
    record Line(String text, String process, String level, String message) {}
}
