package dev.readygate.restart;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogFindings;
import dev.readygate.evidence.SnapshotManifest;
import dev.readygate.evidence.StartLog;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.StartLedger;
import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Records the timeline's verdicts, asynchronously: gathers what is known of the start (its facts, the engine log's
 * findings, the snapshot directory and the preload daemon, where it ran), attributes its restart path, decides what it
 * recovered from (against the start recorded before it), dates it, keeps the record and publishes
 * {@link RestartRecorded}; a canary mismatch is published as {@link CanaryMismatched} with the path of every log line
 * so far; a stop joins the requests the engine had in flight, as last scraped, to the start's record. Never blocks:
 * evidence is read on a blocking-capable scheduler, the history is written on its own thread.
 */
final class StartRecorder {

    private static final Logger logger = LoggerFactory.getLogger(StartRecorder.class);
    private static final Pattern REVISION = Pattern.compile("'revision': '([^']+)'");

    /** A wake's logged duration: vLLM's {@code It took X seconds to wake up}, in seconds. */
    static final String WAKE_UP = "wake_up";

    /**
     * What every record says about readygate and the node.
     *
     * @param probeConfigHash a hash of the probe configuration (a changed probe is not a changed engine)
     * @param readygateVersion readygate's version
     * @param node {@code node_name}, {@code gpu_uuid}, {@code driver_version}, {@code gpu_name} when known
     */
    record Stamp(String probeConfigHash, String readygateVersion, Map<String, String> node) {

        Stamp {
            node = Map.copyOf(node);
        }
    }

    private final StartLedger ledger;
    private final StartLog log;
    private final EvidenceSources sources;
    private final RestartRecords records;
    private final HostFacts hosts;
    private final Consumer<Object> publisher;
    private final Stamp stamp;
    private final StartJournal journal;
    /** The first start this readygate judged: the one that may continue a start an earlier readygate saw begin. */
    private @Nullable String firstJudged;
    /** Whether what an earlier readygate left in progress was settled (guarded by this). */
    private boolean settled;
    /** The start an earlier readygate saw begin that {@link #firstJudged} continues, if any (guarded by this). */
    private StartJournal.@Nullable Entry continued;

    StartRecorder(
            StartLedger ledger,
            StartLog log,
            EvidenceSources sources,
            RestartRecords records,
            HostFacts hosts,
            Consumer<Object> publisher,
            Stamp stamp,
            StartJournal journal) {
        this.ledger = ledger;
        this.log = log;
        this.sources = sources;
        this.records = records;
        this.hosts = hosts;
        this.publisher = publisher;
        this.stamp = stamp;
        this.journal = journal;
    }

    /** What the probes learned about a start. */
    private EngineFacts facts(String startId) {
        return ledger.get(startId, EngineFactsHolder.FACTS);
    }

    /** A start began that readygate saw begin: journaled until its record is kept. */
    void begun(EngineStart start) {
        journal.begun(start);
    }

    /**
     * The start in progress, dated in the journal by the engine's own process start time once its {@code /metrics}
     * gave one (a journaled sighting cannot tell this process from a later one).
     */
    void dateIfKnown(EngineStart start) {
        if (start.firstSeen() || start.source().fromEngine()) {
            return;
        }
        EngineMetricsSample first = facts(start.id()).firstSample();
        Instant started = first == null ? null : first.processStart();
        if (started != null) {
            journal.dated(start.id(), started);
        }
    }

    /**
     * The engine went away at {@code since} (or was down at readygate's first look), and no start is in progress: the
     * next start is journaled as awaited (under {@code id}) until it begins.
     */
    void awaited(Instant since, String id) {
        journal.awaited(since, id);
    }

    void record(RestartTimeline.Verdict verdict) {
        switch (verdict) {
            case RestartTimeline.Verdict.Judged judged -> judged(judged);
            case RestartTimeline.Verdict.CanaryMismatched mismatch -> canaryMismatch(mismatch.start());
            case RestartTimeline.Verdict.Stopped stopped -> stopped(stopped);
        }
    }

