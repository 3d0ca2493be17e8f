package dev.readygate.evidence;

import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.StartLedger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;

/**
 * The engine log as evidence: tails the log file, parses vLLM's lines and folds them, with readiness's engine state
 * changes, into the current start's {@link LogWindow} (the pure fold that decides which lines belong to which start and
 * what the log tells readiness); writes an ended start's findings, as they stood when it ended, to its sheet of the
 * {@link StartLedger} ({@link #AT_END}), and tells readiness the log's news ({@link Observation.ProcessStarted}, {@link Observation.StartFailed}).
 *
 * <p>The fold is applied one input at a time, under this object's lock, in the order the inputs come: lines and the
 * end of the backlog from the tail's worker, changes from the state machine's publishing thread. News is told outside
 * the lock (the state machine publishes to listeners that read the findings); only lines give news, and the tail reads
 * them on one worker, so readiness hears it in the order it was read.
 */
final class EngineLogEvidence implements StartLog {

    private static final Logger logger = LoggerFactory.getLogger(EngineLogEvidence.class);

    /** What the log had shown of a start when it ended (null while it has not ended). */
    static final StartLedger.Slot<@Nullable LogFindings> AT_END = StartLedger.Slot.empty("log findings at its end");

    private final LogTail tail;
    private final VllmLogParser parser;
    private final Clock clock;
    private final Duration lag;
    /** Where the log's news of engine starts goes: the state machine. */
    private final Consumer<Observation> observations;
    /** The current start's window (guarded by this). */
    private LogWindow window = LogWindow.EMPTY;

    /**
     * How many lines the log must have shown, none of them read as an event, before it is called unreadable: vLLM's
     * first lines (its banner, its arguments) are read within a dozen.
     */
    static final int UNREADABLE_AFTER = 40;

    /** Lines read (not blank), until one gives an event (guarded by this). */
    private long linesUnread;

    /** When the first line was read (guarded by this). */
    private @Nullable Instant firstLineReadAt;

    /** Whether any line gave an event: the log's format is readable (guarded by this). */
    private boolean readable;

    /** Whether the lines the file held when readygate came up were read: a line read now was just written. */
    private volatile boolean live;

    private final StartLedger ledger;

    /** Evidence that tells readiness nothing (tests of the windows alone). */
    EngineLogEvidence(LogTail tail, VllmLogParser parser, Clock clock, Duration lag) {
        this(tail, parser, clock, lag, observation -> {});
    }

    /** Evidence with a ledger of its own (tests of the windows and their news). */
    EngineLogEvidence(
            LogTail tail, VllmLogParser parser, Clock clock, Duration lag, Consumer<Observation> observations) {
        this(tail, parser, clock, lag, new StartLedger(), observations);
    }

    /**
     * @param lag how late readygate may notice that the engine went away (the cheap-check interval plus the log poll
     *     interval): lines read within that time before it noticed may already be the next start's
     * @param ledger where an ended start's findings are written (the state machine's)
     * @param observations where the log's news of engine starts goes (the state machine's {@code apply})
     */
    public EngineLogEvidence(
            LogTail tail,
            VllmLogParser parser,
            Clock clock,
            Duration lag,
            StartLedger ledger,
            Consumer<Observation> observations) {
        this.tail = tail;
        this.ledger = ledger;
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
        LogEvent parsed = parser.parse(line);
        if (!line.isBlank()) {
            counted(parsed != null);
        }
        if (parsed != null) {
            Instant receivedAt = clock.instant();
            LogEvent event = parsed;
            Instant at = parsed.at();
            LogClock engineClock = parser.engineClock();
            if (live
                    && at != null
                    && engineClock.readAt(
                            LocalDateTime.ofInstant(at, engineClock.zone().zone()), receivedAt)) {
                // A line read as it was written taught the engine's zone: read again in it.
                LogEvent again = parser.parse(line);
                event = again != null ? again : parsed;
            }
            LogEvent read = event;
            String container = VllmLogParser.container(line);
            tell(fold(window -> window.next(read, receivedAt, container)));
        }
    }

    /**
     * Adds an event to the current start's window.
     *
     * @return what it tells readiness of the engine's starts (once live), or null
     */
    @Nullable
    Observation accept(LogEvent event, Instant receivedAt) {
        List<Observation> news = fold(window -> window.next(event, receivedAt));
        return news.isEmpty() ? null : news.getFirst();
    }

    /**
     * The lines the file held when readygate came up were read: a start they show loading (a header, not served, not
     * failed) is in progress, and is told unless readiness already follows one.
     */
    void backlogRead() {
        live = true;
        tell(fold(window -> window.backlogRead(clock.instant())));
    }

    /** Follows the engine starts: an ended start's findings are kept, a new start's window opens. */
    @EventListener
    @Order(1)
    public void onEngineStateChanged(EngineStateChanged change) {
        tell(fold(window -> window.next(change, clock.instant(), lag)));
    }

    /** Applies one step of the fold and keeps the findings of the starts it closed; returns the news for readiness. */
    private synchronized List<Observation> fold(Function<LogWindow, LogWindow.Step> input) {
        LogWindow.Step step = input.apply(window);
        window = step.window();
        List<Observation> news = new ArrayList<>();
        for (LogWindow.News item : step.news()) {
            switch (item) {
                case LogWindow.News.Tell tell -> news.add(tell.observation());
                case LogWindow.News.Ended over -> keepEnded(over.start(), over.findings());
            }
        }
        return news;
    }

    private void tell(List<Observation> news) {
        news.forEach(observations);
    }

    private synchronized void counted(boolean event) {
        if (firstLineReadAt == null) {
            firstLineReadAt = clock.instant();
        }
        if (event) {
            readable = true;
        } else if (!readable) {
            linesUnread++;
        }
    }

    /**
     * Why the log gives nothing, when it does not: many lines read and none in a format readygate reads (another
     * program's log configured, a logging configuration that rewrites vLLM's messages); null while lines are read.
     */
    @Override
    public synchronized @Nullable String unreadable() {
        if (readable || linesUnread < UNREADABLE_AFTER) {
            return null;
        }
        return "engine log unreadable: " + linesUnread + " lines read since " + firstLineReadAt
                + ", none in a format readygate reads (vLLM's messages, after any prefix and level); the start's path"
                + " and phases come from other evidence";
    }

    /** The first findings of a start hold: a start the next header closed is closed again when readiness sees it end. */
    private void keepEnded(String start, LogFindings findings) {
        LogFindings zoned = findings.read(parser.engineClock().zone(), unreadable());
        ledger.update(start, AT_END, known -> known != null ? known : zoned);
    }

    @Override
    public synchronized LogFindings findings(String start) {
        LogFindings over = ledger.get(start, AT_END);
        return over != null ? over : current();
    }

    @Override
    public Mono<LogFindings> caughtUp(String start) {
        return tail.catchUp().then(Mono.fromSupplier(() -> findings(start)));
    }

    /** The findings of the window so far. */
    synchronized LogFindings current() {
        return window.findings().read(parser.engineClock().zone(), unreadable());
    }
}
