package dev.readygate.evidence;

import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
 *     {@code Engine core initialization failed}) or an API server process raised (a configuration error, a server that
 *     gave up waiting for its cores): the first exception of the start, whichever process or rank raised it (a worker's
 *     {@code torch.AcceleratorError: ...} before the engine core's wrapper of it; {@code torch.OutOfMemoryError: CUDA
 *     out of memory. ...}), with its message where it is on the next line (pydantic's), else vLLM's own line
 * @param timeZone how the log's times were read (the engine's zone and what told it), null when not known here
 * @param downloadSeconds {@code Time spent downloading weights for MODEL: X seconds}: the weights were fetched first
 *     (vLLM counts it inside {@code Model loading took}); per process the sum of its lines, the longest over processes
 * @param compilationSeconds torch.compile's share of engine init: the {@code (compilation: X s)} suffix of {@code init
 *     engine ... took}, else {@code torch.compile takes X s in total} (the longest over processes)
 * @param compileCacheLoadSeconds {@code Directly load the compiled graph(s) for ... from the cache, took X s}: graphs
 *     loaded from torch.compile's cache; per process the sum over its shapes, the longest over processes
 * @param compileSeconds {@code Compiling a graph for ... takes X s}: graphs compiled; per process the sum over its
 *     shapes, the longest over processes
 * @param graphCaptureSeconds {@code Graph capturing finished in X secs}: CUDA graph capture, per process the sum of
 *     its lines (a drafter captures its own), the longest over processes
 * @param graphCaptureGib {@code ..., took Y GiB}: the memory the capture took, likewise
 * @param unreadable why the log gave nothing (lines read, none in a format readygate reads): a named evidence gap,
 *     null while the log is read or has too few lines to tell
 * @param otherEngine why some lines were kept out: another engine writes to the same log (a process of a name vLLM runs
 *     once per engine wrote again after another of its name had started), null when none did
 * @param wakeUpSeconds the latest {@code It took X seconds to wake up}: vLLM's own time to wake from sleep mode (the
 *     longest over the processes that logged it at once), null when the engine never woke
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
        @Nullable String startFailure,
        @Nullable LogTimeZone timeZone,
        @Nullable Double downloadSeconds,
        @Nullable Double compilationSeconds,
        @Nullable Double compileCacheLoadSeconds,
        @Nullable Double compileSeconds,
        @Nullable Double graphCaptureSeconds,
        @Nullable Double graphCaptureGib,
        @Nullable String unreadable,
        @Nullable String otherEngine,
        @Nullable Double wakeUpSeconds) {

    private static final Pattern GIB = Pattern.compile("(\\d{1,6}(?:\\.\\d{1,6})?)\\s*GiB");

    private static final Pattern LOAD_FORMAT =
            Pattern.compile("['\"]load_format['\"]\\s*:\\s*['\"]([\\w.-]{1,60})['\"]");

    private static final Pattern API_SERVER_COUNT = Pattern.compile("['\"]api_server_count['\"]\\s*:\\s*(\\d{1,6})");

    /** Nothing read (no log configured). */
    public static LogFindings none() {
        return new LogFindings(
                false, null, false, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                false, null, null, null, null, null, null, null, null, null, null, null, null);
    }

    /** These findings, their times read in {@code zone}. */
    public LogFindings inZone(LogTimeZone zone) {
        return with(firstLineAt, zone, unreadable, otherEngine);
    }

    /** These findings as the log was read: their times in {@code zone}, and why nothing was read, if so. */
    public LogFindings read(LogTimeZone zone, @Nullable String unreadable) {
        return with(firstLineAt, zone, unreadable, otherEngine);
    }

    /**
     * These findings with their times read in {@code zone} where they were read as UTC: the first line's time moves by
     * the zone's offset.
     */
    public LogFindings readIn(java.time.ZoneOffset zone, LogTimeZone.Source source) {
        Instant first = firstLineAt == null ? null : firstLineAt.minusSeconds(zone.getTotalSeconds());
        return with(first, new LogTimeZone(zone, source), unreadable, otherEngine);
    }

    /** These findings, with lines kept out because {@code otherEngine} (null: none were). */
    public LogFindings besideOtherEngine(@Nullable String otherEngine) {
        return otherEngine == null ? this : with(firstLineAt, timeZone, unreadable, otherEngine);
    }

    private LogFindings with(
            @Nullable Instant first,
            @Nullable LogTimeZone zone,
            @Nullable String unreadable,
            @Nullable String otherEngine) {
        return new LogFindings(
                configured,
                first,
                header,
                vllmVersion,
                engineArgs,
                loadingWeightsSeconds,
                modelLoadingGib,
                modelLoadingSeconds,
                mappedTensors,
                mappedMode,
                cacheFallbackReason,
                engineInitSeconds,
                availableKvCacheGib,
                kvCacheSizeTokens,
                weightsHeldOutsideGib,
                fatal,
                drafterLoadingWeightsSeconds,
                weightsHeldOutside,
                apiServers,
                startFailure,
                zone,
                downloadSeconds,
                compilationSeconds,
                compileCacheLoadSeconds,
                compileSeconds,
                graphCaptureSeconds,
                graphCaptureGib,
                unreadable,
                otherEngine,
                wakeUpSeconds);
    }

    /** The {@code load_format} the arguments name ({@code ipc_cache}, {@code runai_streamer}, ...), or null. */
    public @Nullable String loadFormat() {
        if (engineArgs == null) {
            return null;
        }
        Matcher matcher = LOAD_FORMAT.matcher(engineArgs);
        return matcher.find() ? matcher.group(1) : null;
    }

    /**
     * Whether torch.compile's cache served this start: true when graphs were loaded from it and none compiled, false
     * when any graph was compiled (nothing cached for this model, configuration or vLLM version), null when the log
     * said neither (no compilation, or a vLLM that logs neither at INFO).
     */
    public @Nullable Boolean compileCacheHit() {
        if (compileSeconds != null) {
            return false;
        }
        return compileCacheLoadSeconds != null ? Boolean.TRUE : null;
    }

    /**
     * {@code Model loading took} without the download vLLM counts inside it, when both were logged: the loading a
     * restart that downloads again shares with one that does not. Else as logged.
     */
    public @Nullable Double modelLoadingWithoutDownloadSeconds() {
        if (modelLoadingSeconds == null || downloadSeconds == null) {
            return modelLoadingSeconds;
        }
        return Math.max(0.0, modelLoadingSeconds - downloadSeconds);
    }

    /**
     * The durations (seconds) and memory (GiB) the engine logged, as the record keeps them ({@code loggedDurations}):
     * {@code weights_loading}, {@code drafter_weights_loading}, {@code model_loading} (without the download),
     * {@code model_loading_gib}, {@code engine_init}, {@code available_kv_cache_gib}, {@code weights_held_outside_gib},
     * then the phases a cached restart saves beyond the weights: {@code download}, {@code compilation}, {@code
     * compile_cache_load}, {@code compile}, {@code graph_capture} and {@code graph_capture_gib}. Only those logged.
     */
    public Map<String, Double> loggedDurations() {
        Map<String, Double> logged = new LinkedHashMap<>();
        putIfPresent(logged, "weights_loading", loadingWeightsSeconds);
        putIfPresent(logged, "drafter_weights_loading", drafterLoadingWeightsSeconds);
        // Model loading as vLLM logs it holds the download: with it, a restart that downloads again reads as a slow
        // cold start.
        putIfPresent(logged, "model_loading", modelLoadingWithoutDownloadSeconds());
        putIfPresent(logged, "model_loading_gib", modelLoadingGib);
        putIfPresent(logged, "engine_init", engineInitSeconds);
        putIfPresent(logged, "available_kv_cache_gib", availableKvCacheGib);
        putIfPresent(logged, "weights_held_outside_gib", weightsHeldOutsideGib);
        putIfPresent(logged, "download", downloadSeconds);
        putIfPresent(logged, "compilation", compilationSeconds);
        putIfPresent(logged, "compile_cache_load", compileCacheLoadSeconds);
        putIfPresent(logged, "compile", compileSeconds);
        putIfPresent(logged, "graph_capture", graphCaptureSeconds);
        putIfPresent(logged, "graph_capture_gib", graphCaptureGib);
        return logged;
    }

    private static void putIfPresent(Map<String, Double> map, String key, @Nullable Double value) {
        if (value != null) {
            map.put(key, value);
        }
    }

    /** Whether the log said anything of the weight cache: a hit, its memory split, or a fallback. */
    public boolean weightCacheLogged() {
        return mappedTensors != null || weightsHeldOutside || cacheFallbackReason != null;
    }

    /**
     * Whether {@code event}, in a start that does not serve yet, ends it: an exception an API server process raised
     * (vLLM's configuration check, a server that gave up waiting for its engine cores), which no engine core reports.
     */
    static boolean apiServerRaised(LogEvent event) {
        return event instanceof LogEvent.ExceptionRaised && Fold.apiServer(event.process());
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

    /**
     * A phase each process (rank, worker) logs on its own, in one or more lines (one per compiled shape, a drafter's
     * after the model's): the sum of each process's lines, and the longest of the processes, which the start waited
     * for.
     */
    private static final class PerProcess {

        private final Map<String, Double> sums = new HashMap<>();

        void add(LogEvent event, double value) {
            sums.merge(Fold.processKey(event), value, Double::sum);
        }

        @Nullable
        Double longest() {
            return sums.values().stream().max(Double::compare).orElse(null);
        }
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
        private @Nullable Double compilation;
        private @Nullable Double wakeUp;
        private @Nullable Instant wakeUpAt;
        private final PerProcess download = new PerProcess();
        private final PerProcess cacheLoad = new PerProcess();
        private final PerProcess compile = new PerProcess();
        // torch.compile's total is one line per process: the "sum" of one.
        private final PerProcess compileTotal = new PerProcess();
        private final PerProcess capture = new PerProcess();
        private final PerProcess captureGib = new PerProcess();
        private @Nullable Double kvGib;
        private @Nullable Long kvTokens;
        private boolean outside;
        private @Nullable Double outsideGib;
        private @Nullable Integer apiServers;
        private @Nullable String fatal;
        // A fatal error's marker whose traceback's root exception is the reason, and its process.
        private @Nullable Integer awaitingFatal;
        private boolean awaitingFatalCause;
        private boolean serving;
        // The start failed before serving: vLLM's own line saying so, or the exception an API server raised.
        private @Nullable String failureLine;
        // The first exception of the start (any process, any rank): a failed start's cause. Python prints a chain's
        // root first, and a worker's exception comes before the engine core's wrapper of it.
        private @Nullable String firstException;
        private @Nullable Integer firstExceptionPid;
        // Whether the event before was the first exception, whose message may follow on a line of its own.
        private boolean detailMayFollow;

        void add(LogEvent event) {
            if (firstLineAt == null && event.at() != null) {
                firstLineAt = event.at();
            }
            boolean firstExceptionNow = false;
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
                // A warning that only says it falls back (SGLang's) keeps the reason logged before it.
                case LogEvent.CacheFallback e -> fallback = fallback != null && e.warningOnly() ? fallback : e.reason();
                case LogEvent.CacheWaitTimeout e -> fallback = e.detail();
                case LogEvent.InitEngine e -> {
                    init = e.seconds();
                    compilation = e.compilationSeconds();
                }
                case LogEvent.WeightsDownloaded e -> download.add(e, e.seconds());
                case LogEvent.CompiledGraphsLoaded e -> cacheLoad.add(e, e.seconds());
                case LogEvent.GraphCompiled e -> compile.add(e, e.seconds());
                case LogEvent.CompileTotal e -> compileTotal.add(e, e.seconds());
                case LogEvent.GraphsCaptured e -> {
                    capture.add(e, e.seconds());
                    if (e.gib() != null) {
                        captureGib.add(e, e.gib());
                    }
                }
                case LogEvent.AvailableKvCache e -> kvGib = e.gib();
                case LogEvent.KvCacheSize e -> kvTokens = e.tokens();
                case LogEvent.WeightsHeldOutside e -> {
                    outside = true;
                    outsideGib = gib(e.detail());
                }
                case LogEvent.ApiServerCount e -> apiServers = e.count();
                case LogEvent.WokeUp e -> {
                    // Each engine core (data-parallel rank) logs its own wake at once: the latest wake, its longest.
                    boolean sameWake = wakeUp != null && Objects.equals(wakeUpAt, e.at());
                    wakeUp = sameWake ? Math.max(wakeUp, e.seconds()) : e.seconds();
                    wakeUpAt = e.at();
                }
                case LogEvent.EngineFatal e -> {
                    if (fatal == null) {
                        fatal = e.detail();
                    }
                    if (isCoreFatal(e) && !awaitingFatalCause) {
                        awaitingFatalCause = true;
                        awaitingFatal = e.pid();
                    }
                }
                case LogEvent.ApplicationStartup e -> serving = true;
                case LogEvent.CoreStartFailed e -> failed("EngineCore failed to start.");
                case LogEvent.InitializationFailed e -> failed(e.detail());
                case LogEvent.ExceptionRaised e -> firstExceptionNow = exception(e);
                case LogEvent.ExceptionDetail e -> {
                    if (detailMayFollow && samePid(firstExceptionPid, e.pid())) {
                        firstException = firstException + ": " + e.detail();
                    }
                }
                default -> {}
            }
            detailMayFollow = firstExceptionNow;
        }

        private void failed(String line) {
            if (failureLine == null) {
                failureLine = line;
            }
        }

        /**
         * An API server process's exception while nothing serves yet: vLLM's configuration check, or a server process
         * that gave up waiting for its engine cores. Either ends the start; no engine core says so.
         */
        static boolean apiServer(@Nullable String process) {
            return process == null || process.startsWith("APIServer") || process.startsWith("ApiServer");
        }

        private static boolean samePid(@Nullable Integer a, @Nullable Integer b) {
            return a == null || b == null || a.equals(b);
        }

        static boolean isCoreFatal(LogEvent.EngineFatal event) {
            return event.detail().startsWith("EngineCore encountered a fatal error");
        }

        static String processKey(LogEvent e) {
            return Objects.toString(e.process(), "") + " " + Objects.toString(e.pid(), "");
        }

        private void loadingWeights(LogEvent.LoadingWeights e) {
            String process = processKey(e);
            int seen = loadings.merge(process, 1, Integer::sum);
            if (seen == 1) {
                loading = loading == null ? e.seconds() : Math.max(loading, e.seconds());
            } else if (seen == 2) {
                drafter = drafter == null ? e.seconds() : Math.max(drafter, e.seconds());
            }
        }

        /** Returns whether it is the start's first exception. */
        private boolean exception(LogEvent.ExceptionRaised e) {
            if (awaitingFatalCause && samePid(awaitingFatal, e.pid())) {
                fatal = e.exception();
                awaitingFatalCause = false;
            }
            if (serving) {
                return false;
            }
            if (apiServer(e.process())) {
                failed(e.exception());
            }
            if (firstException != null) {
                return false;
            }
            firstException = e.exception();
            firstExceptionPid = e.pid();
            return true;
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
                    failureLine == null ? null : firstException != null ? firstException : failureLine,
                    null,
                    download.longest(),
                    compilation != null ? compilation : compileTotal.longest(),
                    cacheLoad.longest(),
                    compile.longest(),
                    capture.longest(),
                    captureGib.longest(),
                    null,
                    null,
                    wakeUp);
        }

        /** The first {@code X GiB} of the line's detail: its wording after the colon is not pinned down (main docs). */
        private static @Nullable Double gib(String detail) {
            Matcher matcher = GIB.matcher(detail);
            return matcher.find() ? Double.valueOf(matcher.group(1)) : null;
        }
    }
}