    /** The requests in flight at the last scrape of the start, joined to its record (now, or once it is kept). */
    private void stopped(RestartTimeline.Verdict.Stopped stopped) {
        Stop stop = stop(stopped, facts(stopped.start().id()));
        records.stopped(stopped.start().id(), stop);
        // The gateway, when on, counts the start's requests in flight at the stop and joins its count once they ended.
        publisher.accept(new StartStopped(stopped.start().id(), stop));
        Double lost = stop.requestsLost();
        if (lost != null && lost > 0) {
            logger.info(
                    "Engine start {} {}: {} request(s) running and {} waiting at the last scrape ({}) were lost (no"
                            + " restart path resumes requests in flight)",
                    stopped.start().id(),
                    switch (stopped.how()) {
                        case REPLACED -> "was replaced by a new engine process";
                        case POD_STOPPED -> "was stopped with the pod";
                        case WENT_AWAY -> "went away";
                        case SLEPT -> "was put to sleep";
                    },
                    format(stop.requestsRunning()),
                    format(stop.requestsWaiting()),
                    stop.observedAt());
        }
    }

    /** How a start ended, with its last scrape's requests running and waiting. */
    static Stop stop(RestartTimeline.Verdict.Stopped stopped, EngineFacts known) {
        EngineMetricsSample last = known.lastSample();
        return new Stop(
                stopped.at(),
                stopped.how(),
                last == null ? null : last.requestsRunning(),
                last == null ? null : last.requestsWaiting(),
                last == null ? null : known.lastSampleAt());
    }

    private static String format(@Nullable Double count) {
        return count == null ? "unknown" : String.valueOf(Math.round(count));
    }

    /** The path of a start from what is known without I/O (its log so far and its metrics). */
    RestartPath provisionalPath(@Nullable EngineStart start) {
        if (start == null) {
            return RestartAttribution.attribute(StartEvidence.none()).path();
        }
        return provisionalPath(start, log.findings(start.id()), facts(start.id()));
    }

    private void canaryMismatch(EngineStart start) {
        // The path from every log line written so far: the tail's last poll may not have read the start's lines.
        EngineFacts known = facts(start.id());
        log.caughtUp(start.id())
                .onErrorResume(error -> Mono.fromSupplier(() -> log.findings(start.id())))
                .map(findings -> provisionalPath(start, findings, known))
                .subscribe(
                        path -> publisher.accept(new CanaryMismatched(path)),
                        error -> logger.warn(
                                "Cannot attribute the canary mismatch of engine start {}", start.id(), error));
    }

    private void judged(RestartTimeline.Verdict.Judged verdict) {
        EngineStart start = verdict.start();
        boolean first;
        synchronized (this) {
            if (firstJudged == null) {
                firstJudged = start.id();
            }
            first = firstJudged.equals(start.id());
        }
        // A start can be judged before the log tail's next poll: while the engine is up (verified ready, or a latched
        // failure), the record waits for the lines written so far. A start that ended is read as it stood.
        Mono<LogFindings> findings = verdict.engineUp()
                ? log.caughtUp(start.id()).onErrorResume(error -> Mono.fromSupplier(() -> log.findings(start.id())))
                : Mono.fromSupplier(() -> log.findings(start.id()));
        findings.flatMap(logged -> {
                    // The record is built from the start's sheet, read once the log's lines so far were read.
                    StartLedger.Sheet sheet = ledger.sheet(start.id());
                    EngineFacts known = sheet.get(EngineFactsHolder.FACTS);
                    // A start readygate did not see begin: the log's latest lines may be an earlier process's.
                    LogFindings own = evidence(start, logged, known, EvidenceSources.Reading.none())
                            .log();
                    Dated dated = dated(start, known.firstSample(), own);
                    StartJournal.Entry continues =
                            first ? settle(dated.source().fromEngine() ? dated.at() : null) : null;
                    return Mono.zip(
                                    sources.read(dated.at()).onErrorReturn(EvidenceSources.Reading.none()),
                                    hosts.of(sheet).onErrorReturn(Map.of()))
                            .map(read -> build(verdict, known, own, dated, read.getT1(), read.getT2(), continues));
                })
                .map(record -> {
                    RestartRecord kept = records.keep(record);
                    journal.recorded(start.id());
                    StartJournal.Entry continues = first ? continued() : null;
                    if (continues != null) {
                        journal.recorded(continues.id());
                    }
                    return kept;
                })
                .subscribe(
                        record -> {
                            logger.info(
                                    "Engine start {}: {} ({}), {}",
                                    record.verdict().outcome().value(),
                                    record.pathEvidence().path().value(),
                                    verdictText(record),
                                    String.join("; ", record.pathEvidence().evidence()));
                            publisher.accept(new RestartRecorded(record, verdict.completed()));
                        },
                        error -> logger.warn("Cannot record engine start {}", start.id(), error));
    }

    private synchronized StartJournal.@Nullable Entry continued() {
        return continued;
    }

