package dev.readygate.restart;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogFindings;
import dev.readygate.evidence.StartLog;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.LinkedHashMap;
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
 * findings, the snapshot directory and the preload daemon), attributes its restart path, dates it, keeps the record and
 * publishes {@link RestartRecorded}; a canary mismatch is published as {@link CanaryMismatched} with the path of every
 * log line so far. Never blocks: evidence is read on a blocking-capable scheduler, the history is written on its own
 * thread.
 */
final class StartRecorder {

    private static final Logger logger = LoggerFactory.getLogger(StartRecorder.class);
    private static final Pattern REVISION = Pattern.compile("'revision': '([^']+)'");

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

    private final EngineFactsHolder facts;
    private final StartLog log;
    private final EvidenceSources sources;
    private final RestartRecords records;
    private final Consumer<Object> publisher;
    private final Stamp stamp;

    StartRecorder(
            EngineFactsHolder facts,
            StartLog log,
            EvidenceSources sources,
            RestartRecords records,
            Consumer<Object> publisher,
            Stamp stamp) {
        this.facts = facts;
        this.log = log;
        this.sources = sources;
        this.records = records;
        this.publisher = publisher;
        this.stamp = stamp;
    }

    void record(RestartTimeline.Verdict verdict) {
        switch (verdict) {
            case RestartTimeline.Verdict.Judged judged -> judged(judged);
            case RestartTimeline.Verdict.CanaryMismatched mismatch -> canaryMismatch(mismatch.start());
        }
    }

    /** The path of a start from what is known without I/O (its log so far and its metrics). */
    RestartPath provisionalPath(@Nullable EngineStart start) {
        String id = start == null ? "" : start.id();
        return provisionalPath(log.findings(id), facts.of(id).firstSample());
    }

    private void canaryMismatch(EngineStart start) {
        // The path from every log line written so far: the tail's last poll may not have read the start's lines.
        EngineMetricsSample first = facts.of(start.id()).firstSample();
        log.caughtUp(start.id())
                .onErrorResume(error -> Mono.fromSupplier(() -> log.findings(start.id())))
                .map(findings -> provisionalPath(findings, first))
                .subscribe(
                        path -> publisher.accept(new CanaryMismatched(path)),
                        error -> logger.warn(
                                "Cannot attribute the canary mismatch of engine start {}", start.id(), error));
    }

    private void judged(RestartTimeline.Verdict.Judged verdict) {
        EngineStart start = verdict.start();
        // A start can be judged before the log tail's next poll: while the engine is up (verified ready, or a latched
        // failure), the record waits for the lines written so far. A start that ended is read as it stood.
        Mono<LogFindings> findings = verdict.engineUp()
                ? log.caughtUp(start.id()).onErrorResume(error -> Mono.fromSupplier(() -> log.findings(start.id())))
                : Mono.fromSupplier(() -> log.findings(start.id()));
        findings.flatMap(logged -> {
                    EngineFacts known = facts.of(start.id());
                    Dated dated = dated(start, known.firstSample(), logged);
                    return sources.read(dated.at())
                            .onErrorReturn(EvidenceSources.Reading.none())
                            .map(reading -> build(verdict, known, logged, dated, reading));
                })
                .map(records::keep)
                .subscribe(
                        record -> {
                            logger.info(
                                    "Engine start {}: {} ({}), {}",
                                    record.outcome().value(),
                                    record.path().value(),
                                    verdictText(record),
                                    String.join("; ", record.evidence()));
                            publisher.accept(new RestartRecorded(record, verdict.completed()));
                        },
                        error -> logger.warn("Cannot record engine start {}", start.id(), error));
    }

    private static String verdictText(RestartRecord record) {
        if (record.readinessLatency() != null) {
            return "verified ready " + record.readinessLatency().toMillis() + " ms after engine start";
        }
        if (record.outcome() == Outcome.FAILED) {
            return "died before serving: "
                    + (record.startFailure() == null ? "vLLM logged no reason" : record.startFailure());
        }
        return "not ready";
    }

