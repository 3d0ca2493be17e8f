package dev.readygate.evidence;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What the engine's log said about the current start, accumulated line by line since the start began.
 *
 * @param configured whether an engine log is read at all
 * @param firstLineAt the timestamp of the first line of this start
 * @param header whether vLLM's start-up header (version, non-default args) appeared
 * @param vllmVersion the version the log printed
 * @param engineArgs the {@code non-default args} line (API key redacted)
 * @param loadingWeightsSeconds {@code Loading weights took X seconds} of the model itself: the first such line of each
 *     process (with speculative decoding the drafter's follows it), the longest over the processes (ranks)
 * @param modelLoadingGib {@code Model loading took X GiB memory ...}
 * @param modelLoadingSeconds {@code Model loading took ... and Y seconds}
 * @param mappedTensors {@code Mapped N tensors from the weight cache daemon}
 * @param mappedMode the mapping mode
 * @param cacheFallbackReason the fallback warning's reason
 * @param engineInitSeconds {@code init engine (profile, create kv cache, warmup model) took X seconds}
 * @param availableKvCacheGib {@code Available KV cache memory: X GiB}
 * @param kvCacheSizeTokens {@code GPU KV cache size: N tokens}
 * @param weightsHeldOutsideGib the size in {@code Weights are held outside this process: X GiB ...} (the preload
 *     daemon's memory the engine maps), when the line gives one
 * @param fatal why the engine died: the root exception after {@code EngineCore encountered a fatal error.}, else the
 *     first fatal line's message
 * @param drafterLoadingWeightsSeconds the speculative-decoding drafter's {@code Loading weights took X seconds}: the
 *     second such line of a process
 * @param weightsHeldOutside whether {@code Weights are held outside this process} appeared (whatever follows it)
 * @param apiServers the API server processes, from {@code Defaulting api_server_count to data_parallel_size (N)} or
 *     {@code 'api_server_count': N} in the arguments
 * @param startFailure why the start failed before serving, when vLLM said it did ({@code EngineCore failed to start.},
 *     {@code Engine core initialization failed}): the root exception of the engine core's traceback (e.g. {@code
 *     torch.OutOfMemoryError: CUDA out of memory. ...}), else the last exception before the API server gave up, else
 *     vLLM's own line
 */
