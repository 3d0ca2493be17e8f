package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.readygate.evidence.LogEvent.ApplicationStartup;
import dev.readygate.evidence.LogEvent.AvailableKvCache;
import dev.readygate.evidence.LogEvent.CacheFallback;
import dev.readygate.evidence.LogEvent.CacheWaitTimeout;
import dev.readygate.evidence.LogEvent.CompileTotal;
import dev.readygate.evidence.LogEvent.CompiledGraphsLoaded;
import dev.readygate.evidence.LogEvent.DaemonReady;
import dev.readygate.evidence.LogEvent.EngineFatal;
import dev.readygate.evidence.LogEvent.GraphCompiled;
import dev.readygate.evidence.LogEvent.GraphsCaptured;
import dev.readygate.evidence.LogEvent.InitEngine;
import dev.readygate.evidence.LogEvent.KvCacheSize;
import dev.readygate.evidence.LogEvent.LoadingWeights;
import dev.readygate.evidence.LogEvent.MappedFromCache;
import dev.readygate.evidence.LogEvent.ModelLoading;
import dev.readygate.evidence.LogEvent.NonDefaultArgs;
import dev.readygate.evidence.LogEvent.ServerStarting;
import dev.readygate.evidence.LogEvent.ServerVersion;
import dev.readygate.evidence.LogEvent.WeightsDownloaded;
import dev.readygate.evidence.LogEvent.WeightsHeldOutside;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.util.unit.DataSize;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/** vLLM's log lines as the reference quotes them (§4.5, §5.4, §6), as older versions and the simulator write them. */
class VllmLogParserTests {

    static final Instant NOW = Instant.parse("2026-11-30T12:10:00Z");

    static final Instant AT = Instant.parse("2026-11-30T12:05:20Z");

    final VllmLogParser parser = new VllmLogParser(Clock.fixed(NOW, ZoneOffset.UTC));

    final List<Disposable> disposables = new CopyOnWriteArrayList<>();

    @TempDir
    Path workDir;

    @AfterEach
    void stopFollowing() {
        disposables.forEach(Disposable::dispose);
    }

    static Stream<Arguments> referenceLines() {
        return Stream.of(
                arguments(
                        "INFO 11-30 12:05:20 [api_server.py:1839] vLLM API server version 0.31.0",
                        new ServerVersion(AT, null, null, "0.31.0")),
                arguments(
                        "(EngineCore_DP0 pid=4243) INFO 11-30 12:05:20 [core.py:93] Initializing a V1 LLM engine "
                                + "(v0.31.0) with config: model='Qwen/Qwen3-0.6B', speculative_config=None",
                        new ServerVersion(AT, "EngineCore_DP0", 4243, "0.31.0")),
                arguments(
                        "(APIServer pid=4242) INFO 11-30 12:05:20 [utils.py:253] non-default args: "
                                + "{'model_tag': 'Qwen/Qwen3-0.6B', 'api_key': ['s3cret-key'], 'max_model_len': 4096}",
                        new NonDefaultArgs(
                                AT,
                                "APIServer",
                                4242,
                                "{'model_tag': 'Qwen/Qwen3-0.6B', 'api_key': '<redacted>', 'max_model_len': 4096}")),
                arguments(
                        "INFO 11-30 12:05:20 [default_loader.py:262] Loading weights took 2.62 seconds",
                        new LoadingWeights(AT, null, null, 2.62)),
                arguments(
                        "INFO 11-30 12:05:20 [gpu_model_runner.py:3039] Model loading took 9.7684 GiB memory and "
                                + "82.817632 seconds",
                        new ModelLoading(AT, null, null, 9.7684, 82.817632)),
                arguments(
                        "INFO [ipc_loader.py:203] Mapped 339 tensors from the weight cache daemon (zero_copy mode)",
                        new MappedFromCache(null, null, null, 339, "zero_copy")),
                arguments(
                        "INFO 11-30 12:05:20 [ipc_loader.py:221] Weights are held outside this process: 1.12 GiB",
                        new WeightsHeldOutside(AT, null, null, "1.12 GiB")),
                arguments(
                        "WARNING [ipc_loader.py:139] Weight cache unusable (WeightCacheKey mismatch on fields: "
                                + "['checkpoint']); falling back to disk loading",
                        new CacheFallback(null, null, null, "WeightCacheKey mismatch on fields: ['checkpoint']")),
                arguments(
                        "WARNING 11-30 12:05:20 [ipc_loader.py:139] Weight cache unusable (Weight cache daemon error: "
                                + "Daemon GPU GPU-1 != engine GPU GPU-2; check the socket path / GPU mapping); "
                                + "falling back to disk loading",
                        new CacheFallback(
                                AT,
                                null,
                                null,
                                "Weight cache daemon error: Daemon GPU GPU-1 != engine GPU GPU-2; check the socket "
                                        + "path / GPU mapping")),
                arguments(
                        "WARNING 11-30 12:05:20 [ipc_loader.py:139] Weight cache unusable (Weight cache socket "
                                + "/tmp/vllm-weight-cache/vllm_weight_cache_gpu0.sock is unavailable: [Errno 2] No "
                                + "such file or directory); falling back to disk loading",
                        new CacheFallback(
                                AT,
                                null,
                                null,
                                "Weight cache socket /tmp/vllm-weight-cache/vllm_weight_cache_gpu0.sock is "
                                        + "unavailable: [Errno 2] No such file or directory")),
                arguments(
                        "ERROR 11-30 12:05:20 [ipc_loader.py:150] Weight cache IPC loading failed; falling back to "
                                + "disk loading",
                        new CacheFallback(AT, null, null, "Weight cache IPC loading failed")),
                arguments(
                        "ERROR 11-30 12:05:20 [ipc_loader.py:98] Weight cache daemon did not become ready within "
                                + "300.0 s",
                        new CacheWaitTimeout(
                                AT, null, null, "Weight cache daemon did not become ready within 300.0 s")),
                arguments(
                        "INFO 11-30 12:05:20 [gpu_worker.py:298] Available KV cache memory: 10.53 GiB",
                        new AvailableKvCache(AT, null, null, 10.53)),
                arguments(
                        "INFO 11-30 12:05:20 [kv_cache_utils.py:1087] GPU KV cache size: 65,536 tokens",
                        new KvCacheSize(AT, null, null, 65_536)),
                arguments(
                        "INFO 11-30 12:05:20 [core.py:210] init engine (profile, create kv cache, warmup model) took "
                                + "25.19 seconds",
                        new InitEngine(AT, null, null, 25.19, null)),
                arguments(
                        "(APIServer pid=1) INFO 11-30 12:05:20 [api_server.py:2015] Starting vLLM server on "
                                + "http://0.0.0.0:8000",
                        new ServerStarting(AT, "APIServer", 1, "http://0.0.0.0:8000")),
                arguments("INFO:     Application startup complete.", new ApplicationStartup(null, null, null)),
                arguments(
                        "===== Weight cache daemon READY: all 2 ranks serving in 41.30s =====",
                        new DaemonReady(null, null, null)),
                arguments(
                        "INFO 11-30 12:05:20 [preload.py:214] ===== Weight cache daemon READY: node 0/2 serving 4 "
                                + "local rank(s) x 2 role(s) in 12.30s =====",
                        new DaemonReady(AT, null, null)),
                arguments(
                        "INFO 11-30 12:05:20 [preload.py:201] Weight cache daemon ready: all 1 ranks serving in 3.2s",
                        new DaemonReady(AT, null, null)),
                // SGLang's daemon, its own format (python/sglang/srt/weight_cache/daemon.py @366325d6). Python's
                // default asctime is no collector prefix readygate dates lines by: dated when read, as vLLM's banner.
                arguments(
                        "2026-11-30 12:05:20,512 [Daemon gpu=0 tp_rank=0] INFO [WeightCacheDaemon gpu=0 tp_rank=0]"
                                + " Exported 399 tensors as IPC handles. Ready to serve.",
                        new DaemonReady(null, null, null)),
                arguments(
                        "2026-11-30 12:05:20,512 INFO All 2 weight cache daemons on node 0 are ready (12.3s)",
                        new DaemonReady(null, null, null)),
                arguments(
                        "(EngineCore_DP0 pid=7) ERROR 11-30 12:05:20 [core.py:1062] EngineCore encountered a fatal "
                                + "error: CUDA error: an illegal memory access was encountered",
                        new EngineFatal(
                                AT,
                                "EngineCore_DP0",
                                7,
                                "EngineCore encountered a fatal error: CUDA error: an illegal memory access was "
                                        + "encountered")),
                arguments(
                        "(APIServer pid=6) CRITICAL 11-30 12:05:20 [launcher.py:116] VLLM Engine failed, terminating "
                                + "server.",
                        new EngineFatal(AT, "APIServer", 6, "VLLM Engine failed, terminating server.")),
                arguments(
                        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                                + "(above) for the root cause.",
                        new EngineFatal(
                                null,
                                null,
                                null,
                                "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See "
                                        + "stack trace (above) for the root cause.")));
    }

