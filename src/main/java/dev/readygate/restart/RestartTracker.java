package dev.readygate.restart;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeListener;
import dev.readygate.probe.ProbeReport;
import dev.readygate.probe.StartTrust;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Notices every engine start (the engine went away and came back, or its process start time changed), times its
 * phases from engine start to verified readiness, attributes its restart path from the evidence, and records it. The
 * first start readygate sees is marked as such; starts that come too close together are a restart loop. Driven by
 * engine state changes and probe reports; never blocks (evidence is read on a blocking-capable scheduler, records
 * are written by the sink's own thread).
 */
public final class RestartTracker implements ProbeListener, StartTrust {

    private static final Logger logger = LoggerFactory.getLogger(RestartTracker.class);
    private static final int KEPT_IN_MEMORY = 200;
    private static final Pattern REVISION = Pattern.compile("'revision': '([^']+)'");

    /** The phases of a start, in order. */
    public static final List<String> PHASES = List.of(
            "engine_start", "port_listening", "health_ok", "model_listed", "representative_ok", "canary_ok", "ready");

    private final EngineFacts facts;
    private final StartLog log;
    private final EvidenceSources sources;
    private final List<RestartListener> listeners;
    private final Consumer<RestartRecord> sink;
    private final Clock clock;
    private final String probeConfigHash;
    private final String readygateVersion;
    private final Map<String, String> node;
    private final Duration loopWindow;
    private final int loopStarts;
    private final MemoryMoments memory;
    private final Duration afterStopDelay;
    // Oldest first; a record written again (its after-stop memory came) keeps its place.
    private final List<RestartRecord> history = new ArrayList<>();
    private final Deque<Instant> recentStarts = new ArrayDeque<>();
    private @Nullable Start current;
    private @Nullable Instant downAt;
    // Read after the last engine went away: the next start's memory before it started. Null until that reading came,
    // and after a restart nobody saw go away.
    private @Nullable MemoryMoment stoppedMemory;
    // Counts the times the engine was seen going away: a reading belongs to the gap it was taken for.
    private long gaps;
    // The start that began after the latest gap: its record gets the gap's reading when it comes after the record.
    private @Nullable String startAfterGap;
    // The last start that became ready or ended: it gets its after-stop memory when its engine goes away.
    private @Nullable String lastStartId;

    /** The start in progress: what is known so far. */
    private static final class Start {
        // Not UUID.randomUUID(): its SecureRandom may read /dev/urandom on an event loop.
        final String id = new UUID(
                        ThreadLocalRandom.current().nextLong(),
                        ThreadLocalRandom.current().nextLong())
                .toString();
        final boolean firstSeen;
        final Instant observedAt;
        final Map<String, Instant> phases = new LinkedHashMap<>();

        @Nullable
        Instant downAt;

        boolean canaryMismatch;
        boolean recorded;

        // The log as read for a record made while the engine was up (a latched failure): written again once the start
        // ends, the record keeps it, since by then the log may hold the next start's lines.
        volatile @Nullable LogFindings logWhileUp;

        @Nullable
        Reason lastReason;

        // What the probe schedule knew of this engine, captured while it ran: it forgets it when the engine goes.
        @Nullable
        EngineMetricsSample first;

        @Nullable
        EngineMetricsSample last;

        @Nullable
        ModelCard card;

        @Nullable
        String version;

        void capture(EngineFacts facts) {
            if (facts.firstSample() != null && first == null) {
                first = facts.firstSample();
            }
            if (facts.lastSample() != null) {
                last = facts.lastSample();
            }
            if (facts.card() != null) {
                card = facts.card();
            }
            if (facts.vllmVersion() != null) {
                version = facts.vllmVersion();
            }
        }

        Start(boolean firstSeen, Instant observedAt, @Nullable Instant downAt) {
            this.firstSeen = firstSeen;
            this.observedAt = observedAt;
            this.downAt = downAt;
        }
    }

    public RestartTracker(
            EngineFacts facts,
            StartLog log,
            EvidenceSources sources,
            List<RestartListener> listeners,
            Consumer<RestartRecord> sink,
            List<RestartRecord> loaded,
            Clock clock,
            String probeConfigHash,
            String readygateVersion,
            Map<String, String> node,
            Duration loopWindow,
            int loopStarts,
            MemoryMoments memory,
            Duration afterStopDelay) {
        this.facts = facts;
        this.log = log;
        this.sources = sources;
        this.listeners = List.copyOf(listeners);
        this.sink = sink;
        this.clock = clock;
        this.probeConfigHash = probeConfigHash;
        this.readygateVersion = readygateVersion;
        this.node = Map.copyOf(node);
        this.loopWindow = loopWindow;
        this.loopStarts = loopStarts;
        this.memory = memory;
        this.afterStopDelay = afterStopDelay;
        loaded.stream().skip(Math.max(0, loaded.size() - KEPT_IN_MEMORY)).forEach(history::addLast);
    }

    /** Engine state changes are the start's phases. */
    public synchronized void onEngineStateChanged(EngineStateChanged change) {
        EngineState previous = change.previous();
        EngineState state = change.current();
        Instant at = state.since();
        boolean wasAway = previous instanceof EngineState.Down || previous instanceof EngineState.Starting;
        if (state instanceof EngineState.Down) {
            end();
            if (!(previous instanceof EngineState.Down) && !(previous instanceof EngineState.Starting)) {
                gaps++;
                stoppedMemory = null;
                startAfterGap = null;
                readAfterStop(gaps, lastStartId);
            }
            downAt = at;
            log.newStart();
            current = null;
            return;
        }
        if (state instanceof EngineState.ShuttingDown) {
            end();
            return;
        }
        if (state instanceof EngineState.Healthy healthy && healthy.cause() == Reason.ENGINE_RESTARTED) {
            end();
            EngineMetricsSample first = facts.firstSample();
            Double started = first == null ? null : first.processStartTimeSeconds();
            log.newStart(started == null ? at : Instant.ofEpochMilli(Math.round(started * 1000)));
            // Nobody saw the engine go away: no reading shows the GPU between the two.
            stoppedMemory = null;
            begin(false, at, null);
            phase("port_listening", at);
            phase("health_ok", at);
            return;
        }
        if (wasAway || current == null) {
            begin(previous instanceof EngineState.Starting, at, downAt);
            phase("port_listening", at);
        }
        Start start = current;
        if (start == null) {
            return;
        }
        start.capture(facts);
        start.lastReason = state.reason();
        switch (state) {
            case EngineState.Healthy h -> phase("health_ok", at);
            case EngineState.ModelListed m -> {
                phase("health_ok", at);
                phase("model_listed", at);
            }
            case EngineState.Ready r -> {
                phase("ready", at);
                log.verified(at);
                record(start, "ready", true);
            }
            case EngineState.VerificationFailed f when f.latched() -> record(start, "not_ready", false);
            default -> {}
        }
    }

    @Override
    public synchronized void probed(ProbeReport report) {
        Start start = current;
        if (start == null) {
            return;
        }
        start.capture(facts);
        if (report.passed()) {
            phase(report.kind() == ProbeKind.REPRESENTATIVE ? "representative_ok" : "canary_ok", report.at());
        } else if (report.reason() == Reason.CANARY_MISMATCH && !start.canaryMismatch) {
            start.canaryMismatch = true;
            // The path from every log line written so far: the tail's last poll may not have read the start's lines.
            EngineMetricsSample first = facts.firstSample();
            log.caughtUp()
                    .onErrorResume(error -> Mono.fromSupplier(log::current))
                    .map(findings -> provisionalPath(findings, first))
                    .subscribe(path -> listeners.forEach(listener -> listener.canaryMismatch(path)));
        }
    }

    private void begin(boolean firstSeen, Instant at, @Nullable Instant wentDown) {
        current = new Start(firstSeen, at, wentDown);
        lastStartId = current.id;
        startAfterGap = wentDown == null ? null : current.id;
        downAt = null;
        recentStarts.addLast(at);
        while (!recentStarts.isEmpty() && recentStarts.peekFirst().isBefore(at.minus(loopWindow))) {
            recentStarts.removeFirst();
        }
    }

    private void phase(String name, Instant at) {
        Start start = current;
        if (start != null) {
            start.phases.putIfAbsent(name, at);
        }
    }

    /** The start is over: one that never became ready is recorded as such, with its last reason. */
    private void end() {
        Start start = current;
        if (start != null && !start.recorded) {
            record(start, "not_ready", true);
        }
    }

    /** Attributes the start with every source and hands the record to the sink and the listeners. */
    private void record(Start start, String outcome, boolean completed) {
        if (start.recorded) {
            return;
        }
        start.recorded = completed;
        Snapshot atRecord = snapshot(start);
        // A start can be judged before the log tail's next poll: while the engine is up (verified ready, or a latched
        // failure), the record waits for the lines written so far. A start that ended is read as it stood, or as it
        // was read while the engine was up: the log may already hold the next start's lines.
        boolean engineUp = "ready".equals(outcome) || !completed;
        LogFindings whileUp = start.logWhileUp;
        Mono<Snapshot> snapshot = engineUp
                ? log.caughtUp()
                        .map(atRecord::withLog)
                        .onErrorReturn(atRecord)
                        .doOnNext(snap -> start.logWhileUp = snap.log())
                : Mono.just(whileUp != null ? atRecord.withLog(whileUp) : atRecord);
        MemoryMoment stopped = stoppedMemory();
        snapshot.flatMap(snap -> {
                    Mono<EvidenceSources.Reading> reading =
                            sources.read(snap.engineStart()).onErrorReturn(EvidenceSources.Reading.none());
                    Mono<CycleMemory> cycle = "ready".equals(outcome)
                            ? memory.now()
                                    .map(atReady -> new CycleMemory(
                                            beforeStart(stopped, atReady, snap.engineStart()), atReady, null))
                                    .onErrorResume(error -> Mono.empty())
                                    .defaultIfEmpty(
                                            new CycleMemory(beforeStart(stopped, null, snap.engineStart()), null, null))
                            : Mono.just(new CycleMemory(beforeStart(stopped, null, snap.engineStart()), null, null));
                    return Mono.zip(reading, cycle)
                            .map(read ->
                                    build(start, snap, read.getT1(), outcome).withMemory(read.getT2()));
                })
                .map(this::keepWithGap)
                .subscribe(
                        record -> {
                            logger.info(
                                    "Engine start {}: {} ({}), {}",
                                    outcome,
                                    record.path().value(),
                                    record.readinessLatency() == null
                                            ? "not ready"
                                            : "verified ready "
                                                    + record.readinessLatency().toMillis() + " ms after engine start",
                                    String.join("; ", record.evidence()));
                            sink.accept(record);
                            listeners.forEach(listener -> listener.recorded(record, completed));
                        },
                        error -> logger.warn("Cannot record engine start {}", start.id, error));
    }

    private synchronized void keep(RestartRecord record) {
        for (int i = 0; i < history.size(); i++) {
            if (history.get(i).id().equals(record.id())) {
                history.set(i, record);
                return;
            }
        }
        history.addLast(record);
        while (history.size() > KEPT_IN_MEMORY) {
            history.removeFirst();
        }
    }

    /**
     * Keeps a new record with the gap's reading as its before-start moment, when that reading came while the record was
     * being built (whichever of the two comes second joins them).
     */
    private synchronized RestartRecord keepWithGap(RestartRecord record) {
        CycleMemory memory = record.memory();
        RestartRecord kept = record;
        if (memory.beforeStart() == null) {
            MemoryMoment before = beforeStart(stoppedMemory, memory.atReady(), record.engineStart());
            if (before != null) {
                kept = record.withMemory(memory.withBeforeStart(before));
            }
        }
        keep(kept);
        return kept;
    }

    private synchronized @Nullable MemoryMoment stoppedMemory() {
        return stoppedMemory;
    }

    /**
     * The memory read after the previous engine went away, when it shows the GPU before this engine took any: none of
     * the engine processes this start had at readiness holds memory in it. Without a process list (or without a reading
     * at readiness), it must have been read no later than {@code after-stop-delay} after this engine's process started
     * (an engine allocates its CUDA context seconds after it starts: Python imports come first).
     */
    private @Nullable MemoryMoment beforeStart(
            @Nullable MemoryMoment stopped, @Nullable MemoryMoment atReady, Instant engineStart) {
        if (stopped == null) {
            return null;
        }
        if (atReady != null && !atReady.processes().isEmpty()) {
            Set<Integer> engine = new HashSet<>();
            atReady.processes().stream()
                    .filter(holder -> "engine".equals(holder.owner()))
                    .forEach(holder -> engine.add(holder.pid()));
            boolean clean = stopped.processes().stream().noneMatch(holder -> engine.contains(holder.pid()));
            return clean && !stopped.at().isAfter(atReady.at()) ? stopped : null;
        }
        return stopped.at().isAfter(engineStart.plus(afterStopDelay)) ? null : stopped;
    }

    /**
     * Reads memory {@code after-stop-delay} after the engine went away: the stopped start's after-stop moment (its
     * record is written again with it), and the next start's before-start moment.
     */
    private void readAfterStop(long gap, @Nullable String stoppedId) {
        Mono.delay(afterStopDelay)
                .then(memory.now())
                .onErrorResume(error -> Mono.empty())
                .subscribe(
                        moment -> afterStop(gap, stoppedId, moment),
                        error -> logger.warn("Cannot read GPU memory after the engine stopped", error));
    }

    private void afterStop(long gap, @Nullable String stoppedId, MemoryMoment moment) {
        List<RestartRecord> updated = new ArrayList<>();
        synchronized (this) {
            boolean currentGap = gap == gaps;
            if (currentGap) {
                stoppedMemory = moment;
            }
            for (RestartRecord record : history) {
                CycleMemory memory = record.memory();
                if (record.id().equals(stoppedId) && memory.afterStop() == null) {
                    updated.add(record.withMemory(memory.withAfterStop(moment)));
                } else if (currentGap && record.id().equals(startAfterGap) && memory.beforeStart() == null) {
                    // The next start was recorded before this reading came.
                    MemoryMoment before = beforeStart(moment, memory.atReady(), record.engineStart());
                    if (before != null) {
                        updated.add(record.withMemory(memory.withBeforeStart(before)));
                    }
                }
            }
            updated.forEach(this::keep);
        }
        for (RestartRecord record : updated) {
            sink.accept(record);
            listeners.forEach(listener -> listener.memoryRecorded(record));
        }
    }

    /** What is known synchronously, at the moment the start is recorded. */
    private record Snapshot(
            Instant engineStart,
            String engineStartSource,
            LogFindings log,
            @Nullable EngineMetricsSample first,
            @Nullable EngineMetricsSample last,
            @Nullable ModelCard card,
            @Nullable String version,
            Map<String, Instant> phases,
            boolean canaryMismatch,
            @Nullable Reason reason) {

        /** The same moment with the log read further; the log's first line dates the start only without metrics. */
        Snapshot withLog(LogFindings findings) {
            boolean fromMetrics = "process_start_time".equals(engineStartSource);
            Instant start = fromMetrics || findings.firstLineAt() == null ? engineStart : findings.firstLineAt();
            String source = fromMetrics || findings.firstLineAt() == null ? engineStartSource : "log";
            Map<String, Instant> withStart = new LinkedHashMap<>(phases);
            withStart.put("engine_start", start);
            return new Snapshot(start, source, findings, first, last, card, version, withStart, canaryMismatch, reason);
        }
    }

    private Snapshot snapshot(Start start) {
        LogFindings findings = log.current();
        EngineMetricsSample first = start.first;
        Instant engineStart;
        String source;
        if (first != null && first.processStartTimeSeconds() != null) {
            engineStart = Instant.ofEpochMilli(Math.round(first.processStartTimeSeconds() * 1000));
            source = "process_start_time";
        } else if (findings.firstLineAt() != null) {
            engineStart = findings.firstLineAt();
            source = "log";
        } else if (start.downAt != null) {
            engineStart = start.downAt;
            source = "observed_down";
        } else {
            engineStart = start.observedAt;
            source = "first_observed";
        }
        Map<String, Instant> phases = new LinkedHashMap<>();
        phases.put("engine_start", engineStart);
        phases.putAll(start.phases);
        return new Snapshot(
                engineStart,
                source,
                findings,
                first,
                start.last,
                start.card,
                start.version,
                phases,
                start.canaryMismatch,
                start.lastReason);
    }

    private RestartRecord build(Start start, Snapshot snap, EvidenceSources.Reading read, String outcome) {
        LogFindings f = snap.log();
        RestartAttribution.Attribution attribution = RestartAttribution.attribute(evidence(f, snap.first(), read));
        Map<String, Double> logged = new LinkedHashMap<>();
        putIfPresent(logged, "weights_loading", f.loadingWeightsSeconds());
        putIfPresent(logged, "drafter_weights_loading", f.drafterLoadingWeightsSeconds());
        putIfPresent(logged, "model_loading", f.modelLoadingSeconds());
        putIfPresent(logged, "model_loading_gib", f.modelLoadingGib());
        putIfPresent(logged, "engine_init", f.engineInitSeconds());
        putIfPresent(logged, "available_kv_cache_gib", f.availableKvCacheGib());
        putIfPresent(logged, "weights_held_outside_gib", f.weightsHeldOutsideGib());
        Instant ready = snap.phases().get("ready");
        ModelCard card = snap.card();
        Long kvTokens = snap.last() != null && snap.last().kvCacheSizeTokens() != null
                ? snap.last().kvCacheSizeTokens()
                : f.kvCacheSizeTokens();
        return new RestartRecord(
                start.id,
                snap.engineStart(),
                snap.engineStartSource(),
                start.firstSeen,
                attribution.path(),
                attribution.evidence(),
                attribution.fallbackReason(),
                snap.canaryMismatch() && attribution.path() == RestartPath.PRELOAD_HIT,
                snap.phases(),
                logged,
                outcome,
                "ready".equals(outcome) || snap.reason() == null
                        ? null
                        : snap.reason().value(),
                ready == null ? null : Duration.between(snap.engineStart(), ready),
                snap.version() != null ? snap.version() : f.vllmVersion(),
                f.engineArgs(),
                card == null ? null : card.id(),
                card == null ? null : card.root(),
                revision(f.engineArgs()),
                card == null ? null : card.maxModelLen(),
                kvTokens,
                probeConfigHash,
                readygateVersion,
                node,
                CycleMemory.NONE);
    }

    private static void putIfPresent(Map<String, Double> map, String key, @Nullable Double value) {
        if (value != null) {
            map.put(key, value);
        }
    }

    private static @Nullable String revision(@Nullable String args) {
        if (args == null) {
            return null;
        }
        Matcher matcher = REVISION.matcher(args);
        return matcher.find() ? matcher.group(1) : null;
    }

    /** The path of the start in progress from what is known without I/O (log and metrics). */
    public synchronized RestartPath provisionalPath() {
        return provisionalPath(log.current(), facts.firstSample());
    }

    private static RestartPath provisionalPath(LogFindings findings, @Nullable EngineMetricsSample first) {
        return RestartAttribution.attribute(evidence(findings, first, EvidenceSources.Reading.none()))
                .path();
    }

    private static StartEvidence evidence(
            LogFindings f, @Nullable EngineMetricsSample first, EvidenceSources.Reading read) {
        return new StartEvidence(f, first == null ? null : first.requestSuccess(), read);
    }

    /** Whether the current start may teach the canary its expected answer: only weights loaded from disk. */
    @Override
    public Trust current() {
        return switch (provisionalPath()) {
            case COLD, PRELOAD_FALLBACK -> Trust.TRUSTED;
            case PRELOAD_HIT, SNAPSHOT_RESTORE -> Trust.UNTRUSTED;
            case UNKNOWN -> Trust.UNKNOWN;
        };
    }

    /** The recorded starts, oldest first (the last {@value #KEPT_IN_MEMORY}). */
    public synchronized List<RestartRecord> history() {
        return new ArrayList<>(history);
    }

    /** The start in progress: its phases so far, or empty when none. */
    public synchronized Map<String, Instant> currentPhases() {
        Start start = current;
        return start == null ? Map.of() : Map.copyOf(start.phases);
    }

    /** Whether {@code loop-starts} starts happened within {@code loop-window}. */
    public synchronized boolean restartLoop() {
        Instant now = clock.instant();
        return recentStarts.stream()
                        .filter(at -> !at.isBefore(now.minus(loopWindow)))
                        .count()
                >= loopStarts;
    }
}