public record LogFindings(
        boolean configured,
        @Nullable Instant firstLineAt,
        boolean header,
        @Nullable String vllmVersion,
        @Nullable String engineArgs,
        @Nullable Double loadingWeightsSeconds,
        @Nullable Double modelLoadingGib,
        @Nullable Double modelLoadingSeconds,
        @Nullable Integer mappedTensors,
        @Nullable String mappedMode,
        @Nullable String cacheFallbackReason,
        @Nullable Double engineInitSeconds,
        @Nullable Double availableKvCacheGib,
        @Nullable Long kvCacheSizeTokens,
        @Nullable Double weightsHeldOutsideGib,
        @Nullable String fatal,
        @Nullable Double drafterLoadingWeightsSeconds,
        boolean weightsHeldOutside,
        @Nullable Integer apiServers,
        @Nullable String startFailure) {

    private static final Pattern GIB = Pattern.compile("(\\d{1,6}(?:\\.\\d{1,6})?)\\s*GiB");

    private static final Pattern LOAD_FORMAT =
            Pattern.compile("['\"]load_format['\"]\\s*:\\s*['\"]([\\w.-]{1,60})['\"]");

    private static final Pattern API_SERVER_COUNT = Pattern.compile("['\"]api_server_count['\"]\\s*:\\s*(\\d{1,6})");

    /** Nothing read (no log configured). */
    public static LogFindings none() {
        return new LogFindings(
                false, null, false, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                false, null, null);
    }

    /** The {@code load_format} the arguments name ({@code ipc_cache}, {@code runai_streamer}, ...), or null. */
    public @Nullable String loadFormat() {
        if (engineArgs == null) {
            return null;
        }
        Matcher matcher = LOAD_FORMAT.matcher(engineArgs);
        return matcher.find() ? matcher.group(1) : null;
    }

    /** Whether the log said anything of the weight cache: a hit, its memory split, or a fallback. */
    public boolean weightCacheLogged() {
        return mappedTensors != null || weightsHeldOutside || cacheFallbackReason != null;
    }

    /** The findings of one start's events, in the order they were logged. */
    public static LogFindings of(List<LogEvent> events) {
        Fold fold = new Fold();
        events.forEach(fold::add);
        return fold.findings();
    }

    /**
     * Whether a start with {@code events} so far needs its next {@link LogEvent.ExceptionRaised}: while it has not
     * served yet (the reason of a failure to start may be any of them), and the first after a fatal error. The request
     * errors of a serving engine are not evidence.
     */
    public static boolean needsException(List<LogEvent> events) {
        boolean serving = false;
        boolean awaitingCause = false;
        for (LogEvent event : events) {
            switch (event) {
                case LogEvent.ApplicationStartup e -> serving = true;
                case LogEvent.CoreStartFailed e -> awaitingCause = true;
                case LogEvent.EngineFatal e -> awaitingCause |= Fold.isCoreFatal(e);
                case LogEvent.ExceptionRaised e -> awaitingCause = false;
                default -> {}
            }
        }
        return !serving || awaitingCause;
    }

    /** The fold of a start's events into its findings. */
    private static final class Fold {

        private @Nullable Instant firstLineAt;
        private boolean header;
        private @Nullable String version;
        private @Nullable String args;
        // The Loading weights lines of each process, in order: the model's, then a drafter's.
        private final Map<String, Integer> loadings = new HashMap<>();
        private @Nullable Double loading;
        private @Nullable Double drafter;
        private @Nullable Double modelGib;
        private @Nullable Double modelSeconds;
        private @Nullable Integer mapped;
        private @Nullable String mode;
        private @Nullable String fallback;
        private @Nullable Double init;
        private @Nullable Double kvGib;
        private @Nullable Long kvTokens;
        private boolean outside;
        private @Nullable Double outsideGib;
        private @Nullable Integer apiServers;
        private @Nullable String fatal;
        private @Nullable String startFailure;
        private @Nullable String lastException;
        // A marker whose traceback's root exception is the reason: what it explains, and from which process.
        private @Nullable Awaiting awaiting;

        private enum Cause {
            START,
            FATAL
        }

        private record Awaiting(Cause cause, @Nullable Integer pid) {}

        void add(LogEvent event) {
            if (firstLineAt == null && event.at() != null) {
                firstLineAt = event.at();
            }
            switch (event) {
                case LogEvent.ServerVersion e -> {
                    header = true;
                    version = e.version();
                }
                case LogEvent.NonDefaultArgs e -> {
                    header = true;
                    args = e.args();
                }
                case LogEvent.LoadingWeights e -> loadingWeights(e);
                case LogEvent.ModelLoading e -> {
                    modelGib = e.gib();
                    modelSeconds = e.seconds();
                }
                case LogEvent.MappedFromCache e -> {
                    mapped = e.tensors();
                    mode = e.mode();
                }
                case LogEvent.CacheFallback e -> fallback = e.reason();
                case LogEvent.CacheWaitTimeout e -> fallback = e.detail();
                case LogEvent.InitEngine e -> init = e.seconds();
                case LogEvent.AvailableKvCache e -> kvGib = e.gib();
                case LogEvent.KvCacheSize e -> kvTokens = e.tokens();
                case LogEvent.WeightsHeldOutside e -> {
                    outside = true;
                    outsideGib = gib(e.detail());
                }
                case LogEvent.ApiServerCount e -> apiServers = e.count();
                case LogEvent.EngineFatal e -> {
                    if (fatal == null) {
                        fatal = e.detail();
                    }
                    if (isCoreFatal(e) && awaiting == null) {
                        awaiting = new Awaiting(Cause.FATAL, e.pid());
                    }
                }
                case LogEvent.CoreStartFailed e -> {
                    if (startFailure == null) {
                        startFailure = "EngineCore failed to start.";
                        awaiting = new Awaiting(Cause.START, e.pid());
                    }
                }
                case LogEvent.ExceptionRaised e -> exception(e);
                case LogEvent.InitializationFailed e -> {
                    if (startFailure == null || awaiting != null && awaiting.cause() == Cause.START) {
                        startFailure = lastException != null ? lastException : e.detail();
                        awaiting = null;
                    }
                }
                default -> {}
            }
        }

        static boolean isCoreFatal(LogEvent.EngineFatal event) {
            return event.detail().startsWith("EngineCore encountered a fatal error");
        }

        private void loadingWeights(LogEvent.LoadingWeights e) {
            String process = Objects.toString(e.process(), "") + " " + Objects.toString(e.pid(), "");
            int seen = loadings.merge(process, 1, Integer::sum);
            if (seen == 1) {
                loading = loading == null ? e.seconds() : Math.max(loading, e.seconds());
            } else if (seen == 2) {
                drafter = drafter == null ? e.seconds() : Math.max(drafter, e.seconds());
            }
        }

        private void exception(LogEvent.ExceptionRaised e) {
            Awaiting marker = awaiting;
            if (marker != null
                    && (marker.pid() == null || e.pid() == null || marker.pid().equals(e.pid()))) {
                if (marker.cause() == Cause.START) {
                    startFailure = e.exception();
                } else {
                    fatal = e.exception();
                }
                awaiting = null;
            }
            lastException = e.exception();
        }

        LogFindings findings() {
            Integer servers = apiServers;
            if (servers == null && args != null) {
                Matcher matcher = API_SERVER_COUNT.matcher(args);
                if (matcher.find()) {
                    servers = Integer.valueOf(matcher.group(1));
                }
            }
            return new LogFindings(
                    true,
                    firstLineAt,
                    header,
                    version,
                    args,
                    loading,
                    modelGib,
                    modelSeconds,
                    mapped,
                    mode,
                    fallback,
                    init,
                    kvGib,
                    kvTokens,
                    outsideGib,
                    fatal,
                    drafter,
                    outside,
                    servers,
                    startFailure);
        }

        /** The first {@code X GiB} of the line's detail: its wording after the colon is not pinned down (main docs). */
        private static @Nullable Double gib(String detail) {
            Matcher matcher = GIB.matcher(detail);
            return matcher.find() ? Double.valueOf(matcher.group(1)) : null;
        }
    }
}