    /** When the engine process started, and how that is known. */
    record Dated(Instant at, StartSource source) {}

    /** The best date of a start: its process start time, else its log's first line, else what readiness saw. */
    static Dated dated(EngineStart start, @Nullable EngineMetricsSample first, LogFindings logged) {
        if (first != null && first.processStartTimeSeconds() != null) {
            return new Dated(
                    Instant.ofEpochMilli(Math.round(first.processStartTimeSeconds() * 1000)),
                    StartSource.PROCESS_START_TIME);
        }
        if (start.source() == StartSource.PROCESS_START_TIME) {
            return new Dated(start.since(), StartSource.PROCESS_START_TIME);
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
            EvidenceSources.Reading reading) {
        EngineStart start = verdict.start();
        RestartAttribution.Attribution attribution =
                RestartAttribution.attribute(evidence(f, known.firstSample(), reading));
        Map<Phase, Instant> phases = new EnumMap<>(Phase.class);
        phases.putAll(verdict.phases());
        phases.put(Phase.ENGINE_START, dated.at());
        Instant ready = phases.get(Phase.READY);
        ModelCard card = known.card();
        EngineMetricsSample last = known.lastSample();
        Long kvTokens =
                last != null && last.kvCacheSizeTokens() != null ? last.kvCacheSizeTokens() : f.kvCacheSizeTokens();
        return new RestartRecord(
                start.id(),
                dated.at(),
                dated.source(),
                start.firstSeen(),
                attribution.path(),
                attribution.evidence(),
                attribution.fallbackReason(),
                verdict.canaryMismatch() && attribution.path() == RestartPath.PRELOAD_HIT,
                phases,
                logged(f),
                verdict.outcome(),
                verdict.reason() == null ? null : verdict.reason().value(),
                verdict.outcome() == Outcome.FAILED ? startFailure(f) : null,
                ready == null ? null : Duration.between(dated.at(), ready),
                known.vllmVersion() != null ? known.vllmVersion() : f.vllmVersion(),
                f.engineArgs(),
                card == null ? null : card.id(),
                card == null ? null : card.root(),
                revision(f.engineArgs()),
                card == null ? null : card.maxModelLen(),
                kvTokens,
                stamp.probeConfigHash(),
                stamp.readygateVersion(),
                stamp.node(),
                CycleMemory.NONE);
    }

    /** vLLM's reason for a start that died before serving: its start failure, else a fatal error it logged. */
    private static @Nullable String startFailure(LogFindings f) {
        return f.startFailure() != null ? f.startFailure() : f.fatal();
    }

    /** The durations (seconds) and memory (GiB) the engine logged. */
    private static Map<String, Double> logged(LogFindings f) {
        Map<String, Double> logged = new LinkedHashMap<>();
        putIfPresent(logged, "weights_loading", f.loadingWeightsSeconds());
        putIfPresent(logged, "drafter_weights_loading", f.drafterLoadingWeightsSeconds());
        putIfPresent(logged, "model_loading", f.modelLoadingSeconds());
        putIfPresent(logged, "model_loading_gib", f.modelLoadingGib());
        putIfPresent(logged, "engine_init", f.engineInitSeconds());
        putIfPresent(logged, "available_kv_cache_gib", f.availableKvCacheGib());
        putIfPresent(logged, "weights_held_outside_gib", f.weightsHeldOutsideGib());
        return logged;
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

    private static RestartPath provisionalPath(LogFindings findings, @Nullable EngineMetricsSample first) {
        return RestartAttribution.attribute(evidence(findings, first, EvidenceSources.Reading.none()))
                .path();
    }

    private static StartEvidence evidence(
            LogFindings f, @Nullable EngineMetricsSample first, EvidenceSources.Reading read) {
        return new StartEvidence(f, first == null ? null : first.requestSuccess(), read);
    }
}