    @ParameterizedTest
    @MethodSource("referenceLines")
    void parseWhenLineIsAsTheReferenceQuotesItReturnsItsEvent(String line, LogEvent expected) {
        assertThat(parser.parse(line)).isEqualTo(expected);
    }

    /** Lines exactly as the simulator writes them ({@code SimulatedEngine}, {@code WeightCacheDaemon}). */
    static Stream<Arguments> simulatorLines() {
        return Stream.of(
                arguments(
                        "(APIServer pid=4242) INFO 11-30 12:05:20 [api_server.py:1839] vLLM API server version 0.31.0",
                        new ServerVersion(AT, "APIServer", 4242, "0.31.0")),
                arguments(
                        "(APIServer pid=4252) INFO 11-30 12:05:20 [utils.py:253] non-default args: {'model_tag': "
                                + "'Qwen/Qwen3-0.6B', 'host': '127.0.0.1', 'port': 18000, 'model': 'Qwen/Qwen3-0.6B', "
                                + "'revision': 'c1899de289a04d12100db370d81485cdf75e47ca', 'max_model_len': 4096, "
                                + "'load_format': 'ipc_cache', 'model_loader_extra_config': {'socket_dir': "
                                + "'/tmp/w/weight-cache', 'mode': 'zero_copy'}, 'api_key': ['<redacted>']}",
                        new NonDefaultArgs(
                                AT,
                                "APIServer",
                                4252,
                                "{'model_tag': 'Qwen/Qwen3-0.6B', 'host': '127.0.0.1', 'port': 18000, 'model': "
                                        + "'Qwen/Qwen3-0.6B', 'revision': 'c1899de289a04d12100db370d81485cdf75e47ca', "
                                        + "'max_model_len': 4096, 'load_format': 'ipc_cache', "
                                        + "'model_loader_extra_config': {'socket_dir': '/tmp/w/weight-cache', 'mode': "
                                        + "'zero_copy'}, 'api_key': '<redacted>'}")),
                arguments(
                        "(EngineCore_DP0 pid=4243) INFO 11-30 12:05:20 [default_loader.py:262] Loading weights took "
                                + "0.14 seconds",
                        new LoadingWeights(AT, "EngineCore_DP0", 4243, 0.14)),
                arguments(
                        "(EngineCore_DP0 pid=4253) INFO 11-30 12:05:20 [gpu_model_runner.py:3039] Model loading took "
                                + "0.0000 GiB memory and 0.030000 seconds",
                        new ModelLoading(AT, "EngineCore_DP0", 4253, 0.0, 0.03)),
                arguments(
                        "(EngineCore_DP0 pid=4253) INFO 11-30 12:05:20 [ipc_loader.py:203] Mapped 339 tensors from "
                                + "the weight cache daemon (copy mode)",
                        new MappedFromCache(AT, "EngineCore_DP0", 4253, 339, "copy")),
                arguments(
                        "(EngineCore_DP0 pid=4263) WARNING 11-30 12:05:20 [ipc_loader.py:139] Weight cache unusable "
                                + "(Cannot connect to weight cache daemon at /tmp/w/weight-cache/"
                                + "vllm_weight_cache_gpu0.sock: [Errno 111] Connection refused); falling back to disk "
                                + "loading",
                        new CacheFallback(
                                AT,
                                "EngineCore_DP0",
                                4263,
                                "Cannot connect to weight cache daemon at /tmp/w/weight-cache/"
                                        + "vllm_weight_cache_gpu0.sock: [Errno 111] Connection refused")),
                arguments(
                        "(WeightCacheDaemon_TP0 pid=4143) INFO 11-30 12:05:20 [default_loader.py:262] Loading weights "
                                + "took 0.08 seconds",
                        new LoadingWeights(AT, "WeightCacheDaemon_TP0", 4143, 0.08)),
                arguments(
                        "(APIServer pid=4142) INFO 11-30 12:05:20 [preload.py:214] ===== Weight cache daemon READY: "
                                + "all 1 ranks serving in 0.10s =====",
                        new DaemonReady(AT, "APIServer", 4142)),
                arguments("INFO:     Application startup complete.", new ApplicationStartup(null, null, null)),
                // A restored snapshot's child.log: no timestamp, no source.
                arguments(
                        "(APIServer pid=4242) INFO Starting vLLM server on http://127.0.0.1:18000",
                        new ServerStarting(null, "APIServer", 4242, "http://127.0.0.1:18000")),
                arguments(
                        "(APIServer pid=4242) INFO Application startup complete.",
                        new ApplicationStartup(null, "APIServer", 4242)),
                arguments(
                        "(EngineCore_DP0 pid=4243) ERROR 11-30 12:05:20 [core.py:1062] EngineCore encountered a fatal "
                                + "error.",
                        new EngineFatal(AT, "EngineCore_DP0", 4243, "EngineCore encountered a fatal error.")),
                arguments(
                        "(EngineCore_DP0 pid=4243) ERROR 11-30 12:05:20 [core.py:1062] RuntimeError: simulated crash",
                        new LogEvent.ExceptionRaised(AT, "EngineCore_DP0", 4243, "RuntimeError: simulated crash")),
                arguments(
                        "(APIServer pid=4242) CRITICAL 11-30 12:05:20 [launcher.py:116] VLLM Engine failed, "
                                + "terminating server.",
                        new EngineFatal(AT, "APIServer", 4242, "VLLM Engine failed, terminating server.")),
                // vLLM 0.31's formats.
                arguments(
                        "(APIServer pid=4242) INFO:     Application startup complete.",
                        new ApplicationStartup(null, "APIServer", 4242)),
                arguments(
                        "(APIServer pid=4142) INFO 11-30 12:05:20 [preload.py:214] ===== Weight cache daemon READY: node "
                                + "0/1 serving 1 local rank(s) in the default socket dir =====",
                        new DaemonReady(AT, "APIServer", 4142)),
                arguments(
                        "(EngineCore_DP0 pid=4243) INFO 11-30 12:05:20 [model_runner.py:4344] Model loading took 1.12 "
                                + "GiB memory and 0.185000 seconds",
                        new ModelLoading(AT, "EngineCore_DP0", 4243, 1.12, 0.185)),
                arguments(
                        "(APIServer pid=4242) INFO 11-30 12:05:20 [arg_utils.py:1744] Defaulting api_server_count to "
                                + "data_parallel_size (2).",
                        new LogEvent.ApiServerCount(AT, "APIServer", 4242, 2)),
                arguments(
                        "(EngineCore_DP0 pid=4243) ERROR 11-30 12:05:20 [core.py:1100] EngineCore failed to start.",
                        new LogEvent.CoreStartFailed(AT, "EngineCore_DP0", 4243)),
                arguments(
                        "vllm-1  | (APIServer pid=4242) RuntimeError: Engine core initialization failed. See root "
                                + "cause above. Failed core proc(s): {'EngineCore_DP0': 1}",
                        new LogEvent.InitializationFailed(
                                null,
                                "APIServer",
                                4242,
                                "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
                                        + "proc(s): {'EngineCore_DP0': 1}")));
    }

