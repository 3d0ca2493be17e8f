package dev.readygate.metrics;

import dev.readygate.restart.EnginePhase;
import dev.readygate.restart.FallbackReason;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.Phase;
import dev.readygate.restart.RecoveryKind;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.SnapshotMismatch;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A recorded engine start as the meters see it: the one place the metrics read a {@link RestartRecord}.
 *
 * @param counted whether the start's figures count: a completed verdict on a start readygate saw begin (a start it did
 *     not see begin is no engine start: its latency would be the engine's uptime)
 * @param path its restart path
 * @param outcome how it ended
 * @param recovery what it recovered from
 * @param mismatches what its snapshot manifest named otherwise than the engine
 * @param readinessLatency from engine start to verified ready, when measured (not only a bound)
 * @param phaseDurations the time to reach each phase from the one before, when measured
 * @param fallback why a preload fell back to disk ({@link RestartPath#PRELOAD_FALLBACK} only)
 * @param vllmVersion the engine's vLLM version, when known
 * @param model the model served, when known
 * @param revision the model's revision, when known
 * @param configurationHash the hash of the engine's configuration ({@code /status}'s comparison)
 * @param enginePhases how long each phase of the engine's own start-up took, as its log said
 * @param compileCacheHit whether torch.compile's cache served the start, null when its log said neither
 */
record RecordedStart(
        boolean counted,
        RestartPath path,
        Outcome outcome,
        RecoveryKind recovery,
        List<SnapshotMismatch.Field> mismatches,
        @Nullable Duration readinessLatency,
        Map<Phase, Duration> phaseDurations,
        @Nullable FallbackReason fallback,
        @Nullable String vllmVersion,
        @Nullable String model,
        @Nullable String revision,
        String configurationHash,
        Map<EnginePhase, Duration> enginePhases,
        @Nullable Boolean compileCacheHit) {

    static RecordedStart of(RestartRecorded recorded) {
        RestartRecord record = recorded.record();
        return new RecordedStart(
                recorded.completed() && record.when().comparable(),
                record.pathEvidence().path(),
                record.verdict().outcome(),
                record.recovery().kind(),
                record.snapshotMismatches().stream()
                        .map(SnapshotMismatch::field)
                        .toList(),
                record.verdict().measuredReadinessLatency(),
                record.verdict().measuredPhaseDurations(),
                record.pathEvidence().path() == RestartPath.PRELOAD_FALLBACK
                        ? FallbackReason.of(record.pathEvidence().fallbackReason())
                        : null,
                record.engine().vllmVersion(),
                record.engine().model(),
                record.engine().revision(),
                record.engine().arguments().configurationHash(),
                EnginePhase.of(record.verdict().loggedDurations()),
                EnginePhase.compileCacheHit(record.verdict().loggedDurations()));
    }
}