    /**
     * Settles, once, what an earlier readygate saw begin and never recorded (it was killed or restarted meanwhile): the
     * first start this readygate judged continues those that are the same engine process ({@link
     * StartJournal#continues}), recorded once, as this start; the others are recorded now, their outcome unknown.
     *
     * @param origin the engine's own dating of the first start (process start time, log), or null
     * @return the start it continues, or null
     */
    private synchronized StartJournal.@Nullable Entry settle(@Nullable Instant origin) {
        if (settled) {
            return continued;
        }
        settled = true;
        List<StartJournal.Entry> same = new ArrayList<>();
        for (StartJournal.Entry entry : journal.takeFound()) {
            if (StartJournal.continues(entry, origin)) {
                same.add(entry);
            } else {
                RestartRecord record = records.keep(interrupted(entry));
                journal.recorded(entry.id());
                logger.info(
                        "Engine start {} (seen begin at {} by an earlier readygate) was not recorded before readygate"
                                + " restarted, and the engine found now is another process: recorded, its outcome"
                                + " unknown",
                        entry.id(),
                        entry.since());
                publisher.accept(new RestartRecorded(record, true));
            }
        }
        if (same.isEmpty()) {
            return null;
        }
        // Several readygates that died in turn during one start each saw it begin: one start, dated by the engine's own
        // time where one of them had it, else by the earliest sighting.
        continued = same.stream()
                .filter(entry -> entry.source().fromEngine())
                .findFirst()
                .orElse(same.getFirst());
        same.stream().filter(entry -> entry != continued).forEach(entry -> journal.recorded(entry.id()));
        return continued;
    }

    /** The record of a start an earlier readygate saw begin and the engine found now is not: how it ended is unknown. */
    private RestartRecord interrupted(StartJournal.Entry entry) {
        return new RestartRecord(
                entry.id(),
                new RestartRecord.When(entry.since(), entry.source(), false),
                new RestartRecord.PathEvidence(
                        RestartPath.UNKNOWN,
                        List.of("journal: readygate was killed or restarted during this start (an earlier readygate saw"
                                + " it begin at " + entry.since() + "); the engine the restarted readygate found was"
                                + " another process, so how this start ended was seen by none"),
                        null,
                        false),
                new RestartRecord.Verdict(
                        Map.of(Phase.ENGINE_START, entry.since()), Map.of(), Outcome.UNKNOWN, null, null, null, false),
                RestartRecord.Engine.UNKNOWN,
                stamp.probeConfigHash(),
                stamp.readygateVersion(),
                node(Map.of()),
                CycleMemory.NONE,
                Recovery.UNKNOWN,
                null,
                List.of());
    }

    private static String verdictText(RestartRecord record) {
        if (record.verdict().readinessLatency() != null) {
            return "verified ready " + record.verdict().readinessLatency().toMillis() + " ms after "
                    + (record.when().slept() != null ? "the engine woke" : "engine start")
                    + (record.verdict().readinessLatencyBound() ? " (a bound, not a measurement)" : "");
        }
        if (record.verdict().outcome() == Outcome.FAILED) {
            return "died before serving: "
                    + (record.verdict().startFailure() == null
                            ? "vLLM logged no reason"
                            : record.verdict().startFailure());
        }
        if (record.when().firstSeen() && record.verdict().outcome() == Outcome.READY) {
            return "verified ready; first seen, so no readiness latency";
        }
        return "not ready";
    }

    /** When the engine process started, and how that is known. */
    record Dated(Instant at, StartSource source) {}

    /**
     * The best date of a start: its process start time, else its log's first line, else what readiness saw; a wake's,
     * when the engine said it is awake (its process started long before).
     */
    static Dated dated(EngineStart start, @Nullable EngineMetricsSample first, LogFindings logged) {
        if (start.wake()) {
            return new Dated(start.since(), start.source());
        }
        Instant processStart = processStart(start, first);
        if (processStart != null) {
            return new Dated(processStart, StartSource.PROCESS_START_TIME);
        }
        if (logged.firstLineAt() != null) {
            return new Dated(logged.firstLineAt(), StartSource.LOG);
        }
        return new Dated(start.since(), start.source());
    }