    @ParameterizedTest
    @MethodSource("simulatorLines")
    void parseWhenLineIsAsTheSimulatorWritesItReturnsItsEvent(String line, LogEvent expected) {
        assertThat(parser.parse(line)).isEqualTo(expected);
    }

    static Stream<Arguments> otherVersionsLines() {
        return Stream.of(
                // Before vLLM 0.8 the source had no opening bracket.
                arguments(
                        "INFO 11-30 12:05:20 api_server.py:212] vLLM API server version 0.5.3.post1",
                        new ServerVersion(AT, null, null, "0.5.3.post1")),
                arguments(
                        "INFO 11-30 12:05:20 llm_engine.py:213] Initializing an LLM engine (v0.6.0) with config: "
                                + "model='x'",
                        new ServerVersion(AT, null, null, "0.6.0")),
                arguments(
                        "vLLM API server version 0.32.0rc1.dev12+gabc1234",
                        new ServerVersion(null, null, null, "0.32.0rc1.dev12+gabc1234")),
                arguments(
                        "INFO 11-30 12:05:20 [api_server.py:1000] Starting vLLM API server on http://0.0.0.0:8000",
                        new ServerStarting(AT, null, null, "http://0.0.0.0:8000")),
                arguments(
                        "INFO 11-30 12:05:20 [api_server.py:1000] Starting vLLM API server 0 on https://10.0.0.5:8443",
                        new ServerStarting(AT, null, null, "https://10.0.0.5:8443")),
                arguments("Starting vLLM server", new ServerStarting(null, null, null, null)),
                arguments("Model loading took 15.2 GiB and 8.1 seconds", new ModelLoading(null, null, null, 15.2, 8.1)),
                arguments(
                        "Model loading took 9.77 GiB memory and 82 seconds",
                        new ModelLoading(null, null, null, 9.77, 82)),
                arguments(
                        "Mapped 1,024 tensors from the weight cache daemon (zero_copy mode)",
                        new MappedFromCache(null, null, null, 1024, "zero_copy")),
                arguments(
                        "Mapped 12 tensors from the weight cache daemon",
                        new MappedFromCache(null, null, null, 12, "unknown")),
                arguments("GPU KV cache size: 65536 tokens", new KvCacheSize(null, null, null, 65_536)),
                arguments("KV cache size: 1,048,576 tokens", new KvCacheSize(null, null, null, 1_048_576)),
                arguments("Available KV cache memory: -0.50 GiB", new AvailableKvCache(null, null, null, -0.5)),
                arguments(
                        "init engine (profile, create kv cache, warmup model) took 25.19 seconds, compilation took "
                                + "10.1 s",
                        new InitEngine(null, null, null, 25.19, null)),
                arguments(
                        "RuntimeError: Weight cache daemon did not become ready within 300 s",
                        new CacheWaitTimeout(
                                null, null, null, "Weight cache daemon did not become ready within 300 s")),
                // Extra spaces, fractional seconds, another process prefix, colours, a CRI log prefix.
                arguments(
                        "INFO  11-30  12:05:20.250   [default_loader.py:262]   Loading  weights  took   2.62   seconds",
                        new LoadingWeights(Instant.parse("2026-11-30T12:05:20.250Z"), null, null, 2.62)),
                arguments(
                        "(VllmWorker rank=0 pid=77) INFO 11-30 12:05:20 [default_loader.py:262] Loading weights took "
                                + "2.62 seconds",
                        new LoadingWeights(AT, "VllmWorker rank=0", 77, 2.62)),
                arguments(
                        "(RayWorkerWrapper pid=88, ip=10.0.0.5) INFO 11-30 12:05:20 [default_loader.py:262] Loading "
                                + "weights took 2.62 seconds",
                        new LoadingWeights(AT, "RayWorkerWrapper", 88, 2.62)),
                arguments(
                        "\u001B[1;36m(APIServer pid=4242)\u001B[0;0m \u001B[32mINFO\u001B[0m 11-30 12:05:20 "
                                + "[api_server.py:1839] vLLM API server version 0.31.0",
                        new ServerVersion(AT, "APIServer", 4242, "0.31.0")),
                arguments(
                        "2026-11-30T12:05:21.123456789Z stdout F (APIServer pid=1) INFO 11-30 12:05:20 "
                                + "[api_server.py:1839] vLLM API server version 0.31.0",
                        new ServerVersion(AT, "APIServer", 1, "0.31.0")),
                arguments(
                        "WARNING 11-30 12:05:20 [ipc_loader.py:139] Weight cache unusable (Weight cache daemon error: "
                                + "Weights were released)",
                        new CacheFallback(AT, null, null, "Weight cache daemon error: Weights were released")),
                arguments(
                        "ERROR 11-30 12:05:20 [async_llm.py:480] EngineDeadError: EngineCore encountered an issue.",
                        new EngineFatal(AT, null, null, "EngineDeadError: EngineCore encountered an issue.")),
                // The phases of issue 28 in each version's form (vllm/model_executor/model_loader/weight_utils.py,
                // vllm/compilation/backends.py and monitor.py, the model runners, vllm/v1/engine/core.py).
                arguments(
                        "INFO 11-30 12:05:20 [weight_utils.py:273] Time spent downloading weights for "
                                + "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B: 508.576789 seconds",
                        new WeightsDownloaded(AT, null, null, 508.576789)),
                arguments(
                        "INFO 11-30 12:05:20 [backends.py:155] Directly load the compiled graph(s) for shape None from "
                                + "the cache, took 2.828 s",
                        new CompiledGraphsLoaded(AT, null, null, 2.828)),
                arguments(
                        "(Worker_TP1 pid=41700) INFO 11-30 12:05:20 [backends.py:164] Directly load the compiled "
                                + "graph(s) for dynamic shape from the cache, took 4.849 s",
                        new CompiledGraphsLoaded(AT, "Worker_TP1", 41700, 4.849)),
                arguments(
                        "INFO 11-30 12:05:20 [backends.py:144] Compiling a graph for general shape takes 27.31 s",
                        new GraphCompiled(AT, null, null, 27.31)),
                arguments(
                        "INFO 11-30 12:05:20 [backends.py:319] Compiling a graph for compile range (1, 2048) takes "
                                + "6.40 s",
                        new GraphCompiled(AT, null, null, 6.40)),
                // vllm/v1/executor/abstract.py @09cb327f, wake_up (issue 29: a wake's own time, beside its record).
                arguments(
                        "(EngineCore pid=7) INFO 11-30 12:05:20 [abstract.py:330] It took 0.107284 seconds to wake up"
                                + " tags {'weights', 'kv_cache'}.",
                        new LogEvent.WokeUp(AT, "EngineCore", 7, 0.107284)),
                arguments(
                        "INFO 11-30 12:05:20 [monitor.py:33] torch.compile takes 34.61 s in total",
                        new CompileTotal(AT, null, null, 34.61)),
                arguments(
                        "(EngineCore pid=7) INFO 11-30 12:05:20 [monitor.py:48] torch.compile took 4.23 s in total",
                        new CompileTotal(AT, "EngineCore", 7, 4.23)),
                // A 2026 build's monitor.py, as a public compose log shows it.
                arguments(
                        "(EngineCore_DP0 pid=132) INFO 11-30 12:05:20 [monitor.py:35] torch.compile and initial profiling"
                                + " run took 29.93 s in total",
                        new CompileTotal(AT, "EngineCore_DP0", 132, 29.93)),
                arguments(
                        "INFO 11-30 12:05:20 [model_runner.py:1671] Graph capturing finished in 2 secs, took 0.11 GiB",
                        new GraphsCaptured(AT, null, null, 2.0, 0.11)),
                // Before vLLM 0.6 the line gave no memory: f"Graph capturing finished in {elapsed_time:.0f} secs."
                arguments(
                        "INFO 11-30 12:05:20 model_runner.py:1523] Graph capturing finished in 18 secs.",
                        new GraphsCaptured(AT, null, null, 18.0, null)),
                // A multimodal model's compilation: the total first, then language model and encoder.
                arguments(
                        "INFO 11-30 12:05:20 [core.py:336] init engine (profile, create kv cache, warmup model) took "
                                + "300.00 s (compilation: 98.20 s \u2014 language_model: 90.00 s, encoder: 8.20 s)",
                        new InitEngine(AT, null, null, 300.00, 98.20)));
    }

