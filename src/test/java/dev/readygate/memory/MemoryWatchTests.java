package dev.readygate.memory;

import static dev.readygate.memory.MemorySignalsTests.MIB;
import static dev.readygate.memory.MemorySignalsTests.SETTINGS;
import static dev.readygate.memory.MemorySignalsTests.mismatch;
import static dev.readygate.memory.MemorySignalsTests.readyWith;
import static dev.readygate.memory.MemorySignalsTests.revision;
import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gpu.GpuMemory;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.ProcessOwners;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartRecords;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The watch over the memory signals, fed as readygate feeds it: the tracker's history (which holds a previous run's
 * starts after a restart of readygate), the starts recorded now, and GPU readings that show the preload daemon.
 */
class MemoryWatchTests {

    static final String UUID = "GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da";

    final RestartRecords history = new RestartRecords(List.of(), record -> {});
    final List<Set<MemorySignal>> raised = new ArrayList<>();
    final MemoryWatch watch =
            new MemoryWatch(history, SETTINGS, event -> raised.add(((MemoryAssessed) event).raised()));

    void record(RestartRecord record) {
        history.keep(record);
        watch.onRestartRecorded(new RestartRecorded(record, true));
    }

    @Test
    void startsLoadedFromAPreviousRunAreNoEvidenceOfWhatTheDaemonOfThisRunHolds() {
        // The state directory holds a run that ended on v2 with the daemon caching it (as the demo's first round
        // leaves it); this run starts cold on main, the daemon a new process holding main.
        List.of(
                        readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688),
                        mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836), "v2")),
                        revision(readyWith(RestartPath.PRELOAD_HIT, 2, 1668, 7688), "v2"))
                .forEach(history::keep);

        record(readyWith(RestartPath.COLD, 10, 1668, 8836));
        watch.onGpuReading(reading(10 * 60 + 40, 500, 1668));
        record(readyWith(RestartPath.PRELOAD_HIT, 11, 1668, 7688));

        assertThat(watch.assessment().active()).isEmpty();
        assertThat(raised).allSatisfy(signals -> assertThat(signals).isEmpty());
    }

    @Test
    void aReadingThatShowsTheDaemonReplacedEndsWhatEarlierStartsShowedItHolds() {
        record(readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688));
        record(mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836), "v2")));
        assertThat(watch.assessment().active()).containsExactly(MemorySignal.STALE_CACHE);
        watch.onGpuReading(reading(100, 500, 1668));
        // The daemon restarted to cache v2: another process.
        watch.onGpuReading(reading(110, 502, 1668));
        assertThat(watch.assessment().active()).isEmpty();
        record(revision(readyWith(RestartPath.PRELOAD_HIT, 2, 1668, 7688), "v2"));
        watch.onGpuReading(reading(150, 502, 1668));
        // The rollback: the daemon restarted to cache main again before the engine restarted cold.
        watch.onGpuReading(reading(160, 504, 1668));

        record(readyWith(RestartPath.COLD, 3, 1668, 8836));

        assertThat(watch.assessment().active()).isEmpty();
        assertThat(watch.assessment().staleCache()).isNull();
        assertThat(raised.stream().filter(signals -> signals.contains(MemorySignal.STALE_CACHE)))
                .hasSize(1);
    }

    @Test
    void theSameDaemonProcessHoldingTheSameMemoryKeepsWhatItWasShownToHold() {
        record(readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688));
        watch.onGpuReading(reading(40, 500, 1668));
        watch.onGpuReading(reading(50, 500, 1668 + 10));

        record(mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836), "v2")));

        assertThat(watch.assessment().active()).containsExactly(MemorySignal.STALE_CACHE);
    }

    @Test
    void aDaemonProcessWhoseCommandLineCouldNotBeReadOnceIsStillTheSameDaemon() {
        record(readyWith(RestartPath.PRELOAD_HIT, 0, 1668, 7688));
        record(mismatch(revision(readyWith(RestartPath.PRELOAD_FALLBACK, 1, 1668, 8836), "v2")));
        watch.onGpuReading(reading(100, 500, 1668));
        // Attributed from its name this once (its /proc entry unreadable, or taken by another process's).
        watch.onGpuReading(reading(110, 500, 1668, ProcessOwners.Owner.OTHER));
        watch.onGpuReading(reading(115, 500, 1668));

        // Still the daemon that holds main: the stale cache stays until it changes.
        assertThat(watch.assessment().active()).containsExactly(MemorySignal.STALE_CACHE);
        assertThat(raised.stream().filter(signals -> signals.contains(MemorySignal.STALE_CACHE)))
                .hasSize(1);
    }

    /** An nvidia-smi reading at T0 + {@code seconds}: the daemon as {@code daemonPid} holding so many MiB. */
    static GpuMemoryView reading(long seconds, int daemonPid, long daemonMib) {
        return reading(seconds, daemonPid, daemonMib, ProcessOwners.Owner.PRELOAD_DAEMON);
    }

    static GpuMemoryView reading(long seconds, int daemonPid, long daemonMib, ProcessOwners.Owner owner) {
        Instant at = MemorySignalsTests.T0.plusSeconds(seconds);
        long bytes = daemonMib * MIB;
        Map<ProcessOwners.Owner, Long> owners = new EnumMap<>(ProcessOwners.Owner.class);
        owners.put(owner, bytes);
        return new GpuMemoryView(
                at,
                "nvidia_smi",
                List.of(new GpuMemory(UUID, 0, "NVIDIA H200", 143_771 * MIB, bytes, 143_771 * MIB - bytes, 616 * MIB)),
                Map.of(UUID, owners),
                List.of(new GpuMemoryView.OwnedProcess(daemonPid, owner, UUID, bytes)),
                null,
                null,
                Map.of(),
                "580.159.04",
                "13.0");
    }
}
