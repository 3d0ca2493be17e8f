package dev.readygate.evidence;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Observation;
import dev.readygate.secret.SecretRedaction;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The engine log's window on the current engine start, as a pure fold beside the restart timeline: each event read
 * from the log, each engine state change and the end of the backlog gives the next window and its {@link News}. No
 * I/O and no clock (time comes in on the inputs), so it is tested as a table; tailing the log, keeping the ended
 * starts' findings and telling readiness happen in {@link EngineLogEvidence}.
 *
 * <p>A start's window opens when the engine goes away, when it restarts (events read before the new process started
 * are dropped), or when a start-up header follows evidence of an earlier start in the same window. Once the lines the
 * file held when readygate came up were read ({@link #live}), a new server process's header is news of a start
 * ({@link Observation.ProcessStarted}), unless it is the header of the start readiness already follows, whose port
 * opened before the line was read; vLLM's {@code Engine core initialization failed} is news of its failure
 * ({@link Observation.StartFailed}, with vLLM's reason, once per start).
 *
 * @param events the events of the window, in the order read, each with when it was read (at most {@link #MAX_EVENTS})
 * @param startId the start readiness is in, as its last change said (null while there is none)
 * @param verifiedAt when the current start was verified ready: lines read before then cannot be the next start's
 * @param live whether the lines the file held when readygate came up were read: a header is news from then on
 * @param failureTold the start whose failure was told (vLLM may say it more than once)
 * @param closedByHeader the findings of the window a new process's header closed before readygate saw the current
 *     start end: that start's, since the header was the next process's
 */
record LogWindow(
        List<Received> events,
        @Nullable String startId,
        @Nullable Instant verifiedAt,
        boolean live,
        @Nullable String failureTold,
        @Nullable LogFindings closedByHeader,
        Engines engines) {

    /** The most events a window keeps: a serving engine's lines after them are not evidence of its start. */
    static final int MAX_EVENTS = 1000;

    /** Nothing read yet, no start known, the backlog not read. */
    static final LogWindow EMPTY = new LogWindow(List.of(), null, null, false, null, null, Engines.NONE);

    /** pydantic's ValidationError title, whose message is on the next line. */
    private static final Pattern MESSAGE_FOLLOWS = Pattern.compile("\\d{1,4} validation errors? for ");

    /** The most processes {@link Engines} remembers of each kind. */
    static final int MAX_REMEMBERED = 16;

    /**
     * The processes of which vLLM runs one per engine: its API servers ({@code APIServer}, {@code ApiServer_N} with
     * {@code --api-server-count}) and engine cores ({@code EngineCore}, {@code EngineCore_DPN}, before 0.17
     * {@code EngineCore_N}); a worker's name ({@code Worker_TP0}, {@code RayWorkerWrapper}, {@code
     * VllmWorkerProcess}) may be shared by several processes of one engine.
     */
    private static final Pattern ONE_PER_ENGINE =
            Pattern.compile("APIServer|ApiServer_\\d{1,4}|EngineCore(?:_DP\\d{1,4}|_\\d{1,4})?");

    LogWindow {
        events = List.copyOf(events);
    }

    /**
     * Which of the log's processes are whose. vLLM runs one API server (or one per {@code --api-server-count}) and one
     * engine core per data-parallel rank in each engine, each under its pid; a log without server headers (cut, or
     * collected from several engines) tells starts and engines apart by them.
     *
     * @param earlier the one-per-engine processes ({@code name pid=N}) of windows a new process closed: an earlier
     *     start's, or another engine's
     * @param replaced those of them another process of their name took the place of in the current window: one that
     *     writes again (not beginning a start) is another engine's
     * @param otherEngine the evidence gap, once another engine was seen writing to this log
     */
    record Engines(
            Set<String> earlier,
            Set<String> replaced,
            @Nullable String otherEngine) {

        static final Engines NONE = new Engines(Set.of(), Set.of(), null);

        Engines {
            earlier = Set.copyOf(earlier);
            replaced = Set.copyOf(replaced);
        }

        /** After a window of {@code processes} closed because {@code process} replaced {@code gone} (and them). */
        Engines closed(Set<String> processes, Set<String> gone, @Nullable String process) {
            return new Engines(bounded(processes), bounded(without(union(replaced, gone), process)), otherEngine);
        }

        /** After {@code gone}, an earlier window's process, was taken out of the current one by one of its name. */
        Engines replacing(String gone) {
            return new Engines(earlier, bounded(union(replaced, Set.of(gone))), otherEngine);
        }

        /** After {@code process}, replaced, wrote again: another engine writes to this log. */
        Engines otherEngineWrote(String process) {
            return otherEngine != null
                    ? this
                    : new Engines(
                            earlier,
                            replaced,
                            "two engines write to this log: " + process + " wrote after another process of its name"
                                    + " had started; each start keeps its own lines, never merged (point"
                                    + " readygate.evidence.engine-log at this engine's own log)");
        }

        private static Set<String> union(Set<String> a, Set<String> b) {
            Set<String> all = new LinkedHashSet<>(a);
            all.addAll(b);
            return all;
        }

        private static Set<String> without(Set<String> a, @Nullable String b) {
            Set<String> rest = new LinkedHashSet<>(a);
            rest.remove(b);
            return rest;
        }

        /** At most {@link #MAX_REMEMBERED}, the newest: a log's other engines and restarts are a few. */
        private static Set<String> bounded(Set<String> processes) {
            return processes.size() <= MAX_REMEMBERED
                    ? processes
                    : processes.stream()
                            .skip(processes.size() - MAX_REMEMBERED)
                            .collect(java.util.stream.Collectors.toCollection(LinkedHashSet::new));
        }
    }

    /**
     * An event of the log, when it was read, and the container a collector named on its line (docker compose's
     * service prefix), if any: two engines in separate containers may run the same pids.
     */
    record Received(
            LogEvent event, Instant receivedAt, @Nullable String container) {

        Received(LogEvent event, Instant receivedAt) {
            this(event, receivedAt, null);
        }

        /** Its one-per-engine process, or null. */
        @Nullable
        String process() {
            return onePerEngine(event, container);
        }
    }

    /** What a step of the fold asks to act on. */
    sealed interface News {

        /** News of the engine's starts for readiness: a new server process's header, or vLLM's start failure. */
        record Tell(Observation observation) implements News {}

        /**
         * A start's window closed: its findings as they stood (the first of a start holds; a start the next header
         * closed is closed again when readiness sees it end).
         */
        record Ended(String start, LogFindings findings) implements News {}
    }

    /** A step of the fold: the next window, and its news (at most one {@link News.Tell}). */
    record Step(LogWindow window, List<News> news) {

        Step {
            news = List.copyOf(news);
        }
    }

    /** The findings of the window so far. */
    LogFindings findings() {
        return LogFindings.of(loggedEvents()).besideOtherEngine(engines.otherEngine());
    }

    /** The window after an event read at {@code receivedAt}, from a line no collector named a container on. */
    Step next(LogEvent event, Instant receivedAt) {
        return next(event, receivedAt, null);
    }

    /**
     * The window after an event read at {@code receivedAt}, from a line a collector named {@code container} on (null:
     * none).
     */
    Step next(LogEvent event, Instant receivedAt, @Nullable String container) {
        List<News> news = new ArrayList<>();
        List<Received> kept = events;
        LogFindings closed = closedByHeader;
        Engines gone = engines;
        String process = onePerEngine(event, container);
        boolean begins = startsLoading(event) || startsProcess(event);
        if (process != null && engines.replaced().contains(process) && !begins) {
            // A process that another of its name replaced writes again: another engine's, never this start's.
            return new Step(
                    new LogWindow(
                            events,
                            startId,
                            verifiedAt,
                            live,
                            failureTold,
                            closedByHeader,
                            engines.otherEngineWrote(process)),
                    List.of());
        }
        Set<String> sameName = sameName(event, process);
        // Two engines write to this log, and which API server is whose no line says: processes are spawned in order,
        // so the window keeps the one whose place among the pids of its name is its engine core's place among theirs
        // (the first otherwise), and the other is the other engine's: never merged.
        boolean twoEngines = process != null && !sameName.isEmpty() && engines.otherEngine() != null && !begins;
        if (twoEngines && !process.equals(pairedWithCore(process, sameName))) {
            return new Step(
                    new LogWindow(
                            events, startId, verifiedAt, live, failureTold, closedByHeader, engines.replacing(process)),
                    List.of());
        }
        Set<String> earlierOnes = new LinkedHashSet<>(sameName);
        earlierOnes.retainAll(engines.earlier());
        if (startsProcess(event) && events.stream().anyMatch(received -> !isHeader(received.event()))) {
            // A new process's header after an earlier start's evidence: the earlier start is over.
            newProcess(event, receivedAt, news);
            if (windowStarted()) {
                // The window of a start that may not be seen ending yet: its findings, for when it is.
                closed = findings();
            }
            kept = List.of();
        } else if (startsProcess(event) && events.isEmpty()) {
            newProcess(event, receivedAt, news);
        } else if (twoEngines || (!sameName.isEmpty() && earlierOnes.equals(sameName) && !begins)) {
            // The window took in a process of this one's name that is another engine's (an earlier window's, one that
            // wrote before this one did, or the other of two engines' API servers): it leaves the window.
            kept = events.stream()
                    .filter(received -> !sameName.contains(received.process()))
                    .toList();
            for (String other : sameName) {
                gone = gone.replacing(other);
            }
        } else if (!sameName.isEmpty() || (startsLoading(event) && served())) {
            // A new engine process with no header before it (a log cut or collected without it): a process of a name
            // the window holds under another pid, or one loading again after its server served. The window's lines
            // were an earlier start's (or another engine's): they close, and readiness hears of it from its probes.
            closed = findings();
            kept = List.of();
            gone = engines.closed(processes(), sameName, process);
        }
        if ((event instanceof LogEvent.ExceptionRaised || event instanceof LogEvent.ExceptionDetail)
                && !LogFindings.needsException(
                        kept.stream().map(Received::event).toList())) {
            // A serving engine's request errors are not evidence of its start.
            return new Step(new LogWindow(kept, startId, verifiedAt, live, failureTold, closed, gone), news);
        }
        if (kept.size() < MAX_EVENTS) {
            List<Received> added = new ArrayList<>(kept);
            added.add(new Received(event, receivedAt, container));
            kept = added;
        }
        LogWindow next = new LogWindow(kept, startId, verifiedAt, live, failureTold, closed, gone);
        String current = startId;
        // pydantic's message comes on the line after its ValidationError: told with it, once that line is read.
        boolean messageRead = kept.size() >= 2
                && messageFollows(kept.get(kept.size() - 2).event())
                && kept.getLast().event() == event;
        String reason = (endsStart(event) && !messageFollows(event)) || messageRead
                ? next.findings().startFailure()
                : null;
        if (reason != null && live && current != null && !current.equals(failureTold)) {
            // vLLM gave up on the start readiness follows: news of its failure, with vLLM's reason, told once.
            // vLLM's reason becomes readiness's detail, shown on /readyz and /status: never with a secret in it.
            news.add(new News.Tell(new Observation.StartFailed(receivedAt, current, SecretRedaction.redact(reason))));
            next = new LogWindow(kept, startId, verifiedAt, live, current, closed, gone);
        }
        return new Step(next, news);
    }

    /**
     * Whether {@code event} says the start failed: vLLM's API server gave up on its engine cores ({@code Engine core
     * initialization failed}), or an API server process raised before serving (the findings' failure is then set).
     */
    private static boolean endsStart(LogEvent event) {
        return event instanceof LogEvent.InitializationFailed || LogFindings.apiServerRaised(event);
    }

    /**
     * Whether {@code event} is an API server's exception whose message is on the next line: pydantic's {@code
     * ValidationError: 1 validation error for VllmConfig}, then {@code   Value error, ...}.
     */
    private static boolean messageFollows(LogEvent event) {
        return event instanceof LogEvent.ExceptionRaised raised
                && LogFindings.apiServerRaised(raised)
                && MESSAGE_FOLLOWS.matcher(raised.exception()).find();
    }

    /**
     * A server process's first header line (the window before it is the earlier start's): news of a new start, unless
     * readiness follows a start whose window shows no header and no serving yet (the header is that start's own: its
     * port opened before the line was read).
     */
    private void newProcess(LogEvent header, Instant receivedAt, List<News> news) {
        String current = startId;
        if (!live || (current != null && !windowStarted())) {
            return;
        }
        if (current != null) {
            // The start readiness follows is over: its findings as they stand, before the window opens for the next.
            news.add(new News.Ended(current, findings()));
        }
        news.add(new News.Tell(processStarted(header, receivedAt, current, false)));
    }

    /**
     * The lines the file held when readygate came up were read (noticed at {@code now}): a start they show loading (a
     * header, not served, not failed) is in progress, and is told unless readiness already follows one.
     */
    Step backlogRead(Instant now) {
        // A window a header closed in those lines was an earlier process's: the start in progress is the last.
        LogWindow next = new LogWindow(events, startId, verifiedAt, true, failureTold, null, engines);
        LogEvent header = loggedEvents().stream()
                .filter(LogWindow::startsProcess)
                .findFirst()
                .orElse(null);
        boolean served = events.stream().anyMatch(received -> received.event() instanceof LogEvent.ApplicationStartup);
        boolean loading =
                startId == null && header != null && !served && findings().startFailure() == null;
        return new Step(
                next, loading ? List.of(new News.Tell(processStarted(header, now, null, true))) : List.<News>of());
    }

    /**
     * The window after an engine state change that readygate saw at {@code now}: an ended start's findings are kept, a
     * new start's window opens.
     *
     * @param lag how late readygate may notice that the engine went away: lines read within that time before it
     *     noticed may already be the next start's
     */
    Step next(EngineStateChanged change, Instant now, Duration lag) {
        List<News> news = new ArrayList<>();
        LogFindings closed = closedByHeader;
        EngineStart over = change.ended();
        if (over != null) {
            // Closed already when a new process's header ended it; else those findings stop before the header that
            // closed its window, if one did.
            news.add(new News.Ended(over.id(), closed != null ? closed : findings()));
            closed = null;
        } else if (change.startBegan()) {
            // A start began while none was current: a window a header closed meanwhile held an ended start's leftovers.
            closed = null;
        }
        EngineStart start = change.start();
        LogWindow next = new LogWindow(
                events, start == null ? null : start.id(), verifiedAt, live, failureTold, closed, engines);
        if (change.current() instanceof EngineState.Down) {
            // readygate's first look finding nothing listening: no engine went away, one may be loading (its header
            // and load lines so far are its own).
            if (!(change.previous() instanceof EngineState.Starting)) {
                next = next.wentAway(now, lag);
            }
        } else if (over != null && start != null) {
            // A new process nobody saw go away: what was read before it started is not its own.
            next = next.opens(start.since());
        }
        if (change.current() instanceof EngineState.Ready ready) {
            next = new LogWindow(next.events, next.startId, ready.since(), live, failureTold, closed, engines);
        }
        return new Step(next, news);
    }

    /**
     * The engine went away (noticed at {@code now}): what was read before it could have gone belongs to the old start,
     * and so does what was read before the old start was verified ready; what was read since may already be the next
     * start's (a fast restart's header and cache lines).
     */
    private LogWindow wentAway(Instant now, Duration lag) {
        Instant since = now.minus(lag);
        Instant verified = verifiedAt;
        return opens(verified != null && verified.isAfter(since) ? verified : since);
    }

    /** The window of what was read from {@code since} on. */
    private LogWindow opens(Instant since) {
        List<Received> kept = events.stream()
                .filter(received -> !received.receivedAt().isBefore(since))
                .toList();
        return new LogWindow(kept, startId, null, live, failureTold, closedByHeader, engines);
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

    /**
     * The one-per-engine process {@code event} comes from, as {@code name pid=N}, and {@code @container} when a collector
     * named one; null for a worker, or a line without a process prefix or pid.
     */
    private static @Nullable String onePerEngine(LogEvent event, @Nullable String container) {
        String name = event.process();
        Integer pid = event.pid();
        if (name == null || pid == null || !ONE_PER_ENGINE.matcher(name).matches()) {
            return null;
        }
        return name + " pid=" + pid + (container == null ? "" : "@" + container);
    }

    /** The window's one-per-engine processes of {@code process}'s name, other than it (another pid or container). */
    private Set<String> sameName(LogEvent event, @Nullable String process) {
        if (process == null) {
            return Set.of();
        }
        Set<String> others = new LinkedHashSet<>();
        for (Received received : events) {
            String other = received.process();
            if (other != null
                    && !other.equals(process)
                    && Objects.equals(received.event().process(), event.process())) {
                others.add(other);
            }
        }
        return others;
    }

    /**
     * Of {@code process} and the window's {@code others} of its name, the one of the window's engine core: in its
     * container where a collector names containers, else at the place among their pids that the core holds among the
     * engine cores' pids (the window's and the replaced ones); the window's first when that does not tell.
     */
    private String pairedWithCore(String process, Set<String> others) {
        String core = processes().stream()
                .filter(one -> one.startsWith("EngineCore"))
                .findFirst()
                .orElse(null);
        String first = others.iterator().next();
        if (core == null) {
            return first;
        }
        if (core.contains("@") || process.contains("@")) {
            return Objects.equals(containerOf(core), containerOf(process)) ? process : first;
        }
        String coreName = core.substring(0, core.indexOf(' '));
        List<Integer> cores = Stream.concat(Stream.of(core), engines.replaced().stream())
                .filter(one -> one.startsWith(coreName + " pid="))
                .map(LogWindow::pid)
                .sorted()
                .toList();
        List<Integer> candidates = Stream.concat(Stream.of(process), others.stream())
                .map(LogWindow::pid)
                .sorted()
                .toList();
        if (cores.size() != candidates.size()) {
            return first;
        }
        int place = cores.indexOf(pid(core));
        String name = process.substring(0, process.indexOf(' '));
        return name + " pid=" + candidates.get(place);
    }

    private static @Nullable String containerOf(String process) {
        int at = process.indexOf('@');
        return at < 0 ? null : process.substring(at + 1);
    }

    private static Integer pid(String process) {
        int from = process.indexOf("pid=") + 4;
        int at = process.indexOf('@', from);
        return Integer.valueOf(process.substring(from, at < 0 ? process.length() : at));
    }

    /** The window's one-per-engine processes. */
    private Set<String> processes() {
        Set<String> all = new LinkedHashSet<>();
        for (Received received : events) {
            String process = received.process();
            if (process != null) {
                all.add(process);
            }
        }
        return all;
    }

    /**
     * Whether {@code event} is one a process logs as it begins loading its engine, once per start: an engine core's
     * {@code Initializing a V1 LLM engine (vX) with config}, the weight cache mapped or fallen back from, the weights
     * downloaded. A served engine never logs them again.
     */
    private static boolean startsLoading(LogEvent event) {
        return (event instanceof LogEvent.ServerVersion
                        && event.process() != null
                        && event.process().startsWith("EngineCore"))
                || event instanceof LogEvent.MappedFromCache
                || event instanceof LogEvent.CacheFallback
                || event instanceof LogEvent.WeightsDownloaded;
    }

    /** Whether the window's server served ({@code Application startup complete.}). */
    private boolean served() {
        return events.stream().anyMatch(received -> received.event() instanceof LogEvent.ApplicationStartup);
    }

    /**
     * Whether the window shows a start of its own: a server's header. A serving line alone does not: read after the
     * start that went away was verified, it is that start's last word (SGLang's "fired up" comes after its own warmup,
     * with its {@code /health}'s first 200, so readygate may verify before the tail reads it; a restart within the lag
     * then found it in the next start's window and took that start's own header for yet another process).
     */
    private boolean windowStarted() {
        return events.stream().map(Received::event).anyMatch(LogWindow::startsProcess);
    }

    private List<LogEvent> loggedEvents() {
        return events.stream().map(Received::event).toList();
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
}