    @ParameterizedTest
    @MethodSource("otherVersionsLines")
    void parseWhenLineIsInAnotherVersionsFormReturnsItsEvent(String line, LogEvent expected) {
        assertThat(parser.parse(line)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "   ",
                "INFO:     Started server process [4242]",
                "INFO:     Waiting for application startup.",
                "INFO:     127.0.0.1:53422 - \"GET /health HTTP/1.1\" 200 OK",
                "(EngineCore_DP0 pid=4243) INFO 11-30 12:05:20 [gpu_model_runner.py:3012] Starting to load model "
                        + "Qwen/Qwen3-0.6B...",
                "(APIServer pid=4242) INFO 11-30 12:05:20 [api_server.py:1971] Supported tasks: ['generate']",
                "(EngineCore_DP0 pid=4243) INFO 11-30 12:05:20 [backends.py:559] Dynamo bytecode transform time: "
                        + "1.23 s",
                "(EngineCore_DP0 pid=4243) INFO 11-30 12:05:20 [kv_cache_utils.py:1091] Maximum concurrency for "
                        + "4,096 tokens per request: 16.00x",
                "INFO 11-30 12:05:20 [__init__.py:239] Automatically detected platform cuda.",
                // vLLM 0.4's memory line: no duration.
                "INFO 05-01 12:00:00 model_runner.py:146] Loading model weights took 14.9595 GB",
                "INFO 05-01 12:00:00 gpu_executor.py:83] # GPU blocks: 27702, # CPU blocks: 2048",
                "Loading weights took seconds",
                "Model loading took 9.77 GiB memory",
                "Mapped tensors from the weight cache daemon (zero_copy mode)",
                "Mapped 99999999999 tensors from the weight cache daemon (zero_copy mode)",
                "GPU KV cache size: 99,999,999,999,999,999,999,999 tokens",
                "(APIServer pid=4142) INFO 11-30 12:05:20 [preload.py:88] vLLM weight cache daemon for "
                        + "model=Qwen/Qwen3-0.6B checkpoint=x (1 rank(s), socket dir /tmp/w)",
                "(APIServer pid=4142) INFO 11-30 12:05:20 [preload.py:240] Weight cache daemon shutting down (signal 15)",
                "WARNING 11-30 12:05:20 [ipc_loader.py:260] Failed to ask the weight cache daemon to release",
                "ERROR 11-30 12:05:20 [preload.py:180] Weight cache daemon rank(s) exited during startup "
                        + "(exitcodes=[1]); shutting down.",
                "(APIServer pid=4242) INFO 11-30 12:05:20 [launcher.py:120] Shutting down FastAPI HTTP server "
                        + "(restart).",
                "(APIServer pid=4242) ERROR 11-30 12:05:20 [async_llm.py:487] AsyncLLM output_handler failed.",
                "ERROR:    Application startup failed. Exiting.",
                "    raise EngineDeadError()",
                // Request logs echo prompts: an event phrase inside one is not the engine speaking.
                "INFO 11-30 12:05:20 [logger.py:43] Received request cmpl-1: prompt: 'Loading weights took 1.00 "
                        + "seconds', params: SamplingParams(n=1)",
                "INFO 11-30 12:05:20 [logger.py:43] Received request cmpl-2: prompt: 'EngineCore encountered a fatal "
                        + "error', params: SamplingParams(n=1)",
            })
    void parseWhenLineIsNoEventReturnsNull(String line) {
        assertThat(parser.parse(line)).isNull();
    }

