package dev.readygate.restart;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The engine log as evidence: tails the log file, parses vLLM's lines, and keeps the events of the current engine
 * start. A start's window opens when the engine goes away, when it restarts (events read before the new process
 * started are dropped), or when a start-up header follows evidence of an earlier start in the same window.
 */
public final class EngineLogEvidence implements StartLog, AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(EngineLogEvidence.class);
    private static final int MAX_EVENTS = 1000;

    private final LogTail tail;
    private final VllmLogParser parser;
    private final Clock clock;
    private final Duration lag;
    private final List<Received> events = new ArrayList<>();
    /** Counts the starts begun, so that a read that a new start overtook is not taken for the new start's. */
    private long starts;
    /** When the current start was verified ready: lines read before then cannot be the next start's. */
    private @Nullable Instant verifiedAt;

    private @Nullable Disposable running;

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

    /** Starts reading, from the beginning of the file so the start in progress is found too. */
    public synchronized void start() {
        if (running == null) {
            running = tail.lines(true)
                    .subscribe(this::line, error -> logger.warn("Engine log tail stopped: {}", error.toString()));
        }
    }

    void line(String line) {
        LogEvent event = parser.parse(line);
        if (event != null) {
            accept(event, clock.instant());
        }
    }

    synchronized void accept(LogEvent event, Instant receivedAt) {
        if (isHeader(event) && events.stream().anyMatch(received -> !isHeader(received.event()))) {
            // A new process's header after an earlier start's evidence: the earlier start is over.
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

    /** What a process logs as it starts, before any evidence of how it loads (the API server count comes with args). */
    private static boolean isHeader(LogEvent event) {
        return event instanceof LogEvent.ServerVersion
                || event instanceof LogEvent.NonDefaultArgs
                || event instanceof LogEvent.ApiServerCount;
    }

    /**
     * The engine went away (noticed now): what was read before it could have gone belongs to the old start, and so does
     * what was read before the old start was verified ready; what was read since may already be the next start's (a
     * fast restart's header and cache lines).
     */
    @Override
    public synchronized void newStart() {
        Instant since = clock.instant().minus(lag);
        Instant verified = verifiedAt;
        newStart(verified != null && verified.isAfter(since) ? verified : since);
    }

    @Override
    public synchronized void newStart(Instant since) {
        starts++;
        verifiedAt = null;
        events.removeIf(received -> received.receivedAt().isBefore(since));
    }

    @Override
    public synchronized void verified(Instant at) {
        verifiedAt = at;
    }

    @Override
    public Mono<LogFindings> caughtUp() {
        long asked;
        LogFindings before;
        synchronized (this) {
            asked = starts;
            before = current();
        }
        return tail.catchUp().then(Mono.fromSupplier(() -> {
            synchronized (this) {
                return starts == asked ? current() : before;
            }
        }));
    }

    @Override
    public synchronized LogFindings current() {
        return LogFindings.of(events());
    }

    private List<LogEvent> events() {
        return events.stream().map(Received::event).toList();
    }

    @Override
    public synchronized void close() {
        if (running != null) {
            running.dispose();
            running = null;
        }
    }
}
