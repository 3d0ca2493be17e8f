package dev.readygate.evidence;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Observation;
import dev.readygate.secret.SecretRedaction;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;

/**
 * The engine log as evidence: tails the log file, parses vLLM's lines, and keeps the events of the current engine start
 * (the findings of the few starts before it as they stood when each ended). The engine starts are readiness's: a start's
 * window opens when the engine goes away, when it restarts (events read before the new process started are dropped), or
 * when a start-up header follows evidence of an earlier start in the same window.
 *
 * <p>The log is also the only evidence of a start whose port never opens, so it tells readiness of starts: once the
 * lines already in the file when readygate came up were read, a new server process's header is a
 * {@link Observation.ProcessStarted} (unless it is the header of the start readiness already follows, whose port
 * opened before the line was read), and vLLM's {@code Engine core initialization failed} a
 * {@link Observation.StartFailed} with vLLM's reason. A start found loading in those first lines is told once they
 * were read. Observations are applied outside this object's lock (the state machine publishes to listeners that read
 * the findings).
 */
final class EngineLogEvidence implements StartLog {

    private static final Logger logger = LoggerFactory.getLogger(EngineLogEvidence.class);
    private static final int MAX_EVENTS = 1000;
    private static final int KEPT_STARTS = 8;

    private final LogTail tail;
    private final VllmLogParser parser;
    private final Clock clock;
    private final Duration lag;
    private final List<Received> events = new ArrayList<>();
    /** The findings of ended starts, as they stood when each ended. */
    private final Map<String, LogFindings> ended = new LinkedHashMap<>();
    /** When the current start was verified ready: lines read before then cannot be the next start's. */
    private @Nullable Instant verifiedAt;
    /** Where the log's news of engine starts goes: the state machine. */
    private final Consumer<Observation> observations;
    /** The id of the start readiness is in, as it last said (null while there is none). */
    private @Nullable String startId;
    /** Whether the lines the file held when readygate came up were read: a header is news from then on. */
    private boolean live;
    /** The start whose failure was told (vLLM may say it more than once). */
    private @Nullable String failureTold;
    /**
     * The findings of the window a new process's header closed before readygate saw the current start end: that start's,
     * since the header was the next process's.
     */
    private @Nullable LogFindings closedByHeader;

    private record Received(LogEvent event, Instant receivedAt) {}

    /** Evidence that tells readiness nothing (tests of the windows alone). */
    EngineLogEvidence(LogTail tail, VllmLogParser parser, Clock clock, Duration lag) {
        this(tail, parser, clock, lag, observation -> {});
    }

    /**
     * @param lag how late readygate may notice that the engine went away (the cheap-check interval plus the log poll
     *     interval): lines read within that time before it noticed may already be the next start's
     * @param observations where the log's news of engine starts goes (the state machine's {@code apply})
     */
    public EngineLogEvidence(
            LogTail tail, VllmLogParser parser, Clock clock, Duration lag, Consumer<Observation> observations) {
        this.tail = tail;
        this.parser = parser;
        this.clock = clock;
        this.lag = lag;
        this.observations = observations;
    }

    /**
     * Reads the log, from the beginning of the file so the start in progress is found too, until disposed; once the
     * lines the file holds now were read, the log's news of starts goes to readiness.
     */
    public Disposable follow() {
        Disposable lines = tail.lines(true)
                .subscribe(this::line, error -> logger.warn("Engine log tail stopped: {}", error.toString()));
        Disposable backlog = tail.catchUp()
                .subscribe(null, error -> logger.warn("Engine log not read: {}", error.toString()), this::backlogRead);
        return Disposables.composite(lines, backlog);
    }

    void line(String line) {
        LogEvent event = parser.parse(line);
        if (event != null) {
            tell(accept(event, clock.instant()));
        }
    }

    private void tell(@Nullable Observation news) {
        if (news != null) {
            observations.accept(news);
        }
    }

    /**
     * Adds an event to the current start's window.
     *
     * @return what it tells readiness of the engine's starts (once live), or null
     */
    synchronized @Nullable Observation accept(LogEvent event, Instant receivedAt) {
        Observation news = null;
        if (startsProcess(event) && events.stream().anyMatch(received -> !isHeader(received.event()))) {
            // A new process's header after an earlier start's evidence: the earlier start is over.
            news = newProcess(event, receivedAt);
            if (windowStarted()) {
                // The window of a start that may not be seen ending yet: its findings, for when it is.
                closedByHeader = current();
            }
            events.clear();
        } else if (startsProcess(event) && events.isEmpty()) {
            news = newProcess(event, receivedAt);
        }
        if (event instanceof LogEvent.ExceptionRaised && !LogFindings.needsException(events())) {
            // A serving engine's request errors are not evidence of its start.
            return news;
        }
        if (events.size() < MAX_EVENTS) {
            events.add(new Received(event, receivedAt));
        }
        if (event instanceof LogEvent.InitializationFailed failed) {
            news = startFailed(failed, receivedAt);
        }
        return news;
    }

    /**
     * A server process's first header line (the window before it is the earlier start's): news of a new start, unless
     * readiness follows a start whose window shows no header and no serving yet (the header is that start's own: its
     * port opened before the line was read).
     */
    private @Nullable Observation newProcess(LogEvent header, Instant receivedAt) {
        if (!live) {
            return null;
        }
        String current = startId;
        if (current == null) {
            return processStarted(header, receivedAt, null, false);
        }
        if (!windowStarted()) {
            return null;
        }
        // The start readiness follows is over: its findings as they stand, before the window opens for the next.
        keepEnded(current, current());
        return processStarted(header, receivedAt, current, false);
    }