    @Test
    void parseWhenTimestampIsJustBeforeNewYearTakesTheYearClosestToNow() {
        VllmLogParser justAfterNewYear =
                new VllmLogParser(Clock.fixed(Instant.parse("2027-01-01T00:02:00Z"), ZoneOffset.UTC));
        assertThat(justAfterNewYear.parse("INFO 12-31 23:59:00 [core.py:210] init engine (x) took 1.00 seconds"))
                .extracting(LogEvent::at)
                .isEqualTo(Instant.parse("2026-12-31T23:59:00Z"));
    }

    @Test
    void parseWhenTimestampIsJustAfterNewYearTakesTheYearClosestToNow() {
        // The clock lags the engine's by a few minutes across New Year.
        VllmLogParser justBeforeNewYear =
                new VllmLogParser(Clock.fixed(Instant.parse("2026-12-31T23:58:00Z"), ZoneOffset.UTC));
        assertThat(justBeforeNewYear.parse("INFO 01-01 00:01:00 [core.py:210] init engine (x) took 1.00 seconds"))
                .extracting(LogEvent::at)
                .isEqualTo(Instant.parse("2027-01-01T00:01:00Z"));
    }

    @Test
    void parseWhenTimestampIsTheLeapDayTakesTheLeapYear() {
        VllmLogParser inMarch = new VllmLogParser(Clock.fixed(Instant.parse("2028-03-01T00:00:00Z"), ZoneOffset.UTC));
        assertThat(inMarch.parse("INFO 02-29 12:00:00 [core.py:210] init engine (x) took 1.00 seconds"))
                .extracting(LogEvent::at)
                .isEqualTo(Instant.parse("2028-02-29T12:00:00Z"));
    }

    @Test
    void parseWhenTimestampIsNoDateKeepsTheEventWithoutATime() {
        assertThat(parser.parse("INFO 13-45 25:61:00 [core.py:210] init engine (x) took 1.00 seconds"))
                .isEqualTo(new InitEngine(null, null, null, 1.0, null));
    }

    static Stream<Arguments> otherLoggerFormats() {
        Instant at = Instant.parse("2026-06-10T11:30:27Z");
        return Stream.of(
                // A plugin's logging configuration: {asctime} | {module} | {funcName}:{lineno} | {levelname} :
                // {message}
                arguments(
                        "2026-06-10 11:30:27 | gpu_model_runner | load_model:4344 | INFO : Model loading took 29.04 GiB"
                                + " memory and 28.734112 seconds",
                        new ModelLoading(at, null, null, 29.04, 28.734112)),
                // loguru's default: {time} | {level: <8} | {name}:{function}:{line} - {message}
                arguments(
                        "2026-06-10 11:30:27.113 | INFO     | vllm.model_executor.model_loader.default_loader:"
                                + "load_weights:293 - Loading weights took 27.85 seconds",
                        new LoadingWeights(at.plusMillis(113), null, null, 27.85)),
                // Python's logging.BASIC_FORMAT: %(levelname)s:%(name)s:%(message)s, no time.
                arguments(
                        "INFO:vllm.v1.engine.core:init engine (profile, create kv cache, warmup model) took 45.10"
                                + " seconds",
                        new InitEngine(null, null, null, 45.10, null)),
                // A zoned time in the logger's own format is the true time.
                arguments(
                        "2026-06-10T11:30:27+02:00 [INFO] gpu_worker: Available KV cache memory: 94.12 GiB",
                        new AvailableKvCache(at.minusSeconds(7200), null, null, 94.12)),
                // The CPU backend's KV cache line (cpu_worker.py), in vLLM's own format.
                arguments(
                        "(Worker pid=166) INFO 06-10 11:30:27 [cpu_worker.py:255] Explicitly set (1.0/15.51) GiB for KV"
                                + " cache on node 0.",
                        new AvailableKvCache(at, "Worker", 166, 1.0)),
                arguments(
                        "(Worker pid=19850) INFO 06-10 11:30:27 [cpu_worker.py:235] Auto set (1.48/18.0) GiB for KV"
                                + " cache on node 0, with 5.4 GiB requested memory for the worker. 3.92 GiB memory"
                                + " was consumed by non-kv usages.",
                        new AvailableKvCache(at, "Worker", 19850, 1.48)));
    }

    @ParameterizedTest
    @MethodSource("otherLoggerFormats")
    void parseWhenALoggerFormatPutsVllmsMessageElsewhereReadsTheMessage(String line, LogEvent expected) {
        VllmLogParser utc = new VllmLogParser(Clock.fixed(NOW, ZoneOffset.UTC), () -> null, ZoneOffset.UTC);

        assertThat(utc.parse(line)).isEqualTo(expected);
    }

    static final String COLD_LINE =
            "(EngineCore_DP0 pid=94) INFO 11-30 12:05:20 [default_loader.py:293] Loading weights took 4.71 seconds";

    static Stream<Arguments> collectorPrefixes() {
        return Stream.of(
                arguments("vllm-1  | "),
                arguments("qwen3.5-4b  | "),
                arguments("\u001B[36mvllm-1  |\u001B[0m "),
                arguments("[2026-11-30T12:05:20Z] "),
                arguments("[2026-11-30T13:05:20.123+01:00] "),
                arguments("2026-11-30 12:05:20.609 | "),
                arguments("2026-11-30T12:05:21.123456789Z stdout F "),
                arguments("[pod/vllm-0/vllm] "),
                arguments("Nov 30 12:05:20 gpu-node-7 vllm[4242]: "),
                arguments("vllm-engine-7d9f8b-x2x4q vllm "));
    }

