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
    /**
     * The findings of the window a new process's header closed before readygate saw the current start end: that start's,
     * since the header was the next process's.
     */
    private @Nullable LogFindings closedByHeader;

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
        if (startsProcess(event) && events.stream().anyMatch(received -> !isHeader(received.event()))) {
            // A new process's header after an earlier start's evidence: the earlier start is over.
            closedByHeader = current();
            events.clear();
        }
        if (event instanceof LogEvent.ExceptionRaised && !LogFindings.needsException(events())) {
            // A serving engine's request errors are not evidence of its start.
            return;
        }
        if (events.size() < MAX_EVENTS) {
            events.add(new Received(event, receivedAt));
        }
    }

    /**
     * A header that only a new server process logs: an engine core's {@code Initializing a V1 LLM engine} belongs to the
     * start of the server that spawned it, and a data-parallel core may log it after another core loaded its weights.
     */
    private static boolean startsProcess(LogEvent event) {
        String process = event.process();
        return isHeader(event) && (process == null || !process.startsWith("EngineCore"));
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
            ended.put(over.id(), closedByHeader != null ? closedByHeader : current());
            closedByHeader = null;
            while (ended.size() > KEPT_STARTS) {
                ended.remove(ended.keySet().iterator().next());
            }
        }
        EngineStart start = change.start();
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