    /** Whether the window shows a start of its own: a server's header, or serving. */
    private boolean windowStarted() {
        return events.stream()
                .map(Received::event)
                .anyMatch(event -> startsProcess(event) || event instanceof LogEvent.ApplicationStartup);
    }

    private static Observation processStarted(
            LogEvent header, Instant receivedAt, @Nullable String follows, boolean inProgress) {
        return new Observation.ProcessStarted(
                receivedAt,
                header.at(),
                follows,
                inProgress,
                "engine log: a new engine process started"
                        + (header.at() == null ? "" : " (its header is dated " + header.at() + ")")
                        + "; vLLM opens its port once initialized");
    }

    /** vLLM gave up on the start readiness follows: news of its failure, with vLLM's reason, told once. */
    private @Nullable Observation startFailed(LogEvent.InitializationFailed failed, Instant receivedAt) {
        String current = startId;
        if (!live || current == null || current.equals(failureTold)) {
            return null;
        }
        failureTold = current;
        String reason = current().startFailure();
        // vLLM's reason becomes readiness's detail, shown on /readyz and /status: never with a secret in it.
        return new Observation.StartFailed(
                receivedAt, current, SecretRedaction.redact(reason != null ? reason : failed.detail()));
    }

    /**
     * The lines the file held when readygate came up were read: a start they show loading (a header, not served, not
     * failed) is in progress, and is told unless readiness already follows one.
     */
    void backlogRead() {
        Observation news;
        synchronized (this) {
            live = true;
            // A window a header closed in those lines was an earlier process's: the start in progress is the last.
            closedByHeader = null;
            LogFindings window = current();
            LogEvent header = events.stream()
                    .map(Received::event)
                    .filter(EngineLogEvidence::startsProcess)
                    .findFirst()
                    .orElse(null);
            boolean served =
                    events.stream().anyMatch(received -> received.event() instanceof LogEvent.ApplicationStartup);
            news = startId == null && header != null && !served && window.startFailure() == null
                    ? processStarted(header, clock.instant(), null, true)
                    : null;
        }
        tell(news);
    }

    private void keepEnded(String start, LogFindings findings) {
        ended.putIfAbsent(start, findings);
        while (ended.size() > KEPT_STARTS) {
            ended.remove(ended.keySet().iterator().next());
        }
    }

    /**
     * A header that only a new server process logs: an engine core's {@code Initializing a V1 LLM engine} belongs to the
     * start of the server that spawned it, and a data-parallel core may log it after another core loaded its weights;
     * so does whatever the API server processes of {@code --api-server-count} above 1 ({@code ApiServer_N}) log, which
     * the launching server spawns once its own header is out.
     */
    private static boolean startsProcess(LogEvent event) {
        String process = event.process();
        return isHeader(event)
                && (process == null || !(process.startsWith("EngineCore") || process.startsWith("ApiServer_")));
    }

    /** What a process logs as it starts, before any evidence of how it loads (the API server count comes with args). */
    private static boolean isHeader(LogEvent event) {
        return event instanceof LogEvent.ServerVersion
                || event instanceof LogEvent.NonDefaultArgs
                || event instanceof LogEvent.ApiServerCount;
    }

    /** Follows the engine starts: an ended start's findings are kept, a new start's window opens. */
    @EventListener
    public synchronized void onEngineStateChanged(EngineStateChanged change) {
        EngineStart over = change.ended();
        if (over != null) {
            // Kept already when a new process's header ended it; else those findings stop before the header that closed
            // its window, if one did.
            keepEnded(over.id(), closedByHeader != null ? closedByHeader : current());
            closedByHeader = null;
        } else if (change.startBegan()) {
            // A start began while none was current: a window a header closed meanwhile held an ended start's leftovers.
            closedByHeader = null;
        }
        EngineStart start = change.start();
        startId = start == null ? null : start.id();
        if (change.current() instanceof EngineState.Down) {
            // readygate's first look finding nothing listening: no engine went away, one may be loading (its header
            // and load lines so far are its own).
            if (!(change.previous() instanceof EngineState.Starting)) {
                wentAway();
            }
        } else if (over != null && start != null) {
            // A new process nobody saw go away: what was read before it started is not its own.
            opens(start.since());
        }
        if (change.current() instanceof EngineState.Ready ready) {
            verifiedAt = ready.since();
        }
    }

    /**
     * The engine went away (noticed now): what was read before it could have gone belongs to the old start, and so does
     * what was read before the old start was verified ready; what was read since may already be the next start's (a
     * fast restart's header and cache lines).
     */
    private void wentAway() {
        Instant since = clock.instant().minus(lag);
        Instant verified = verifiedAt;
        opens(verified != null && verified.isAfter(since) ? verified : since);
    }

    private void opens(Instant since) {
        verifiedAt = null;
        events.removeIf(received -> received.receivedAt().isBefore(since));
    }

    @Override
    public synchronized LogFindings findings(String start) {
        LogFindings over = ended.get(start);
        return over != null ? over : current();
    }

    @Override
    public Mono<LogFindings> caughtUp(String start) {
        return tail.catchUp().then(Mono.fromSupplier(() -> findings(start)));
    }

    /** The findings of the window so far. */
    synchronized LogFindings current() {
        return LogFindings.of(events());
    }

    private List<LogEvent> events() {
        return events.stream().map(Received::event).toList();
    }
}