    @ParameterizedTest
    @MethodSource("collectorPrefixes")
    void parseWhenACollectorPrefixesTheLineFindsVllmsLineBehindIt(String prefix) {
        assertThat(parser.parse(prefix + COLD_LINE)).isEqualTo(new LoadingWeights(AT, "EngineCore_DP0", 94, 4.71));
        assertThat(parser.parse(prefix + "INFO 11-30 12:05:20 [core.py:282] init engine (profile, create kv cache, "
                        + "warmup model) took 44.67 s (compilation: 29.93 s)"))
                .isEqualTo(new InitEngine(AT, null, null, 44.67, 29.93));
        assertThat(parser.parse(prefix + "(APIServer pid=1) INFO:     Application startup complete."))
                .isEqualTo(new ApplicationStartup(null, "APIServer", 1));
        assertThat(parser.parse(prefix + "INFO:     Application startup complete."))
                .isEqualTo(new ApplicationStartup(null, null, null));
        assertThat(parser.parse(prefix + "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root "
                        + "cause above. Failed core proc(s): {}"))
                .isEqualTo(new LogEvent.InitializationFailed(
                        null,
                        "APIServer",
                        1,
                        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): "
                                + "{}"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                // vLLM echoes a request's prompt: a line inside it is not vLLM speaking, behind a prefix or not.
                "vllm-1  | (APIServer pid=1) INFO 11-30 12:05:20 [logger.py:43] Received request cmpl-1: prompt: '"
                        + COLD_LINE + "', params: SamplingParams(n=1)",
                "[2026-11-30T12:05:20Z] INFO 11-30 12:05:20 [logger.py:43] Received request cmpl-1: prompt: 'INFO "
                        + "11-30 12:05:20 [x.py:1] EngineCore encountered a fatal error.', params: SamplingParams(n=1)",
                // Not a prefix: more text before vLLM's line than any collector writes.
                "Some tool printed a long message that goes on and on about what it does with the file it found on "
                        + "disk and then on about something else entirely, for more than two hundred characters in "
                        + "all, before: " + COLD_LINE,
                // A traceback's exception at INFO is a message, not a traceback.
                "vllm-1  | (APIServer pid=1) INFO 11-30 12:05:20 [x.py:1] ValueError: said in passing",
                "vllm-1  | [rank0]:[W309 12:56:45.480623726 ProcessGroupNCCL.cpp:1553] Warning: WARNING: "
                        + "destroy_process_group() was not called before program exit",
                "qwen3.5-4b exited with code 1 (restarting)",
                "vllm-1  | Loading safetensors checkpoint shards: 100% Completed | 3/3 [00:04<00:00,  1.53s/it]",
                // In another logger format too: quoted after the level, or before any level, it is an echo.
                "2026-06-10 11:31:40 | logger | log_inputs:43 | INFO : Received request cmpl-1: prompt: 'Loading "
                        + "weights took 1.00 seconds', params: SamplingParams(n=1)",
                "2026-06-10 11:31:40 | 'Loading weights took 1.00 seconds' | INFO : done",
                "2026-06-10 11:31:40 | logger | INFO : NotLoading weights took 1.00 seconds",
            })
    void parseWhenAnEventPhraseIsNotVllmsOwnLineReturnsNull(String line) {
        assertThat(parser.parse(line)).isNull();
    }

