package dev.readygate.restart;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The one way tests build a {@link RestartRecord}: {@code TestRecords.record("s1").path(...).outcome(...).build()},
 * each part unset a not-ready start of unknown path with nothing known, and {@link #from} a copy to change.
 */
public final class TestRecords {

    /** The engine start of a record that does not say. */
    public static final Instant START = Instant.parse("2026-11-30T12:00:00Z");

    private TestRecords() {}

    /** A record with this id and nothing else known. */
    public static Builder record(String id) {
        return new Builder(id);
    }

    /** A copy of {@code record} to change. */
    public static Builder from(RestartRecord record) {
        RestartRecord.When when = record.when();
        RestartRecord.PathEvidence pathEvidence = record.pathEvidence();
        RestartRecord.Verdict verdict = record.verdict();
        RestartRecord.Engine engine = record.engine();
        return record(record.id())
                .engineStart(when.engineStart())
                .engineStartSource(when.engineStartSource())
                .firstSeen(when.firstSeen())
                .slept(when.slept())
                .path(pathEvidence.path())
                .evidence(pathEvidence.evidence())
                .fallbackReason(pathEvidence.fallbackReason())
                .wrongWeightsFromCache(pathEvidence.wrongWeightsFromCache())
                .phases(verdict.phases())
                .loggedDurations(verdict.loggedDurations())
                .outcome(verdict.outcome())
                .notReadyReason(verdict.notReadyReason())
                .startFailure(verdict.startFailure())
                .readinessLatency(verdict.readinessLatency())
                .readinessLatencyBound(verdict.readinessLatencyBound())
                .vllmVersion(engine.vllmVersion())
                .engineArgs(engine.engineArgs())
                .model(engine.model())
                .modelRoot(engine.modelRoot())
                .revision(engine.revision())
                .maxModelLen(engine.maxModelLen())
                .kvCacheSizeTokens(engine.kvCacheSizeTokens())
                .probeConfigHash(record.probeConfigHash())
                .readygateVersion(record.readygateVersion())
                .node(record.node())
                .memory(record.memory())
                .recovery(record.recovery())
                .stop(record.stop())
                .snapshotMismatches(record.snapshotMismatches());
    }

    /** A record being built; every setter returns this builder. */
    public static final class Builder {

        private String id;
        private Instant engineStart = START;
        private StartSource engineStartSource = StartSource.PROCESS_START_TIME;
        private boolean firstSeen;
        private EngineStart.@Nullable Slept slept;
        private RestartPath path = RestartPath.UNKNOWN;
        private List<String> evidence = List.of();
        private @Nullable String fallbackReason;
        private boolean wrongWeightsFromCache;
        private Map<Phase, Instant> phases = Map.of();
        private Map<String, Double> loggedDurations = Map.of();
        private Outcome outcome = Outcome.NOT_READY;
        private @Nullable String notReadyReason;
        private @Nullable String startFailure;
        private @Nullable Duration readinessLatency;
        private @Nullable Boolean readinessLatencyBound;
        private @Nullable String vllmVersion;
        private @Nullable String engineArgs;
        private @Nullable String model;
        private @Nullable String modelRoot;
        private @Nullable String revision;
        private @Nullable Integer maxModelLen;
        private @Nullable Long kvCacheSizeTokens;
        private String probeConfigHash = "h";
        private String readygateVersion = "dev";
        private Map<String, String> node = Map.of();
        private CycleMemory memory = CycleMemory.NONE;
        private Recovery recovery = Recovery.UNKNOWN;
        private @Nullable Stop stop;
        private List<SnapshotMismatch> snapshotMismatches = List.of();

        private Builder(String id) {
            this.id = id;
        }

        public Builder id(String id) {
            this.id = id;
            return this;
        }

        public Builder engineStart(Instant engineStart) {
            this.engineStart = engineStart;
            return this;
        }

        public Builder engineStartSource(StartSource engineStartSource) {
            this.engineStartSource = engineStartSource;
            return this;
        }

        public Builder firstSeen(boolean firstSeen) {
            this.firstSeen = firstSeen;
            return this;
        }

        /** A wake's sleep (the start's path should be {@link RestartPath#WAKE}). */
        public Builder slept(EngineStart.@Nullable Slept slept) {
            this.slept = slept;
            return this;
        }

        public Builder path(RestartPath path) {
            this.path = path;
            return this;
        }

        public Builder evidence(List<String> evidence) {
            this.evidence = evidence;
            return this;
        }

        public Builder fallbackReason(@Nullable String fallbackReason) {
            this.fallbackReason = fallbackReason;
            return this;
        }

        public Builder wrongWeightsFromCache(boolean wrongWeightsFromCache) {
            this.wrongWeightsFromCache = wrongWeightsFromCache;
            return this;
        }

        public Builder phases(Map<Phase, Instant> phases) {
            this.phases = phases;
            return this;
        }

        public Builder loggedDurations(Map<String, Double> loggedDurations) {
            this.loggedDurations = loggedDurations;
            return this;
        }

        public Builder outcome(Outcome outcome) {
            this.outcome = outcome;
            return this;
        }

        public Builder notReadyReason(@Nullable String notReadyReason) {
            this.notReadyReason = notReadyReason;
            return this;
        }

        public Builder startFailure(@Nullable String startFailure) {
            this.startFailure = startFailure;
            return this;
        }

        public Builder readinessLatency(@Nullable Duration readinessLatency) {
            this.readinessLatency = readinessLatency;
            return this;
        }

        /**
         * Whether the latency is a bound; unset, it is one exactly when the engine start is not the engine's own
         * ({@link RestartRecord.Verdict#impliedBound}).
         */
        public Builder readinessLatencyBound(@Nullable Boolean readinessLatencyBound) {
            this.readinessLatencyBound = readinessLatencyBound;
            return this;
        }

        public Builder vllmVersion(@Nullable String vllmVersion) {
            this.vllmVersion = vllmVersion;
            return this;
        }

        public Builder engineArgs(@Nullable String engineArgs) {
            this.engineArgs = engineArgs;
            return this;
        }

        public Builder model(@Nullable String model) {
            this.model = model;
            return this;
        }

        public Builder modelRoot(@Nullable String modelRoot) {
            this.modelRoot = modelRoot;
            return this;
        }

        public Builder revision(@Nullable String revision) {
            this.revision = revision;
            return this;
        }

        public Builder maxModelLen(@Nullable Integer maxModelLen) {
            this.maxModelLen = maxModelLen;
            return this;
        }

        public Builder kvCacheSizeTokens(@Nullable Long kvCacheSizeTokens) {
            this.kvCacheSizeTokens = kvCacheSizeTokens;
            return this;
        }

        public Builder probeConfigHash(String probeConfigHash) {
            this.probeConfigHash = probeConfigHash;
            return this;
        }

        public Builder readygateVersion(String readygateVersion) {
            this.readygateVersion = readygateVersion;
            return this;
        }

        public Builder node(Map<String, String> node) {
            this.node = node;
            return this;
        }

        public Builder memory(CycleMemory memory) {
            this.memory = memory;
            return this;
        }

        public Builder recovery(Recovery recovery) {
            this.recovery = recovery;
            return this;
        }

        public Builder stop(@Nullable Stop stop) {
            this.stop = stop;
            return this;
        }

        public Builder snapshotMismatches(List<SnapshotMismatch> snapshotMismatches) {
            this.snapshotMismatches = snapshotMismatches;
            return this;
        }

        public RestartRecord build() {
            return new RestartRecord(
                    id,
                    new RestartRecord.When(engineStart, engineStartSource, firstSeen, slept),
                    new RestartRecord.PathEvidence(path, evidence, fallbackReason, wrongWeightsFromCache),
                    new RestartRecord.Verdict(
                            phases,
                            loggedDurations,
                            outcome,
                            notReadyReason,
                            startFailure,
                            readinessLatency,
                            readinessLatencyBound != null
                                    ? readinessLatencyBound
                                    : RestartRecord.Verdict.impliedBound(readinessLatency, engineStartSource)),
                    new RestartRecord.Engine(
                            vllmVersion, engineArgs, model, modelRoot, revision, maxModelLen, kvCacheSizeTokens),
                    probeConfigHash,
                    readygateVersion,
                    node,
                    memory,
                    recovery,
                    stop,
                    snapshotMismatches);
        }
    }
}
