package dev.readygate.evidence;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The engine log as evidence: tails the log file, parses vLLM's lines, and keeps the events of the current engine start
 * (the findings of the few starts before it as they stood when each ended). The engine starts are readiness's: a start's
 * window opens when the engine goes away, when it restarts (events read before the new process started are dropped), or
 * when a start-up header follows evidence of an earlier start in the same window.
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

    private record Received(LogEvent event, Instant receivedAt) {}

    /**
     * @param lag how late readygate may notice that the engine went away (the cheap-check interval plus the log poll
     *     interval): lines read within that time before it noticed may already be the next start's
     */
    public EngineLogEvidence(LogTail tail, VllmLogParser parser, Clock clock, Duration lag) {
        this.tail = tail;
        this.parser = parser;
        this.clock = clock;
        this.lag = lag;
    }

    /** Reads the log, from the beginning of the file so the start in progress is found too, until disposed. */
    public Disposable follow() {
        return tail.lines(true)
                .subscribe(this::line, error -> logger.warn("Engine log tail stopped: {}", error.toString()));
    }

    void line(String line) {
        LogEvent event = parser.parse(line);
        if (event != null) {
            accept(event, clock.instant());
        }
    }

    synchronized void accept(LogEvent event, Instant receivedAt) {
        boolean header = isHeader(event);
        if (header && events.stream().anyMatch(received -> !isHeader(received.event()))) {
            // A new process's header after an earlier start's evidence: the earlier start is over.
            events.clear();
        }
        if (events.size() < MAX_EVENTS) {
            events.add(new Received(event, receivedAt));
        }
    }

    private static boolean isHeader(LogEvent event) {
        return event instanceof LogEvent.ServerVersion || event instanceof LogEvent.NonDefaultArgs;
    }

    /** Follows the engine starts: an ended start's findings are kept, a new start's window opens. */
    @EventListener
    public synchronized void onEngineStateChanged(EngineStateChanged change) {
        EngineStart over = change.ended();
        if (over != null) {
            ended.put(over.id(), current());
            while (ended.size() > KEPT_STARTS) {
                ended.remove(ended.keySet().iterator().next());
            }
        }
        EngineStart start = change.start();
        if (change.current() instanceof EngineState.Down) {
            wentAway();
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
        Instant firstLineAt = null;
        boolean header = false;
        String version = null;
        String args = null;
        Double loading = null;
        Double modelGib = null;
        Double modelSeconds = null;
        Integer mapped = null;
        String mode = null;
        String fallback = null;
        Double init = null;
        Double kvGib = null;
        Long kvTokens = null;
        Double outsideGib = null;
        String fatal = null;
        for (Received received : events) {
            LogEvent event = received.event();
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
                case LogEvent.LoadingWeights e -> loading = e.seconds();
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
                case LogEvent.WeightsHeldOutside e -> outsideGib = gib(e.detail());
                case LogEvent.EngineFatal e -> fatal = e.detail();
                default -> {}
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
                fatal);
    }

    private static final Pattern GIB = Pattern.compile("(\\d{1,6}(?:\\.\\d{1,6})?)\\s*GiB");

    /** The first {@code X GiB} of the line's detail: its wording after the colon is not pinned down (main docs). */
    private static @Nullable Double gib(String detail) {
        Matcher matcher = GIB.matcher(detail);
        return matcher.find() ? Double.valueOf(matcher.group(1)) : null;
    }
}