    static Stream<Arguments> deploymentLines() {
        return Stream.of(
                // Data parallel: each engine core logs its own header.
                arguments(
                        "(EngineCore_DP3 pid=123) INFO 11-30 12:05:20 [core.py:101] Initializing a V1 LLM engine "
                                + "(v0.31.0) with config: model='Qwen/Qwen3-30B-A3B', data_parallel_size=4",
                        new ServerVersion(AT, "EngineCore_DP3", 123, "0.31.0")),
                arguments(
                        "(APIServer pid=1) INFO 11-30 12:05:20 [arg_utils.py:1744] Defaulting api_server_count to "
                                + "data_parallel_size (8).",
                        new LogEvent.ApiServerCount(AT, "APIServer", 1, 8)),
                arguments(
                        "(Worker_TP1 pid=132) INFO 11-30 12:05:20 [default_loader.py:293] Loading weights took 30.12 "
                                + "seconds",
                        new LoadingWeights(AT, "Worker_TP1", 132, 30.12)),
                arguments(
                        "(ApiServer_3 pid=153) INFO:     Application startup complete.",
                        new ApplicationStartup(null, "ApiServer_3", 153)),
                // Ray forwards a worker's lines into the engine core's output: the worker is the one logging.
                arguments(
                        "(EngineCore pid=311) (RayWorkerWrapper pid=144, ip=172.18.0.2) INFO 11-30 12:05:20 "
                                + "[default_loader.py:293] Loading weights took 1.21 seconds",
                        new LoadingWeights(AT, "RayWorkerWrapper", 144, 1.21)),
                // vLLM's banner (0.16 on): the version on its middle line.
                arguments(
                        "(APIServer pid=1) INFO 11-30 12:05:20 [utils.py:302]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version "
                                + "0.16.1rc1.dev265+gd106bf39f",
                        new ServerVersion(AT, "APIServer", 1, "0.16.1rc1.dev265+gd106bf39f")),
                // The 0.31 formats.
                arguments(
                        "(EngineCore_DP0 pid=94) INFO 11-30 12:05:20 [model_runner.py:4344] Model loading took 15.27 "
                                + "GiB memory and 5.444196 seconds",
                        new ModelLoading(AT, "EngineCore_DP0", 94, 15.27, 5.444196)),
                arguments(
                        "(EngineCore_DP0 pid=94) INFO 11-30 12:05:20 [kv_cache_utils.py:1314] GPU KV cache size: "
                                + "759,424 tokens, Maximum concurrency for 40,960 tokens per request: 18.54x",
                        new KvCacheSize(AT, "EngineCore_DP0", 94, 759_424)),
                arguments(
                        "(EngineCore_DP0 pid=94) INFO 11-30 12:05:20 [core.py:282] init engine (profile, create kv "
                                + "cache, warmup model) took 44.67 s (compilation: 29.93 s)",
                        new InitEngine(AT, "EngineCore_DP0", 94, 44.67, 29.93)),
                arguments(
                        "(APIServer pid=1) INFO 11-30 12:05:20 [preload.py:214] ===== Weight cache daemon READY: node "
                                + "0/1 serving 1 local rank(s) in the default socket dir =====",
                        new DaemonReady(AT, "APIServer", 1)),
                // Startup failures and their reasons.
                arguments(
                        "(EngineCore_DP0 pid=94) ERROR 11-30 12:05:20 [core.py:1100] EngineCore failed to start.",
                        new LogEvent.CoreStartFailed(AT, "EngineCore_DP0", 94)),
                arguments(
                        "(EngineCore_DP0 pid=94) ERROR 11-30 12:05:20 [core.py:1100] torch.OutOfMemoryError: CUDA out "
                                + "of memory. Tried to allocate 2.00 GiB.",
                        new LogEvent.ExceptionRaised(
                                AT,
                                "EngineCore_DP0",
                                94,
                                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")),
                arguments(
                        "(EngineCore_DP0 pid=94) ValueError: No available memory for the cache blocks.",
                        new LogEvent.ExceptionRaised(
                                null, "EngineCore_DP0", 94, "ValueError: No available memory for the cache blocks.")),
                arguments("AssertionError", new LogEvent.ExceptionRaised(null, null, null, "AssertionError")),
                arguments(
                        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. "
                                + "Failed core proc(s): {'EngineCore_DP0': 1}",
                        new LogEvent.InitializationFailed(
                                null,
                                "APIServer",
                                1,
                                "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
                                        + "proc(s): {'EngineCore_DP0': 1}")),
                arguments(
                        "(EngineCore_DP0 pid=94) ERROR 11-30 12:05:20 [core.py:1023] EngineCore encountered a fatal "
                                + "error.",
                        new EngineFatal(AT, "EngineCore_DP0", 94, "EngineCore encountered a fatal error.")),
                arguments(
                        "(APIServer pid=1) CRITICAL 11-30 12:05:20 [launcher.py:116] VLLM Engine failed, terminating "
                                + "server.",
                        new EngineFatal(AT, "APIServer", 1, "VLLM Engine failed, terminating server.")));
    }

    @ParameterizedTest
    @MethodSource("deploymentLines")
    void parseWhenLineComesFromADeploymentStyleOrAFailureReturnsItsEvent(String line, LogEvent expected) {
        assertThat(parser.parse(line)).isEqualTo(expected);
    }

    @Test
    void parseWhenTheLogIsReadLongAfterItWasWrittenDatesItByTheAnchorNotNextYear() {
        // Eight months later, with the file's modification time as the anchor, and without one.
        Clock later = Clock.fixed(Instant.parse("2027-07-30T00:00:00Z"), ZoneOffset.UTC);
        VllmLogParser anchored = new VllmLogParser(later, () -> Instant.parse("2026-11-30T13:00:00Z"));
        VllmLogParser unanchored = new VllmLogParser(later);

        assertThat(anchored.parse(COLD_LINE)).extracting(LogEvent::at).isEqualTo(AT);
        assertThat(unanchored.parse(COLD_LINE)).extracting(LogEvent::at).isEqualTo(AT);
    }

    @Test
    void parseWhenTheLogIsOlderThanAYearDatesItByTheFilesModificationTime() {
        Clock muchLater = Clock.fixed(Instant.parse("2028-07-30T00:00:00Z"), ZoneOffset.UTC);
        VllmLogParser anchored = new VllmLogParser(muchLater, () -> Instant.parse("2026-12-01T00:00:00Z"));

        assertThat(anchored.parse(COLD_LINE)).extracting(LogEvent::at).isEqualTo(AT);
    }

    @Test
    void parseWhenTheCollectorsPrefixHasAYearDatesTheLineInIt() {
        Clock muchLater = Clock.fixed(Instant.parse("2029-01-15T00:00:00Z"), ZoneOffset.UTC);
        VllmLogParser parser = new VllmLogParser(muchLater, () -> Instant.parse("2029-01-14T00:00:00Z"));

        assertThat(parser.parse("2026-11-30T12:05:21.123456789Z stdout F " + COLD_LINE))
                .extracting(LogEvent::at)
                .isEqualTo(AT);
        assertThat(parser.parse("[2026-11-30T12:05:20Z] " + COLD_LINE))
                .extracting(LogEvent::at)
                .isEqualTo(AT);
        assertThat(parser.parse("2026-11-30 12:05:20.609 | " + COLD_LINE))
                .extracting(LogEvent::at)
                .isEqualTo(AT);
    }

    @ParameterizedTest
    @MethodSource("apiKeyForms")
    void parseWhenArgsHoldAnApiKeyRedactsItsValue(String args, String redacted) {
        assertThat(parser.parse("non-default args: " + args))
                .isEqualTo(new NonDefaultArgs(null, null, null, redacted))
                .extracting(event -> ((NonDefaultArgs) event).args())
                .isEqualTo(redacted);
    }

    static Stream<Arguments> apiKeyForms() {
        return Stream.of(
                arguments("{'api_key': 's3cret', 'port': 8000}", "{'api_key': '<redacted>', 'port': 8000}"),
                arguments("{'port': 8000, 'api_key': ['k1', 'k]2']}", "{'port': 8000, 'api_key': '<redacted>'}"),
                arguments("{\"api_key\": \"s3cret\", \"port\": 8000}", "{\"api_key\": \"<redacted>\", \"port\": 8000}"),
                arguments(
                        "{'model_tag': 'm', 'hf_token': 'hf_SECRETTOKEN123', 'max_num_batched_tokens': 8192}",
                        "{'model_tag': 'm', 'hf_token': '<redacted>', 'max_num_batched_tokens': 8192}"),
                arguments("{'api_key': 's3\\'cret', 'port': 8000}", "{'api_key': '<redacted>', 'port': 8000}"),
                arguments("{'api_key':'s3cret'}", "{'api_key':'<redacted>'}"),
                arguments("{'api_key': None, 'port': 8000}", "{'api_key': None, 'port': 8000}"),
                arguments(
                        "{'openai_api_key': 'a', 'x': 1, 'api_key': ('b', 'c')}",
                        "{'openai_api_key': '<redacted>', 'x': 1, 'api_key': '<redacted>'}"),
                arguments("{'model': 'm', 'api_key': ['s3cret', 'cut-off", "{'model': 'm', 'api_key': '<redacted>'"),
                arguments("{'api_key_file': '/etc/key'}", "{'api_key_file': '/etc/key'}"));
    }

    @Test
    void nonDefaultArgsWhenBuiltWithAnApiKeyHoldsItRedacted() {
        assertThat(new NonDefaultArgs(null, null, null, "Namespace(host=None, api_key='s3cret', port=8000)").args())
                .isEqualTo("Namespace(host=None, api_key='<redacted>', port=8000)");
    }

    @Test
    void parseWhenLinesAreGarbageNeverThrows() {
        Random random = new Random(20261130);
        List<String> known = new ArrayList<>();
        Stream.of(referenceLines(), simulatorLines(), otherVersionsLines())
                .flatMap(lines -> lines)
                .forEach(arguments -> known.add((String) arguments.get()[0]));
        for (int i = 0; i < 20_000; i++) {
            String line = switch (random.nextInt(3)) {
                case 0 -> randomText(random, random.nextInt(200));
                case 1 -> mutate(random, known.get(random.nextInt(known.size())));
                default -> {
                    String whole = known.get(random.nextInt(known.size()));
                    yield whole.substring(0, random.nextInt(whole.length() + 1));
                }
            };
            parser.parse(line);
        }
        for (String line : List.of(
                "(".repeat(1_000_000),
                "Weight cache unusable (".repeat(20_000),
                "(APIServer pid=" + "9".repeat(10_000),
                "INFO " + "11-30 ".repeat(50_000),
                "non-default args: {'api_key': " + "[".repeat(100_000),
                "non-default args: {" + "'api_key': ".repeat(50_000),
                "Model loading took " + "1,".repeat(100_000) + " GiB memory and 1 seconds",
                "(APIServer pid=99999999999) INFO 99-99 99:99:99 [x.py:1] Loading weights took 1 seconds",
                "\u001B[".repeat(100_000) + "Application startup complete",
                "\uD800\uDFFF\uFFFF\u0000 weight cache daemon ready")) {
            parser.parse(line);
            // Past every rule's substring check, so the patterns themselves meet the line.
            parser.parse(line + EVERY_ANCHOR);
            parser.parse(EVERY_ANCHOR + line);
        }
    }

    static final String EVERY_ANCHOR = " version Initializing non-default weights loading tensors outside unusable IPC "
            + "become daemon Available KV init Starting startup Engine failed to start initialization failed "
            + "api_server_count Error Exception ";

    static String randomText(Random random, int length) {
        StringBuilder text = new StringBuilder(length);
        String specials = "()[]{}:;,.'\"=\\ -\t\r\u001B\u00e9\uFFFD0123456789";
        for (int i = 0; i < length; i++) {
            text.append(
                    random.nextBoolean()
                            ? specials.charAt(random.nextInt(specials.length()))
                            : (char) random.nextInt(0x3000));
        }
        return text.toString();
    }

    static String mutate(Random random, String line) {
        StringBuilder text = new StringBuilder(line);
        for (int edits = random.nextInt(4); edits >= 0 && !text.isEmpty(); edits--) {
            int at = random.nextInt(text.length());
            switch (random.nextInt(3)) {
                case 0 -> text.deleteCharAt(at);
                case 1 -> text.insert(at, randomText(random, 1 + random.nextInt(3)));
                default -> text.setCharAt(at, (char) random.nextInt(0x80));
            }
        }
        return text.toString();
    }

    @Test
    void parseWhenSimulatorStartsColdThenFromTheCacheThenFallsBackReadsEachStart() {
        VllmLogParser systemClock = new VllmLogParser(Clock.systemUTC());
        Instant begin = Instant.now().minusSeconds(1);
        try (RunningSimulator running =
                RunningSimulator.serving(workDir, "auto-restart=false", "api-key=s3cret-simulated-key")) {
            List<LogEvent> engine = follow(workDir.resolve("engine.log"), systemClock);
            List<LogEvent> daemon = follow(workDir.resolve("preload-daemon.log"), systemClock);
            awaitStarts(engine, 1);
            running.restartAndAwait(StartupPath.PRELOAD_HIT);
            awaitStarts(engine, 2);
            running.restartAndAwait(StartupPath.PRELOAD_FALLBACK);
            awaitStarts(engine, 3);
            running.crash();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> engine.stream()
                                    .filter(EngineFatal.class::isInstance)
                                    .count()
                            == 3);
            await().atMost(Duration.ofSeconds(10)).until(() -> daemon.stream().anyMatch(DaemonReady.class::isInstance));

            List<List<LogEvent>> starts = splitAtStartup(engine);
            assertThat(kinds(starts.get(0)))
                    .containsExactly(
                            ServerVersion.class,
                            NonDefaultArgs.class,
                            ServerVersion.class,
                            LoadingWeights.class,
                            ModelLoading.class,
                            GraphCompiled.class,
                            CompileTotal.class,
                            AvailableKvCache.class,
                            KvCacheSize.class,
                            GraphsCaptured.class,
                            InitEngine.class,
                            ServerStarting.class,
                            ApplicationStartup.class);
            assertThat(kinds(starts.get(1)))
                    .containsExactly(
                            ServerVersion.class,
                            NonDefaultArgs.class,
                            ServerVersion.class,
                            MappedFromCache.class,
                            WeightsHeldOutside.class,
                            ModelLoading.class,
                            CompiledGraphsLoaded.class,
                            CompileTotal.class,
                            AvailableKvCache.class,
                            KvCacheSize.class,
                            GraphsCaptured.class,
                            InitEngine.class,
                            ServerStarting.class,
                            ApplicationStartup.class);
            assertThat(kinds(starts.get(2)))
                    .containsExactly(
                            ServerVersion.class,
                            NonDefaultArgs.class,
                            ServerVersion.class,
                            CacheFallback.class,
                            LoadingWeights.class,
                            ModelLoading.class,
                            CompiledGraphsLoaded.class,
                            CompileTotal.class,
                            AvailableKvCache.class,
                            KvCacheSize.class,
                            GraphsCaptured.class,
                            InitEngine.class,
                            ServerStarting.class,
                            ApplicationStartup.class);
            assertThat(kinds(starts.get(3)))
                    .containsExactly(
                            EngineFatal.class, LogEvent.ExceptionRaised.class, EngineFatal.class, EngineFatal.class);

            assertThat(starts.get(0))
                    .contains(new KvCacheSize(starts.get(0).get(8).at(), "EngineCore", 4243, 65_536))
                    .first()
                    .isEqualTo(new ServerVersion(starts.get(0).get(0).at(), "APIServer", 4242, "0.31.0"));
            assertThat(starts.get(1).get(1))
                    .isInstanceOfSatisfying(
                            NonDefaultArgs.class,
                            args -> assertThat(args.args())
                                    .contains("'load_format': 'ipc_cache'", "'api_key': '<redacted>'")
                                    .doesNotContain("s3cret"));
            assertThat(starts.get(1).get(3))
                    .isEqualTo(new MappedFromCache(starts.get(1).get(3).at(), "EngineCore", 4253, 339, "zero_copy"));
            assertThat(starts.get(1).get(5))
                    .isInstanceOfSatisfying(
                            ModelLoading.class,
                            loading -> assertThat(loading.gib()).isZero());
            assertThat(starts.get(2).get(3))
                    .isInstanceOfSatisfying(
                            CacheFallback.class,
                            fallback -> assertThat(fallback.reason())
                                    .startsWith("Cannot connect to weight cache daemon at ")
                                    .endsWith("vllm_weight_cache_gpu0.sock: [Errno 111] Connection refused"));
            assertThat(starts.get(2).get(4))
                    .isInstanceOfSatisfying(
                            LoadingWeights.class,
                            loading -> assertThat(loading.seconds()).isPositive());
            assertThat(starts.get(3).get(0))
                    .isInstanceOfSatisfying(
                            EngineFatal.class,
                            fatal -> assertThat(fatal.detail()).isEqualTo("EngineCore encountered a fatal error."));
            assertThat(LogFindings.of(starts.get(3)).fatal()).isEqualTo("RuntimeError: simulated crash");
            assertThat(engine)
                    .filteredOn(event -> !(event instanceof ApplicationStartup))
                    .allSatisfy(event -> assertThat(event.at()).isBetween(begin, Instant.now()));
            assertThat(daemon)
                    .filteredOn(DaemonReady.class::isInstance)
                    .singleElement()
                    // vllm preload and its ranks write no process prefix (preload.py, weight_cache/daemon.py).
                    .satisfies(ready -> assertThat(ready.process()).isNull());
        }
    }

    /** The events of {@code file}'s lines from its start, until the test's temporary directory goes. */
    List<LogEvent> follow(Path file, VllmLogParser logParser) {
        List<LogEvent> events = new CopyOnWriteArrayList<>();
        Disposable following = new LogTail(
                        file, Duration.ofMillis(20), DataSize.ofKilobytes(64), Schedulers.boundedElastic())
                .lines(true)
                .mapNotNull(logParser::parse)
                .subscribe(events::add);
        disposables.add(following);
        return events;
    }

    static void awaitStarts(List<LogEvent> events, int starts) {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> events.stream()
                                .filter(ApplicationStartup.class::isInstance)
                                .count()
                        == starts);
    }

    /** The events of each start, up to its {@code Application startup complete.}; then what came after the last. */
    static List<List<LogEvent>> splitAtStartup(List<LogEvent> events) {
        List<List<LogEvent>> starts = new ArrayList<>();
        List<LogEvent> current = new ArrayList<>();
        for (LogEvent event : events) {
            current.add(event);
            if (event instanceof ApplicationStartup) {
                starts.add(current);
                current = new ArrayList<>();
            }
        }
        starts.add(current);
        return starts;
    }

    static List<Class<?>> kinds(List<LogEvent> events) {
        return events.stream().<Class<?>>map(Object::getClass).toList();
    }
}
