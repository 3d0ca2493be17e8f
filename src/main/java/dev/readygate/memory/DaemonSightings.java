package dev.readygate.memory;

import java.time.Instant;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What this readygate process saw of the preload daemon that the restart history cannot tell: which starts it recorded
 * itself (a start loaded from a previous run's state says nothing about the daemon running now), and when the daemon
 * last changed, as GPU readings show it (what it was shown to hold before then says nothing about what it holds now).
 *
 * @param recordedHere the ids of the starts this process recorded
 * @param daemonChangedAfter the last time the daemon was seen as it was before it last changed: the reading before the
 *     one that showed it go away, come back, be another process, or hold more or less (by more than
 *     {@code readygate.memory.tolerance}); null when no reading showed a change. A start after it saw the daemon of now
 *     (or one that changed within the same reading interval)
 */
record DaemonSightings(Set<String> recordedHere, @Nullable Instant daemonChangedAfter) {

    public DaemonSightings {
        recordedHere = Set.copyOf(recordedHere);
    }
}