    private RestartRecord build(
            RestartTimeline.Verdict.Judged verdict,
            EngineFacts known,
            LogFindings f,
            Dated dated,
            EvidenceSources.Reading reading,
            Map<String, String> node,
            StartJournal.@Nullable Entry continues) {
        EngineStart start = verdict.start();
        EngineStart.Slept slept = start.slept();
        if (slept != null) {
            return wake(verdict, known, f, slept, node);
        }
        // A start an earlier readygate saw begin (it died before recording it) is an engine start, whoever sees it now,
        // dated by the engine's own time, else by when that readygate saw it begin.
        boolean firstSeen = start.firstSeen() && continues == null;
        Dated origin = continues == null || dated.source().fromEngine()
                ? dated
                : new Dated(continues.since(), continues.source());
        RestartAttribution.Attribution attribution = RestartAttribution.attribute(evidence(start, f, known, reading));
        String vllmVersion = known.vllmVersion() != null ? known.vllmVersion() : f.vllmVersion();
        SnapshotManifest manifest = attribution.path() == RestartPath.SNAPSHOT_RESTORE ? reading.manifest() : null;
        // A restored engine logs no header: its arguments and revision are those the manifest recorded.
        List<String> evidence = new ArrayList<>(attribution.evidence());
        String engineArgs = f.engineArgs();
        String revision = revision(engineArgs);
        if (engineArgs == null && manifest != null && !manifest.engineArgv().isEmpty()) {
            engineArgs = EngineArguments.ofArgv(manifest.engineArgv()).line();
            revision = manifest.modelRevision() != null
                    ? manifest.modelRevision()
                    : EngineArguments.ofArgv(manifest.engineArgv()).get("revision");
            evidence.add("snapshot: arguments and revision from the manifest's engine_argv and model_revision");
        }
        Map<String, String> where = node(node);
        List<SnapshotMismatch> mismatches =
                manifest == null ? List.of() : SnapshotMismatch.of(manifest, where, vllmVersion);
        mismatches.forEach(mismatch -> evidence.add("snapshot manifest not trusted: " + mismatch.describe()));
        RestartRecord previous = records.before(start.id());
        Recovery recovery = Recovery.decide(previous == null ? null : previous.node(), where);
        Map<Phase, Instant> phases = new EnumMap<>(Phase.class);
        phases.putAll(verdict.phases());
        phases.put(Phase.ENGINE_START, origin.at());
        if (continues != null) {
            evidence.add("journal: readygate was restarted during this start; an earlier readygate saw it begin at "
                    + continues.since() + " (as start " + continues.id() + "): recorded once, as this start"
                    + (start.firstSeen() ? ", ready before this readygate looked (its latency is a bound)" : ""));
        }
        Instant ready = phases.get(Phase.READY);
        ModelCard card = known.card();
        Long kvTokens = kvCacheSizeTokens(known, f);
        // Readiness latency only of a start readygate saw begin: else it would be the engine's uptime.
        Duration latency = ready == null || firstSeen ? null : Duration.between(origin.at(), ready);
        return new RestartRecord(
                start.id(),
                new RestartRecord.When(origin.at(), origin.source(), firstSeen),
                new RestartRecord.PathEvidence(
                        attribution.path(),
                        evidence,
                        attribution.fallbackReason(),
                        verdict.canaryMismatch() && attribution.path() == RestartPath.PRELOAD_HIT),
                new RestartRecord.Verdict(
                        phases,
                        f.loggedDurations(),
                        verdict.outcome(),
                        verdict.reason() == null ? null : verdict.reason().value(),
                        verdict.outcome() == Outcome.FAILED ? startFailure(f) : null,
                        latency,
                        // Without the engine's own start time, the latency is from what readygate saw: a bound; so is
                        // one of a start that was ready before a restarted readygate looked.
                        latency != null && (!origin.source().fromEngine() || start.firstSeen())),
                new RestartRecord.Engine(
                        vllmVersion,
                        engineArgs,
                        card == null ? null : card.id(),
                        card == null ? null : card.root(),
                        revision,
                        card == null ? null : card.maxModelLen(),
                        kvTokens),
                stamp.probeConfigHash(),
                stamp.readygateVersion(),
                where,
                CycleMemory.NONE,
                recovery,
                null,
                mismatches);
    }

