package dev.readygate.memory;

import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Which checkpoint the preload daemon holds, as far as the engine's own log shows it. GPU memory cannot tell: a daemon
 * holding the old checkpoint and one holding the new weigh the same. The engine's log can: a preload hit maps the
 * weights the daemon holds for that start's checkpoint (vLLM's fingerprint includes the revision), a fingerprint
 * mismatch ({@code WeightCacheKey mismatch}) says the daemon holds another one, and a hit whose canary mismatched says
 * the same (another checkpoint with the same layout). A cold start, a snapshot restore, or a fallback because the
 * daemon could not be reached say nothing about what it holds.
 *
 * <p>Only evidence that still describes the daemon running now counts: starts this readygate process recorded itself (a
 * previous run's history describes a daemon that may be gone, and another one holding something else in its place),
 * that started after the daemon last changed (went away, came back, became another process, or its memory grew or
 * shrank: it loaded or let go of weights), as far as GPU readings tell.
 *
 * @param checkpoint the checkpoint the daemon holds, or null when it is only known not to hold {@code notCheckpoint}
 * @param notCheckpoint a checkpoint it is known not to hold, when its own is not known
 * @param proof the start whose log showed it
 * @param why what showed it, one line
 */
record DaemonCheckpoint(
        @Nullable String checkpoint, @Nullable String notCheckpoint, RestartRecord proof, String why) {

    /** Whether the daemon is known to hold {@code current}. */
    boolean holds(String current) {
        return current.equals(checkpoint);
    }

    /** Whether the daemon is known to hold something other than {@code current}. */
    boolean holdsOtherThan(String current) {
        return checkpoint != null ? !current.equals(checkpoint) : current.equals(notCheckpoint);
    }

    /**
     * What the daemon holds from the evidence, or null when nothing shows it.
     *
     * @param history the recorded starts, any order, any outcome
     * @param recordedHere the ids of the starts this process recorded
     * @param daemonChangedAfter the last reading before the daemon last changed, or null
     */
    static @Nullable DaemonCheckpoint inferred(
            List<RestartRecord> history, Set<String> recordedHere, @Nullable Instant daemonChangedAfter) {
        List<RestartRecord> evidence = history.stream()
                .filter(record -> recordedHere.contains(record.id()))
                .filter(record -> daemonChangedAfter == null
                        || record.when().engineStart().isAfter(daemonChangedAfter))
                .filter(DaemonCheckpoint::checkpointKnown)
                .sorted(Comparator.comparing(record -> record.when().engineStart()))
                .toList();
        DaemonCheckpoint known = null;
        for (RestartRecord record : evidence) {
            known = next(known, record);
        }
        return known;
    }

    private static @Nullable DaemonCheckpoint next(@Nullable DaemonCheckpoint known, RestartRecord record) {
        String checkpoint = record.engine().checkpoint();
        if (record.pathEvidence().path() == RestartPath.PRELOAD_HIT) {
            if (record.pathEvidence().wrongWeightsFromCache()) {
                return new DaemonCheckpoint(
                        null,
                        checkpoint,
                        record,
                        "a preload hit for " + checkpoint + " at "
                                + record.when().engineStart() + " served other weights (canary mismatch)");
            }
            return new DaemonCheckpoint(
                    checkpoint,
                    null,
                    record,
                    "a preload hit for " + checkpoint + " at " + record.when().engineStart());
        }
        String reason = record.pathEvidence().fallbackReason();
        if (record.pathEvidence().path() == RestartPath.PRELOAD_FALLBACK && reason != null) {
            if (reason.contains("Weights were released")) {
                // Copy mode: the daemon let go of its weights; what it loads next is unknown.
                return null;
            }
            if (reason.contains("WeightCacheKey mismatch")) {
                if (known != null && known.checkpoint() != null && !known.holds(checkpoint)) {
                    // Consistent with what it was shown to hold: it still holds that.
                    return known;
                }
                return new DaemonCheckpoint(
                        null,
                        checkpoint,
                        record,
                        "a fingerprint mismatch for " + checkpoint + " at "
                                + record.when().engineStart() + " (" + reason + ")");
            }
        }
        return known;
    }

    static boolean checkpointKnown(RestartRecord record) {
        return record.engine().model() != null
                && record.engine().modelRoot() != null
                && record.engine().revision() != null;
    }
}
