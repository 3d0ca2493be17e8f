package dev.readygate.evidence;

import dev.readygate.secret.SecretRedaction;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A vLLM 0.31 log line that tells readygate something about an engine start: its version and arguments, how its
 * weights were loaded (disk, the {@code vllm preload} daemon, or a fallback from it), how long the phases took, when
 * the server came up, and fatal engine errors. {@link VllmLogParser} reads them from log lines.
 *
 * <p>Every event carries where it came from, each part {@code null} when the line did not say: {@code at} (vLLM's
 * {@code MM-dd HH:mm:ss} timestamp taken as UTC, with the year inferred), {@code process} and {@code pid} (from
 * vLLM's {@code (EngineCore_DP0 pid=N)} prefix).
 */
public sealed interface LogEvent {

    /** When the line was logged. */
    @Nullable
    Instant at();

    /** The logging process's name, e.g. {@code APIServer} or {@code EngineCore_DP0}. */
    @Nullable
    String process();

    /** The logging process's id. */
    @Nullable
    Integer pid();

    /**
     * The engine's version: {@code vLLM API server version X} or {@code Initializing a V1 LLM engine (vX) with
     * config}.
     */
    record ServerVersion(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String version) implements LogEvent {}

    /**
     * The engine's {@code non-default args: {...}} line, as logged except for the values of secret-named entries
     * ({@code api_key}, {@code hf_token}, ...: {@link SecretRedaction}), which are redacted whoever builds the record.
     */
    record NonDefaultArgs(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String args) implements LogEvent {

        public NonDefaultArgs {
            args = SecretRedaction.redact(args);
        }
    }

    /** {@code Loading weights took X seconds}: weights read from disk (a cold start or a fallback). */
    record LoadingWeights(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds) implements LogEvent {}

    /** {@code Model loading took X GiB memory and Y seconds}. */
    record ModelLoading(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double gib,
            double seconds) implements LogEvent {}

    /** {@code Mapped N tensors from the weight cache daemon (MODE mode)}: a preload cache hit. */
    record MappedFromCache(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            int tensors,
            String mode) implements LogEvent {}

    /** {@code Weights are held outside this process: ...}: the weights live in the preload daemon's memory. */
    record WeightsHeldOutside(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String detail) implements LogEvent {}

    /**
     * The engine asked for the weight cache, could not use it and loads from disk: {@code Weight cache unusable
     * (REASON); falling back to disk loading}, or {@code Weight cache IPC loading failed; falling back to disk
     * loading} (reason {@code Weight cache IPC loading failed}); SGLang's {@code [IpcModelLoader] ... falling back to
     * disk load}, whose words are no reason of their own ({@code warningOnly}: the line before it said why).
     *
     * @param warningOnly whether the line only says that it falls back: a reason logged before it stays the reason
     */
    record CacheFallback(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String reason,
            boolean warningOnly) implements LogEvent {

        /** A fallback with its reason. */
        public CacheFallback(@Nullable Instant at, @Nullable String process, @Nullable Integer pid, String reason) {
            this(at, process, pid, reason, false);
        }
    }

    /**
     * {@code Weight cache daemon did not become ready within ...}: with {@code fallback: false} the engine gave up
     * waiting for the daemon. {@code detail} is the message from {@code Weight cache daemon} on.
     */
    record CacheWaitTimeout(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String detail) implements LogEvent {}

    /** {@code Available KV cache memory: X GiB}. */
    record AvailableKvCache(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double gib) implements LogEvent {}

    /** {@code GPU KV cache size: N tokens}. */
    record KvCacheSize(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            long tokens) implements LogEvent {}

    /**
     * {@code init engine (profile, create kv cache, warmup model) took X s}, with vLLM's {@code (compilation: Y s)}
     * suffix when torch.compile ran ({@code compilationSeconds} null without it).
     */
    record InitEngine(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds,
            @Nullable Double compilationSeconds)
            implements LogEvent {}

    /**
     * {@code Time spent downloading weights for MODEL: X seconds}: the weights were fetched from the hub first (inside
     * {@code Model loading took}); a start that downloads is not a slow cold start.
     */
    record WeightsDownloaded(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds) implements LogEvent {}

    /**
     * {@code Directly load the compiled graph(s) for SHAPE from the cache, took X s}: torch.compile's cache held this
     * shape's graphs (a compile cache hit).
     */
    record CompiledGraphsLoaded(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds) implements LogEvent {}

    /** {@code Compiling a graph for SHAPE takes X s}: torch.compile compiled this shape (a compile cache miss). */
    record GraphCompiled(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds) implements LogEvent {}

    /** {@code torch.compile takes X s in total} (later {@code took}): all of torch.compile, cached or compiled. */
    record CompileTotal(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds) implements LogEvent {}

    /**
     * {@code Graph capturing finished in X secs, took Y GiB}: CUDA graph capture ({@code gib} null where the line
     * gives no memory, as before vLLM 0.6).
     */
    record GraphsCaptured(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds,
            @Nullable Double gib) implements LogEvent {}

    /** {@code Starting vLLM server on URL} (older: {@code Starting vLLM API server [N] on URL}). */
    record ServerStarting(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            @Nullable String url) implements LogEvent {}

    /** uvicorn's {@code Application startup complete.}: the port accepts connections from about here. */
    record ApplicationStartup(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid) implements LogEvent {}

    /** The {@code vllm preload} daemon's {@code Weight cache daemon READY} line: every rank serves its weights. */
    record DaemonReady(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid) implements LogEvent {}

    /**
     * The engine died: {@code EngineCore encountered a fatal error.} (its traceback follows), the launcher's {@code VLLM
     * Engine failed, terminating server.} or an {@code EngineDeadError}. {@code detail} is the line's message.
     */
    record EngineFatal(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String detail) implements LogEvent {}

    /**
     * {@code EngineCore failed to start.}: an engine core died while it initialized; vLLM logs its traceback next, from
     * the same process, ending with the root exception ({@link ExceptionRaised}).
     */
    record CoreStartFailed(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid) implements LogEvent {}

    /**
     * The API server gave up on its engine cores: {@code RuntimeError: Engine core initialization failed. See root
     * cause above. Failed core proc(s): {...}}. {@code detail} is the line's message.
     */
    record InitializationFailed(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String detail) implements LogEvent {}

    /**
     * A traceback's exception line, logged at {@code ERROR} or written to stderr without a level: {@code
     * torch.OutOfMemoryError: CUDA out of memory. ...}, {@code ValueError: ...}. {@code exception} is the line from the
     * exception's name on.
     */
    record ExceptionRaised(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String exception) implements LogEvent {}

    /**
     * The message of the exception on the line before, where the exception's text puts it on a line of its own:
     * pydantic's {@code   Value error, Cannot find the config file for awq_marlin [type=value_error, input_value=...]}
     * after {@code ValidationError: 1 validation error for VllmConfig}. {@code detail} is the message without pydantic's
     * bracket, which echoes the input (the whole configuration, secrets included).
     */
    record ExceptionDetail(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            String detail) implements LogEvent {}

    /**
     * {@code Defaulting api_server_count to data_parallel_size (N)}: N API server processes, so vLLM serves {@code
     * /metrics} in Prometheus multiprocess mode (without {@code process_start_time_seconds}).
     */
    record ApiServerCount(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            int count) implements LogEvent {}

    /**
     * {@code It took X seconds to wake up tags {...}.}: vLLM's own time to wake from sleep mode (the executor's
     * {@code wake_up}, {@code vllm/v1/executor/abstract.py}), before it says it is awake.
     */
    record WokeUp(
            @Nullable Instant at,
            @Nullable String process,
            @Nullable Integer pid,
            double seconds) implements LogEvent {}
}