    /**
     * The record of a wake: the same engine process serving again after vLLM's sleep mode. Its path is {@link
     * RestartPath#WAKE} by what readiness saw, not by the log (whose lines are the process's start-up); its engine is the
     * process's (its log's arguments and version); its phases are the wake's own, from the engine awake to verified
     * ready, and it carries none of the process's logged load durations.
     */
    private RestartRecord wake(
            RestartTimeline.Verdict.Judged verdict,
            EngineFacts known,
            LogFindings f,
            EngineStart.Slept slept,
            Map<String, String> node) {
        EngineStart start = verdict.start();
        Map<Phase, Instant> phases = new EnumMap<>(Phase.class);
        phases.putAll(verdict.phases());
        phases.put(Phase.ENGINE_START, start.since());
        Instant ready = phases.get(Phase.READY);
        Duration latency = ready == null ? null : Duration.between(start.since(), ready);
        List<String> evidence = List.of(
                "sleep: vllm:engine_sleep_state said asleep from " + slept.fellAsleep() + " ("
                        + EngineState.Sleeping.levelWords(slept.level()) + ") and awake at " + slept.wokeAt()
                        + ": asleep "
                        + slept.asleep().toMillis() + " ms",
                "wake: the same engine process serving again (no new process, no start-up header): not an engine"
                        + " restart; verified as a start is, the canary included");
        RestartRecord previous = records.before(start.id());
        ModelCard card = known.card();
        Long kvTokens = kvCacheSizeTokens(known, f);
        // The same process: what this wake's probes have not learned again is the start's before it.
        RestartRecord.Engine before = previous == null ? RestartRecord.Engine.UNKNOWN : previous.engine();
        String engineArgs = f.engineArgs() != null ? f.engineArgs() : before.engineArgs();
        String version = known.vllmVersion() != null
                ? known.vllmVersion()
                : f.vllmVersion() != null ? f.vllmVersion() : before.vllmVersion();
        return new RestartRecord(
                start.id(),
                new RestartRecord.When(start.since(), start.source(), false, slept),
                new RestartRecord.PathEvidence(RestartPath.WAKE, evidence, null, false),
                new RestartRecord.Verdict(
                        phases,
                        // vLLM's own time to wake (its log), before it said it is awake: the latency does not hold it.
                        f.wakeUpSeconds() == null ? Map.of() : Map.of(WAKE_UP, f.wakeUpSeconds()),
                        verdict.outcome(),
                        verdict.reason() == null ? null : verdict.reason().value(),
                        null,
                        latency,
                        false),
                new RestartRecord.Engine(
                        version,
                        engineArgs,
                        card == null ? before.model() : card.id(),
                        card == null ? before.modelRoot() : card.root(),
                        revision(engineArgs) != null ? revision(engineArgs) : before.revision(),
                        card == null ? before.maxModelLen() : card.maxModelLen(),
                        kvTokens != null ? kvTokens : before.kvCacheSizeTokens()),
                stamp.probeConfigHash(),
                stamp.readygateVersion(),
                node(node),
                CycleMemory.NONE,
                new Recovery(RecoveryKind.WOKE, List.of()),
                null,
                List.of());
    }

    /** The KV cache size in tokens: the engine's last {@code /metrics}, else its log. */
    private static @Nullable Long kvCacheSizeTokens(EngineFacts known, LogFindings f) {
        EngineMetricsSample last = known.lastSample();
        return last != null && last.kvCacheSizeTokens() != null ? last.kvCacheSizeTokens() : f.kvCacheSizeTokens();
    }

    /** Where the start ran: its facts, and the configured ones it has not (a configured GPU name, ...). */
    private Map<String, String> node(Map<String, String> facts) {
        Map<String, String> node = new LinkedHashMap<>(stamp.node());
        node.putAll(facts);
        return node;
    }

    /** vLLM's reason for a start that died before serving: its start failure, else a fatal error it logged. */
    private static @Nullable String startFailure(LogFindings f) {
        return f.startFailure() != null ? f.startFailure() : f.fatal();
    }

    private static @Nullable String revision(@Nullable String args) {
        if (args == null) {
            return null;
        }
        Matcher matcher = REVISION.matcher(args);
        return matcher.find() ? matcher.group(1) : null;
    }

    private RestartPath provisionalPath(EngineStart start, LogFindings findings, EngineFacts known) {
        if (start.wake()) {
            return RestartPath.WAKE;
        }
        return RestartAttribution.attribute(evidence(start, findings, known, EvidenceSources.Reading.none()))
                .path();
    }

    private StartEvidence evidence(EngineStart start, LogFindings f, EngineFacts known, EvidenceSources.Reading read) {
        Instant processStart = processStart(start, known.firstSample());
        return StartEvidence.of(
                start.firstSeen(),
                processStart,
                f,
                known.requestsAtFirstScrape(),
                read,
                start.firstSeen() && processStart != null ? records.history() : List.of());
    }

    /** When the start's process started, if the process itself said so. */
    private static @Nullable Instant processStart(EngineStart start, @Nullable EngineMetricsSample first) {
        if (first != null && first.processStart() != null) {
            return first.processStart();
        }
        return start.source() == StartSource.PROCESS_START_TIME ? start.since() : null;
    }
}
