package dev.readygate.evidence;

import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@link LogEvent}s readygate cares about from vLLM log lines (reference §4.5, §5.4, §6), tolerating the
 * differences between versions: the {@code (EngineCore_DP0 pid=N)} prefix or none (or nested ones, as Ray forwards a
 * worker's lines), a {@code [file.py:123]} source, the older {@code file.py:123]} or none, a timestamp or none
 * (uvicorn's {@code INFO:     ...} lines), ANSI colours, number formats and extra spaces.
 *
 * <p>vLLM's line is found wherever it starts: after a log collector's prefix (the Kubernetes CRI {@code
 * 2026-11-30T12:05:20.1Z stdout F }, docker compose's {@code vllm-1  | }, a bracketed {@code [2025-08-12T08:42:32Z] },
 * Docker Desktop's {@code 2026-05-01 21:55:02.609 | }, or any other prefix of up to {@value #MAX_PREFIX} characters
 * before vLLM's own process prefix, level and timestamp). The first such start counts, so a line that vLLM echoes
 * inside a message cannot pose as one.
 *
 * <p>Each event's phrase must open the line's message (after the prefix), except the daemon's READY marker, which
 * may appear anywhere: text that vLLM echoes from requests cannot pose as an engine event that way. Parsing is pure
 * apart from reading the year's anchor, cheap for the lines that match nothing (a substring check before any regular
 * expression), and never throws: a line it cannot read is no event.
 *
 * <p>vLLM's timestamps have no year. A line is dated in the latest year that does not put it after its anchor (plus a
 * day, for clocks and time zones that disagree): a collector's timestamp on the same line, else the given anchor (the
 * log file's modification time), else now. A line is never dated in the future, however long after it was written
 * it is read.
 */
final class VllmLogParser {

    /** The longest prefix before vLLM's own line that is searched for it. */
    static final int MAX_PREFIX = 200;

    private static final Duration ANCHOR_SLACK = Duration.ofDays(1);

    private static final String NUMBER = "(-?(?:\\d[\\d,]{0,30}(?:\\.\\d{0,30})?|\\.\\d{1,30}))";

    private static final String SECONDS = "\\s*(?:seconds|secs?|s)\\b";

    private static final Pattern ANSI_ESCAPE = Pattern.compile("\u001B\\[[0-9;?]{0,32}[A-Za-z]");

    /** docker compose's prefix: the container's name, padding and a bar ({@code vllm-decode-1  | }). */
    private static final Pattern COMPOSE_CONTAINER = Pattern.compile("([A-Za-z][\\w.@/-]{0,100})\\s{0,40}\\|");

    /**
     * A log collector's prefix at the start of the line: the CRI format, Docker Desktop's, a bracketed timestamp or
     * name, docker compose's service name and bar.
     */
    private static final String COLLECTOR = "(?:\\d{4}-\\d{2}-\\d{2}T[0-9:.]{1,30}(?:Z|[+-]\\d{2}:?\\d{2})?"
            + "\\s+(?:stdout|stderr)\\s+[FP]\\s+"
            + "|\\d{4}-\\d{2}-\\d{2}[ T][0-9:.,]{1,30}(?:Z|[+-]\\d{2}:?\\d{2})?\\s{0,8}\\|\\s*"
            + "|\\[[^\\[\\]]{1,80}]\\s+"
            + "|[A-Za-z0-9][\\w.@/-]{0,100}\\s{0,40}\\|\\s*)";

    /**
     * vLLM's part of the line before the message, each part optional: the process ({@code (APIServer pid=7)}, the last
     * of nested ones), the level ({@code INFO}, uvicorn's {@code INFO:}), the timestamp and the source ({@code
     * [api_server.py:1839]}, or {@code api_server.py:1839]} before vLLM 0.8).
     */
    private static final String VLLM_HEADER = "\\s*(?:\\((?<process>[^()]{0,80}?)\\s*pid=(?<pid>\\d{1,9})"
            + "(?:,[^()]{0,80})?\\)\\s*){0,4}"
            + "(?:(?<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::|\\s)\\s*)?"
            + "(?:(?<month>\\d{2})-(?<day>\\d{2})\\s+(?<hour>\\d{2}):(?<minute>\\d{2}):(?<second>\\d{2})"
            + "(?:[.,](?<fraction>\\d{1,9}))?\\s+)?"
            + "(?:\\[?[\\w.\\-/<>]{1,120}:\\d{1,7}]\\s*)?";

    private static final Pattern HEADER = Pattern.compile("(?<collector>" + COLLECTOR + ")?" + VLLM_HEADER);

    private static final Pattern VLLM_ONLY_HEADER = Pattern.compile(VLLM_HEADER);

    /**
     * Where vLLM's own line starts after an unknown prefix: its process prefix, a level with vLLM's timestamp, or
     * uvicorn's padded level, after a space or a separator.
     */
    private static final Pattern VLLM_START = Pattern.compile("(?<![^\\s|\\]>)])(?:\\([^()]{0,80}?pid=\\d{1,9}"
            + "(?:,[^()]{0,80})?\\)\\s"
            + "|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\\s+\\d{2}-\\d{2}\\s+\\d{2}:\\d{2}:\\d{2}"
            + "|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):\\s{2,})");

    /**
     * A level word where vLLM's logger is configured with another format (a plugin's or an image's logging config,
     * loguru's): {@code 2026-06-10 11:30:27 | gpu_model_runner | load_model:3012 | INFO : Model loading took ...}. The
     * message follows somewhere after it; the text before it holds no quote (a request vLLM echoes is quoted).
     */
    private static final Pattern LOOSE_LEVEL = Pattern.compile(
            "(?<![\\w'\"])(?<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?![\\w'\"])[\\s|:\\]>-]{0,12}");

    /** The longest text between a loose level and the message: the logger name, function and line in between. */
    private static final int MAX_LOOSE_GAP = 160;

    /** The fraction of a second after a date's seconds. */
    private static final Pattern FRACTION = Pattern.compile("[.,](\\d{1,9})");

    /**
     * SGLang's own prefix ({@code configure_logger}, python/sglang/srt/utils/common.py @004f0c7a: {@code
     * [%(asctime)s{ms}{prefix}] }, {@code %Y-%m-%d %H:%M:%S}, local time; the scheduler's rank tags {@code DP0 PP0
     * ATTN_CP0 MOE_DP0 TP0 EP0}, any of them, in any order, from {@code configure_scheduler_process}).
     */
    private static final Pattern SGLANG_PREFIX =
            Pattern.compile("\\[(\\d{4})-(\\d{2})-(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2})"
                    + "(?:\\.(\\d{3}))?(?: (?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\\d{1,5}){0,6}]\\s");

    /** A full date and time in a collector's prefix: the year vLLM's own timestamp lacks. */
    private static final Pattern PREFIX_DATE = Pattern.compile(
            "(\\d{4})-(\\d{2})-(\\d{2})[T ](\\d{2}):(\\d{2}):(\\d{2})(?:[.,]\\d{1,9})?(Z|[+-]\\d{2}:?\\d{2})?");

    /** A Python exception's name at the start of a traceback's last line: {@code torch.OutOfMemoryError: ...}. */
    private static final String EXCEPTION =
            "(?:[A-Za-z_]\\w{0,60}\\.){0,10}[A-Z]\\w{0,80}?(?:Error|Exception)(?=:|\\s*$)";

    /** How SGLang's fallback warning is kept as a reason, when no line before it said why: its own words follow. */
    private static final String SGLANG_FALLBACK = "SGLang: ";

    private static final List<Rule> RULES = List.of(
            rule(
                    "version",
                    "vLLM\\s+(?:API\\s+)?server\\s+version:?\\s*v?(\\d[\\w.+-]{0,60})",
                    (m, line, o) -> new LogEvent.ServerVersion(o.at(), o.process(), o.pid(), version(m.group(1)))),
            // vLLM's banner (log_version_and_model): block-character art, then "version X" on its middle line.
            rule(
                    "version",
                    "[\\u2580-\\u259F][\\u2580-\\u259F\\s]{0,80}version\\s+v?(\\d[\\w.+-]{0,60})",
                    (m, line, o) -> new LogEvent.ServerVersion(o.at(), o.process(), o.pid(), version(m.group(1)))),
            rule(
                    "Initializing",
                    "Initializing\\s+an?\\s+(?:V\\d\\s+)?LLM\\s+engine\\s*\\(v?(\\d[\\w.+-]{0,60})\\)",
                    (m, line, o) -> new LogEvent.ServerVersion(o.at(), o.process(), o.pid(), version(m.group(1)))),
            rule("non-default", "non-default\\s+args\\s*:\\s*", (m, line, o) -> {
                String args = line.substring(m.end()).strip();
                return args.isEmpty() ? null : new LogEvent.NonDefaultArgs(o.at(), o.process(), o.pid(), args);
            }),
            rule(
                    "weights",
                    "Loading\\s+weights\\s+took\\s+" + NUMBER + SECONDS,
                    (m, line, o) -> new LogEvent.LoadingWeights(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            rule(
                    "loading",
                    "Model\\s+loading\\s+took\\s+" + NUMBER + "\\s*Gi?B(?:\\s+memory)?\\s+and\\s+" + NUMBER + SECONDS,
                    (m, line, o) -> new LogEvent.ModelLoading(
                            o.at(), o.process(), o.pid(), decimal(m.group(1)), decimal(m.group(2)))),
            rule(
                    "tensors",
                    "Mapped\\s+(\\d[\\d,]{0,15})\\s+tensors\\s+from\\s+the\\s+weight\\s+cache\\s+daemon"
                            + "(?:\\s*\\(\\s*([\\w-]{1,40})\\s+mode\\s*\\))?",
                    (m, line, o) -> mapped(m.group(1), m.group(2) != null ? m.group(2) : "unknown", o)),
            rule(
                    "outside",
                    "Weights\\s+are\\s+held\\s+outside\\s+this\\s+process\\s*:?\\s*",
                    (m, line, o) -> new LogEvent.WeightsHeldOutside(
                            o.at(),
                            o.process(),
                            o.pid(),
                            line.substring(m.end()).strip())),
            rule(
                    "unusable",
                    "Weight\\s+cache\\s+unusable\\s*\\(",
                    (m, line, o) ->
                            new LogEvent.CacheFallback(o.at(), o.process(), o.pid(), fallbackReason(line, m.end()))),
            rule(
                    "IPC",
                    "Weight\\s+cache\\s+IPC\\s+loading\\s+failed",
                    (m, line, o) -> new LogEvent.CacheFallback(
                            o.at(), o.process(), o.pid(), "Weight cache IPC loading failed")),
            rule(
                    "become",
                    "(?:[\\w.]{1,120}:\\s*)?(Weight\\s+cache\\s+daemon\\s+did\\s+not\\s+become\\s+ready)",
                    (m, line, o) -> new LogEvent.CacheWaitTimeout(
                            o.at(),
                            o.process(),
                            o.pid(),
                            line.substring(m.start(1)).strip())),
            new Rule(
                    "aemon",
                    true,
                    Pattern.compile("Weight\\s+cache\\s+daemon\\s+ready\\b", Pattern.CASE_INSENSITIVE),
                    true,
                    (m, line, o) -> new LogEvent.DaemonReady(o.at(), o.process(), o.pid())),
            // SGLang's daemon (python/sglang/srt/weight_cache/daemon.py @366325d6, behind its own "%(asctime)s [Daemon
            // gpu=%d tp_rank=%d] %(levelname)s " format): "[WeightCacheDaemon gpu=%d tp_rank=%d] Exported %d tensors
            // as IPC handles. Ready to serve."; its launcher's "All %d weight cache daemons on node %d are ready".
            new Rule(
                    "Ready to serve",
                    false,
                    Pattern.compile(
                            "Exported\\s+\\d[\\d,]{0,15}\\s+tensors\\s+as\\s+IPC\\s+handles\\.\\s+Ready\\s+to\\s+serve"),
                    true,
                    (m, line, o) -> new LogEvent.DaemonReady(o.at(), o.process(), o.pid())),
            new Rule(
                    "weight cache daemons on node",
                    false,
                    Pattern.compile(
                            "All\\s+\\d{1,5}\\s+weight\\s+cache\\s+daemons\\s+on\\s+node\\s+\\d{1,5}\\s+are\\s+ready"),
                    true,
                    (m, line, o) -> new LogEvent.DaemonReady(o.at(), o.process(), o.pid())),
            rule(
                    "Available",
                    "Available\\s+KV\\s+cache\\s+memory\\s*:\\s*" + NUMBER + "\\s*Gi?B",
                    (m, line, o) -> new LogEvent.AvailableKvCache(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            // The CPU backend's cpu_worker.py: "Explicitly set (1.0/15.51) GiB for KV cache on node 0." (the
            // configured VLLM_CPU_KVCACHE_SPACE) or "Auto set (1.48/18.0) GiB for KV cache on node 0, with ...".
            rule(
                    " set (",
                    "(?:Explicitly|Auto)\\s+set\\s+\\(\\s*" + NUMBER + "\\s*/\\s*" + NUMBER
                            + "\\s*\\)\\s*Gi?B\\s+for\\s+KV\\s+cache\\b",
                    (m, line, o) -> new LogEvent.AvailableKvCache(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            rule(
                    "KV",
                    "(?:GPU\\s+)?KV\\s+cache\\s+size\\s*:\\s*(\\d[\\d,]{0,30})\\s*tokens",
                    (m, line, o) -> kvCacheSize(m.group(1), o)),
            rule(
                    "init",
                    "init\\s+engine\\s*\\([^)]{0,200}\\)\\s*took\\s+" + NUMBER + SECONDS
                            + "(?:\\s*\\(\\s*compilation\\s*:\\s*" + NUMBER + "\\s*s\\b)?",
                    (m, line, o) -> new LogEvent.InitEngine(
                            o.at(), o.process(), o.pid(), decimal(m.group(1)), optionalDecimal(m.group(2)))),
            // vllm/model_executor/model_loader/weight_utils.py: "Time spent downloading weights for %s: %.6f seconds".
            rule(
                    "downloading",
                    "Time\\s+spent\\s+downloading\\s+weights\\s+for\\s+.{1,300}?:\\s*" + NUMBER + SECONDS,
                    (m, line, o) -> new LogEvent.WeightsDownloaded(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            // vllm/compilation/backends.py: "Directly load the compiled graph(s) for compile range %s from the cache,
            // took %.3f s" (before: "for dynamic shape", "for shape %s").
            rule(
                    "Directly",
                    "Directly\\s+load\\s+the\\s+compiled\\s+graph\\(s\\)\\s+for\\s+.{1,200}?\\s+from\\s+the\\s+cache,"
                            + "\\s*took\\s+" + NUMBER + SECONDS,
                    (m, line, o) ->
                            new LogEvent.CompiledGraphsLoaded(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            // vllm/compilation/backends.py: "Compiling a graph for compile range %s takes %.2f s" (before: "for
            // dynamic shape", "for general shape", "for shape %s").
            rule(
                    "Compiling",
                    "Compiling\\s+a\\s+graph\\s+for\\s+.{1,200}?\\s+takes\\s+" + NUMBER + SECONDS,
                    (m, line, o) -> new LogEvent.GraphCompiled(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            // vllm/compilation/monitor.py: "torch.compile takes %.2f s in total" (later "took"; 2026 builds
            // "torch.compile and initial profiling run took %.2f s in total", as a public 2026 log shows).
            rule(
                    "torch.compile",
                    "torch\\.compile(?:\\s+and\\s+initial\\s+profiling\\s+run)?\\s+(?:takes|took)\\s+" + NUMBER
                            + SECONDS + "\\s+in\\s+total",
                    (m, line, o) -> new LogEvent.CompileTotal(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            // vllm/v1/worker/gpu_model_runner.py: "Graph capturing finished in %.0f secs, took %.2f GiB".
            rule(
                    "Graph capturing",
                    "Graph\\s+capturing\\s+finished\\s+in\\s+" + NUMBER + SECONDS + "(?:\\s*,\\s*took\\s+" + NUMBER
                            + "\\s*Gi?B)?",
                    (m, line, o) -> new LogEvent.GraphsCaptured(
                            o.at(), o.process(), o.pid(), decimal(m.group(1)), optionalDecimal(m.group(2)))),
            rule(
                    "Starting",
                    "Starting\\s+vLLM\\s+(?:API\\s+)?server\\b(?:\\s+\\d{1,6})?(?:\\s+on\\s+(\\S.*))?",
                    (m, line, o) -> {
                        String url = m.group(1) == null ? null : m.group(1).strip();
                        return new LogEvent.ServerStarting(o.at(), o.process(), o.pid(), url);
                    }),
            // vllm/v1/executor/abstract.py, wake_up: "It took %.6f seconds to wake up tags %s." (@09cb327f).
            rule(
                    "to wake up",
                    "It\\s+took\\s+" + NUMBER + SECONDS + "\\s+to\\s+wake\\s+up\\b",
                    (m, line, o) -> new LogEvent.WokeUp(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            rule(
                    "startup",
                    "Application\\s+startup\\s+complete",
                    (m, line, o) -> new LogEvent.ApplicationStartup(o.at(), o.process(), o.pid())),
            // ---- SGLang's scheduler and server lines (its logger writes "[%(asctime)s TP0] %(message)s": the
            // bracketed prefix is read as a collector's). Sources in docs/engines.md, "SGLang's weight cache".
            // The main process's first line, "server_args=ServerArgs(model_path=..., ...)" (as real logs show it; later
            // builds a dict): the engine's arguments, its secrets redacted as vLLM's are (LogEvent.NonDefaultArgs).
            rule("server_args=", "server_args\\s*=\\s*", (m, line, o) -> {
                String args = line.substring(m.end()).strip();
                return args.isEmpty() ? null : new LogEvent.NonDefaultArgs(o.at(), o.process(), o.pid(), args);
            }),
            // model_runner.py @0005834c, ModelRunner.load_model: "Load weight end. elapsed=%.2f s, type=%s, ..." (the
            // elapsed time since Dec 2025; a weight-cache hit passes through it too).
            rule(
                    "Load weight end",
                    "Load\\s+weight\\s+end\\.\\s*elapsed=\\s*" + NUMBER + "\\s*s\\b",
                    (m, line, o) -> new LogEvent.LoadingWeights(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            // weight_cache/ipc_loader.py @6512c36d: "[IpcModelLoader] Fetched %d IPC handles from daemon in %.2fs";
            // @02f7ffb4: "[IpcModelLoader] Fetched %d tensors from daemon (transport=%s) in %.2fs".
            rule(
                    "[IpcModelLoader] Fetched",
                    "\\[IpcModelLoader]\\s+Fetched\\s+(\\d[\\d,]{0,15})\\s+(?:IPC\\s+handles|tensors)\\s+from\\s+daemon",
                    (m, line, o) -> mapped(m.group(1), "sglang ipc", o)),
            // Its reason, logged before the fallback's warning (the registry-era ipc_loader.py): "[IpcModelLoader]
            // Daemon socket not found at %s.", "[IpcModelLoader] No registered daemon matches config=%s ...".
            rule(
                    "[IpcModelLoader] Daemon socket not found",
                    "\\[IpcModelLoader]\\s+(Daemon\\s+socket\\s+not\\s+found\\s+at\\s+\\S{1,300}?)\\.?\\s*$",
                    (m, line, o) -> new LogEvent.CacheFallback(o.at(), o.process(), o.pid(), m.group(1))),
            rule(
                    "[IpcModelLoader] No registered daemon",
                    "\\[IpcModelLoader]\\s+No\\s+registered\\s+daemon\\s+matches\\b",
                    (m, line, o) -> new LogEvent.CacheFallback(
                            o.at(), o.process(), o.pid(), "No registered daemon matches this GPU and config")),
            // The warning itself: "[IpcModelLoader] Weight cache not available or config mismatch, falling back to
            // disk load" (@6512c36d), "[IpcModelLoader] No weight cache is registered for this GPU and config;
            // falling back to disk load" (registry era).
            rule(
                    "falling back to disk load",
                    "\\[IpcModelLoader]\\s+(\\S.{0,200}?)[,;]?\\s*falling\\s+back\\s+to\\s+disk\\s+load\\b",
                    (m, line, o) -> new LogEvent.CacheFallback(
                            o.at(),
                            o.process(),
                            o.pid(),
                            SGLANG_FALLBACK + m.group(1).strip(),
                            true)),
            // mem_cache/memory_pool.py: "KV Cache is allocated. #tokens: %d, K size: ..." (2025), "KV Cache is
            // allocated. dtype: %s, #tokens: %d, ..." (2026); hybrid models' "Full KV Cache is allocated. ...".
            rule(
                    "Cache is allocated",
                    "(?:Full\\s+)?KV\\s+Cache\\s+is\\s+allocated\\.\\s*(?:dtype:\\s*[\\w.]{1,40},\\s*)?#tokens:\\s*"
                            + "(\\d[\\d,]{0,30})",
                    (m, line, o) -> kvCacheSize(m.group(1), o)),
            // cuda_graph_runner.py (to v0.5.10): "Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f GB.
            // ..."; cuda_graph_setup.py @018cdcbe: "Capture %s %s end. elapsed=%.2f s, mem usage=%.2f GB, ...".
            rule(
                    "Capture",
                    "Capture\\s+(?:cuda\\s+graph|[\\w ]{1,60}?\\s+(?:CUDA|CPU|NPU|XPU)\\s+graph)\\s+end\\.\\s*"
                            + "(?:Time\\s+elapsed:|elapsed=)\\s*" + NUMBER + "\\s*s[.,]\\s*mem\\s+usage=\\s*" + NUMBER
                            + "\\s*GB",
                    (m, line, o) -> new LogEvent.GraphsCaptured(
                            o.at(), o.process(), o.pid(), decimal(m.group(1)), decimal(m.group(2)))),
            // http_server.py @0025436e, _wait_and_warmup: after the warmup request, "The server is fired up and
            // ready to roll!".
            rule(
                    "fired up",
                    "The\\s+server\\s+is\\s+fired\\s+up\\s+and\\s+ready\\s+to\\s+roll",
                    (m, line, o) -> new LogEvent.ApplicationStartup(o.at(), o.process(), o.pid())),
            rule(
                    "Engine",
                    "EngineCore\\s+encountered\\s+a\\s+fatal\\s+error|(?:VLLM\\s+)?Engine\\s+failed,\\s*terminating\\s+server"
                            + "|(?:[\\w]{1,60}\\.){0,10}EngineDeadError\\b",
                    (m, line, o) -> new LogEvent.EngineFatal(
                            o.at(),
                            o.process(),
                            o.pid(),
                            line.substring(m.regionStart()).strip())),
            rule(
                    "failed to start",
                    "EngineCore\\s+failed\\s+to\\s+start\\b",
                    (m, line, o) -> new LogEvent.CoreStartFailed(o.at(), o.process(), o.pid())),
            rule(
                    "initialization failed",
                    "(?:" + EXCEPTION + ":\\s*)?Engine\\s+core\\s+initialization\\s+failed\\b",
                    (m, line, o) -> new LogEvent.InitializationFailed(
                            o.at(),
                            o.process(),
                            o.pid(),
                            line.substring(m.regionStart()).strip())),
            rule(
                    "api_server_count",
                    "Defaulting\\s+api_server_count\\s+to\\s+data_parallel_size\\s*\\(\\s*(\\d{1,6})\\s*\\)",
                    (m, line, o) ->
                            new LogEvent.ApiServerCount(o.at(), o.process(), o.pid(), Integer.parseInt(m.group(1)))),
            // pydantic's error line, {msg} [type=..., input_value=..., input_type=...]: the message only.
            rule(
                    "[type=",
                    "(\\S.{0,500}?)\\s*\\[type=[\\w.]{1,80}[,\\]]",
                    (m, line, o) -> new LogEvent.ExceptionDetail(
                            o.at(), o.process(), o.pid(), m.group(1).strip())),
            rule("Error", EXCEPTION, VllmLogParser::exception),
            rule("Exception", EXCEPTION, VllmLogParser::exception));

    private final Clock clock;
    private final Supplier<@Nullable Instant> yearAnchor;
    private final LogClock engineClock;

    /** @param clock now, the anchor of the year of vLLM's year-less timestamps */
    public VllmLogParser(Clock clock) {
        this(clock, () -> null);
    }

    /**
     * @param clock now, the anchor of the year of vLLM's year-less timestamps when {@code yearAnchor} knows none
     * @param yearAnchor when the lines being read were written at the latest, e.g. the log file's modification time;
     *     null when unknown
     * @param zone the engine's time zone ({@code readygate.evidence.log-time-zone}), or null to learn it from the log
     */
    public VllmLogParser(Clock clock, Supplier<@Nullable Instant> yearAnchor, @Nullable ZoneId zone) {
        this.clock = clock;
        this.yearAnchor = yearAnchor;
        this.engineClock = new LogClock(zone);
    }

    /**
     * @param clock now, the anchor of the year of vLLM's year-less timestamps when {@code yearAnchor} knows none
     * @param yearAnchor when the lines being read were written at the latest, e.g. the log file's modification time;
     *     null when unknown
     */
    public VllmLogParser(Clock clock, Supplier<@Nullable Instant> yearAnchor) {
        this(clock, yearAnchor, null);
    }

    /** The engine's log clock: the zone its times are read in, learned as lines are read. */
    LogClock engineClock() {
        return engineClock;
    }

    /** The event {@code line} reports, or {@code null} when it reports none of them (or cannot be read). */
    public @Nullable LogEvent parse(String line) {
        try {
            String text =
                    line.indexOf('\u001B') >= 0 ? ANSI_ESCAPE.matcher(line).replaceAll("") : line;
            Header header = null;
            Header loose = null;
            for (Rule rule : RULES) {
                if (!rule.mayMatch(text)) {
                    continue;
                }
                if (header == null) {
                    header = header(text);
                    loose = header.vllm() ? null : looseHeader(text);
                }
                LogEvent event = event(rule, text, header, false);
                if (event == null && loose != null) {
                    event = event(rule, text, loose, true);
                }
                if (event != null) {
                    return event;
                }
            }
            return null;
        } catch (RuntimeException ex) {
            // The patterns are built not to throw; a line that still trips one is no event, not a failed tail.
            return null;
        }
    }

    /**
     * The event {@code rule} reads in {@code text} after {@code header}: its phrase opening the message, or, after a
     * {@code loose} header (another logger format), its phrase anywhere after the level, past no quote.
     */
    private @Nullable LogEvent event(Rule rule, String text, Header header, boolean loose) {
        Matcher matcher = rule.pattern().matcher(text).region(header.messageStart(), text.length());
        boolean found;
        if (rule.anywhere()) {
            found = matcher.find();
        } else if (loose) {
            found = matcher.find() && looseGap(text, header.messageStart(), matcher.start());
            if (found) {
                // The rule reads the line from where its phrase starts, as it would after vLLM's own header.
                matcher.region(matcher.start(), text.length());
                found = matcher.lookingAt();
            }
        } else {
            found = matcher.lookingAt();
        }
        return found ? rule.event().create(matcher, text, new Origin(header, this)) : null;
    }

    /** Between a loose level and the phrase: a logger's name, function and line, short, unquoted, ending a word. */
    private static boolean looseGap(String text, int from, int to) {
        if (to - from > MAX_LOOSE_GAP) {
            return false;
        }
        if (to > from && Character.isLetterOrDigit(text.charAt(to - 1))) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c == '\'' || c == '"') {
                return false;
            }
        }
        return true;
    }

    /**
     * A line with no vLLM header read as another logger format writes it: a level word in the first {@value
     * #MAX_PREFIX} characters, past no quote, the message somewhere after it; its time from a full date before the
     * level (the logger's own, local unless it says its zone). Null when the line has no such level.
     */
    private static @Nullable Header looseHeader(String text) {
        Matcher level = LOOSE_LEVEL.matcher(text).region(0, Math.min(text.length(), MAX_PREFIX + 1));
        if (!level.find() || !looseGap(text, 0, level.start())) {
            return null;
        }
        String prefix = text.substring(0, level.start());
        PrefixDate zoned = prefixDate(prefix);
        Matcher date = PREFIX_DATE.matcher(prefix);
        boolean dated = date.find();
        String fraction = null;
        if (dated) {
            Matcher fractionMatch = FRACTION.matcher(prefix).region(date.end(6), prefix.length());
            fraction = fractionMatch.lookingAt() ? fractionMatch.group(1) : null;
        }
        return new Header(
                level.end(),
                null,
                null,
                level.group("level"),
                dated ? date.group(2) : null,
                dated ? date.group(3) : null,
                dated ? date.group(4) : null,
                dated ? date.group(5) : null,
                dated ? date.group(6) : null,
                fraction,
                zoned,
                zoned != null && zoned.zoned() ? zoned.at().plusNanos(Origin.nanos(fraction)) : null);
    }

    /** An exception line counts only where tracebacks are written: at ERROR (or CRITICAL), or on stderr (no level). */
    private static @Nullable LogEvent exception(Matcher matcher, String line, Origin origin) {
        String level = origin.header().level();
        if (level != null && !level.equals("ERROR") && !level.equals("CRITICAL")) {
            return null;
        }
        return new LogEvent.ExceptionRaised(
                origin.at(),
                origin.process(),
                origin.pid(),
                line.substring(matcher.regionStart()).strip());
    }

    /**
     * The container a collector names at the start of {@code line} (docker compose's service prefix, its colours
     * removed), or null: two engines in separate containers may run the same pids, and only it tells them apart.
     */
    static @Nullable String container(String line) {
        String text = line.indexOf('\u001B') >= 0 ? ANSI_ESCAPE.matcher(line).replaceAll("") : line;
        Matcher matcher = COMPOSE_CONTAINER.matcher(text).region(0, Math.min(text.length(), MAX_PREFIX + 1));
        return matcher.lookingAt() ? matcher.group(1) : null;
    }

    /**
     * vLLM's header: at the line's start (after a known collector prefix), else after the first unknown prefix that
     * vLLM's own line follows; else none (the message starts after the known prefix, if any).
     */
    private static Header header(String text) {
        Matcher matcher = HEADER.matcher(text);
        boolean atStart = matcher.lookingAt();
        int collectorEnd = atStart && matcher.start("collector") >= 0 ? matcher.end("collector") : 0;
        if (atStart && isVllm(matcher)) {
            return header(text, matcher, collectorEnd);
        }
        Matcher start = VLLM_START.matcher(text).region(0, Math.min(text.length(), MAX_PREFIX + 1));
        if (start.find()) {
            Matcher vllm = VLLM_ONLY_HEADER.matcher(text).region(start.start(), text.length());
            if (vllm.lookingAt() && isVllm(vllm)) {
                return header(text, vllm, start.start());
            }
        }
        if (!atStart) {
            return new Header(skipSpaces(text, 0), null, null, null, null, null, null, null, null, null, null, null);
        }
        return header(text, matcher, collectorEnd);
    }

    private static boolean isVllm(Matcher header) {
        return header.group("pid") != null || header.group("level") != null;
    }

    /**
     * The header {@code matcher} matched, vLLM's own line starting at {@code prefixEnd}. A line with no vLLM timestamp
     * after SGLang's own prefix ({@link #SGLANG_PREFIX}) is timed by it: SGLang's logger's local time, as vLLM's.
     */
    private static Header header(String text, Matcher matcher, int prefixEnd) {
        Matcher sglang = matcher.group("month") == null && prefixEnd > 0
                ? SGLANG_PREFIX.matcher(text).region(0, prefixEnd)
                : null;
        if (sglang != null && !sglang.lookingAt()) {
            sglang = null;
        }
        return new Header(
                skipSpaces(text, matcher.end()),
                matcher.group("process"),
                matcher.group("pid"),
                matcher.group("level"),
                sglang != null ? sglang.group(2) : matcher.group("month"),
                sglang != null ? sglang.group(3) : matcher.group("day"),
                sglang != null ? sglang.group(4) : matcher.group("hour"),
                sglang != null ? sglang.group(5) : matcher.group("minute"),
                sglang != null ? sglang.group(6) : matcher.group("second"),
                sglang != null ? sglang.group(7) : matcher.group("fraction"),
                prefixEnd > 0 ? prefixDate(text.substring(0, prefixEnd)) : null,
                null);
    }

    /**
     * A full date in a collector's prefix: the anchor of the year of vLLM's own timestamp, and, with a zone (the CRI
     * format's, a bracketed ISO time's {@code Z}), the true time vLLM's local one is learned against.
     */
    private record PrefixDate(Instant at, boolean zoned) {}

    /** A full date in a collector's prefix, as an anchor for the year of vLLM's own timestamp. */
    private static @Nullable PrefixDate prefixDate(String prefix) {
        Matcher date = PREFIX_DATE.matcher(prefix);
        if (!date.find()) {
            return null;
        }
        try {
            LocalDateTime local = LocalDateTime.of(
                    Integer.parseInt(date.group(1)),
                    Integer.parseInt(date.group(2)),
                    Integer.parseInt(date.group(3)),
                    Integer.parseInt(date.group(4)),
                    Integer.parseInt(date.group(5)),
                    Integer.parseInt(date.group(6)));
            String zone = date.group(7);
            ZoneOffset offset = zone == null || zone.equals("Z") ? ZoneOffset.UTC : ZoneOffset.of(normalized(zone));
            return new PrefixDate(local.toInstant(offset), zone != null);
        } catch (DateTimeException ex) {
            return null;
        }
    }

    private static String normalized(String offset) {
        return offset.length() == 5 ? offset.substring(0, 3) + ":" + offset.substring(3) : offset;
    }

    private static int skipSpaces(String text, int from) {
        int i = from;
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        return i;
    }

    /** Between the first {@code (} after "unusable" and the last {@code ); falling back}: reasons nest brackets. */
    private static String fallbackReason(String line, int start) {
        int end = line.lastIndexOf("); falling back");
        if (end < start) {
            end = line.lastIndexOf(')');
        }
        if (end < start) {
            end = line.length();
        }
        return line.substring(start, end).strip();
    }

    /** Tensors mapped from a weight cache daemon, in {@code mode}; none past an int's range. */
    private static LogEvent.@Nullable MappedFromCache mapped(String count, String mode, Origin o) {
        long tensors = integer(count);
        return tensors > Integer.MAX_VALUE
                ? null
                : new LogEvent.MappedFromCache(o.at(), o.process(), o.pid(), (int) tensors, mode);
    }

    /** The KV cache's size in tokens; none past a long's range. */
    private static LogEvent.@Nullable KvCacheSize kvCacheSize(String count, Origin o) {
        long tokens = integer(count);
        return tokens < 0 ? null : new LogEvent.KvCacheSize(o.at(), o.process(), o.pid(), tokens);
    }

    private static String version(String version) {
        int end = version.length();
        while (end > 1 && version.charAt(end - 1) == '.') {
            end--;
        }
        return version.substring(0, end);
    }

    private static double decimal(String number) {
        return Double.parseDouble(number.replace(",", ""));
    }

    /** The number of an optional group, null when the line had none. */
    private static @Nullable Double optionalDecimal(@Nullable String number) {
        return number == null ? null : decimal(number);
    }

    /** The number, or -1 when it does not fit a {@code long}. */
    private static long integer(String number) {
        try {
            return Long.parseLong(number.replace(",", ""));
        } catch (NumberFormatException ex) {
            return -1;
        }
    }

    private static Rule rule(String anchor, String regex, EventFactory event) {
        return new Rule(anchor, false, Pattern.compile(regex), false, event);
    }

    /**
     * One event's recognition: {@code anchor} is a word every matching line contains (checked before the pattern);
     * the pattern must open the message unless {@code anywhere}.
     */
    private record Rule(String anchor, boolean ignoreCase, Pattern pattern, boolean anywhere, EventFactory event) {

        boolean mayMatch(String text) {
            if (!ignoreCase) {
                return text.contains(anchor);
            }
            for (int i = 0; i + anchor.length() <= text.length(); i++) {
                if (text.regionMatches(true, i, anchor, 0, anchor.length())) {
                    return true;
                }
            }
            return false;
        }
    }

    @FunctionalInterface
    private interface EventFactory {
        /** The event, or null when the match turns out not to be one (a number too large). */
        @Nullable
        LogEvent create(Matcher matcher, String line, Origin origin);
    }

    /** The instant the year of a line's timestamp is anchored on: its prefix's date, the given anchor, or now. */
    private Instant anchor(@Nullable PrefixDate prefixDate) {
        if (prefixDate != null) {
            return prefixDate.at();
        }
        Instant given = yearAnchor.get();
        return given != null ? given : clock.instant();
    }

    /** The raw parts of a line's prefix, and where its message starts. */
    private record Header(
            int messageStart,
            @Nullable String process,
            @Nullable String pid,
            @Nullable String level,
            @Nullable String month,
            @Nullable String day,
            @Nullable String hour,
            @Nullable String minute,
            @Nullable String second,
            @Nullable String fraction,
            @Nullable PrefixDate prefixDate,
            @Nullable Instant zonedAt) {

        /**
         * Whether vLLM's own header was found: its process prefix or its timestamp (a level alone may be another
         * logger's, {@code INFO:name:message}, loguru's {@code | INFO | name - message}).
         */
        boolean vllm() {
            return pid != null || month != null;
        }
    }

    /** What an event says about its line's origin, read from the header when an event is built. */
    private record Origin(Header header, VllmLogParser parser) {

        @Nullable
        String process() {
            String process = header.process();
            return process == null || process.isBlank() ? null : process.strip();
        }

        @Nullable
        Integer pid() {
            String pid = header.pid();
            return pid == null ? null : Integer.valueOf(pid);
        }

        /**
         * The timestamp (in the engine's zone: {@link LogClock}) in the latest year that does not put it more than a day after its anchor:
         * a log line is not written after it is read, and logs cross New Year.
         */
        @Nullable
        Instant at() {
            if (header.zonedAt() != null) {
                // Another logger's time with its zone: the true time.
                return header.zonedAt();
            }
            if (header.month() == null
                    || header.day() == null
                    || header.hour() == null
                    || header.minute() == null
                    || header.second() == null) {
                return null;
            }
            int month = Integer.parseInt(header.month());
            int day = Integer.parseInt(header.day());
            int hour = Integer.parseInt(header.hour());
            int minute = Integer.parseInt(header.minute());
            int second = Integer.parseInt(header.second());
            if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
                return null;
            }
            int nanos = nanos(header.fraction());
            PrefixDate prefix = header.prefixDate();
            if (prefix != null && prefix.zoned()) {
                learnFrom(prefix.at(), month, day, hour, minute, second, nanos);
            }
            Instant latest = parser.anchor(prefix).plus(ANCHOR_SLACK);
            int year = latest.atZone(ZoneOffset.UTC).getYear();
            // Four years back at most: a leap day finds its year.
            for (int candidateYear = year; candidateYear >= year - 4; candidateYear--) {
                if (day > YearMonth.of(candidateYear, month).lengthOfMonth()) {
                    continue;
                }
                Instant candidate = parser.engineClock.instant(
                        LocalDateTime.of(candidateYear, month, day, hour, minute, second, nanos));
                if (!candidate.isAfter(latest)) {
                    return candidate;
                }
            }
            return null;
        }

        /** The collector's true time beside vLLM's local one: the zone, in the year that puts them closest. */
        private void learnFrom(Instant collector, int month, int day, int hour, int minute, int second, int nanos) {
            int year = collector.atZone(ZoneOffset.UTC).getYear();
            for (int candidateYear = year - 1; candidateYear <= year + 1; candidateYear++) {
                if (day <= YearMonth.of(candidateYear, month).lengthOfMonth()) {
                    LocalDateTime written = LocalDateTime.of(candidateYear, month, day, hour, minute, second, nanos);
                    if (LogClock.offset(written, collector) != null) {
                        parser.engineClock.collectorClock(written, collector);
                        return;
                    }
                }
            }
        }

        static int nanos(@Nullable String fraction) {
            if (fraction == null) {
                return 0;
            }
            StringBuilder digits = new StringBuilder(fraction);
            while (digits.length() < 9) {
                digits.append('0');
            }
            return Integer.parseInt(digits.toString());
        }
    }
}
