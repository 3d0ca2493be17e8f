package dev.readygate.memory;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartRecords;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;

/**
 * Keeps the memory assessment current: re-assesses the restart history when a start is recorded, when a start's
 * memory is joined to its record, and on every GPU memory reading (a stale cache clears when the daemon lets go). Logs
 * each signal as it is raised and cleared, and publishes each assessment ({@link MemoryAssessed}). Remembers what the history cannot tell: which
 * starts this process recorded, and when a reading last showed the preload daemon change ({@link DaemonSightings}).
 */
public final class MemoryWatch {

    private static final Logger logger = LoggerFactory.getLogger(MemoryWatch.class);
    private static final int KEPT_IDS = 1000;

    private final RestartRecords history;
    private final ReadygateProperties.Memory settings;
    private final Consumer<Object> publisher;
    private MemoryAssessment assessment = MemoryAssessment.NONE;
    // Of the readings since the last recorded start, the one where the preload daemon held least.
    private @Nullable MemoryMoment lowest;
    private @Nullable MemoryMoment latest;
    // The starts this process recorded: a previous run's say nothing about the daemon running now.
    private final Set<String> recordedHere = new LinkedHashSet<>();
    // The preload daemon in the last reading that lists processes, and the last reading before it last changed.
    private @Nullable Daemon daemon;
    private @Nullable Instant daemonChangedAfter;

    /** The daemon processes in one reading, what they hold together, and when it was read. */
    private record Daemon(Set<Integer> pids, long bytes, Instant at) {

        /**
         * The daemon in {@code moment}: its processes, and those that were the daemon in the reading before and are
         * still there (a process does not stop being the daemon because its command line could not be read once).
         */
        static Daemon of(MemoryMoment moment, @Nullable Daemon before) {
            Set<Integer> pids = new HashSet<>();
            long bytes = 0;
            for (MemoryMoment.Holder holder : moment.processes()) {
                if (holder.owner() == Owner.PRELOAD_DAEMON
                        || (before != null && before.pids().contains(holder.pid()))) {
                    pids.add(holder.pid());
                    bytes += holder.bytes();
                }
            }
            return new Daemon(pids, bytes, moment.at());
        }

        /** Another process, gone, back, or holding more or less: it loaded or let go of weights. */
        boolean changedFrom(Daemon before, long tolerance) {
            return !pids.equals(before.pids) || Math.abs(bytes - before.bytes) > tolerance;
        }
    }

    public MemoryWatch(RestartRecords history, ReadygateProperties.Memory settings, Consumer<Object> publisher) {
        this.history = history;
        this.settings = settings;
        this.publisher = publisher;
    }

    @EventListener
    public void onRestartRecorded(RestartRecorded recorded) {
        synchronized (this) {
            lowest = null;
            recordedHere.add(recorded.record().id());
            // Kept as long as the tracker keeps its history, and no longer.
            while (recordedHere.size() > KEPT_IDS) {
                recordedHere.remove(recordedHere.iterator().next());
            }
        }
        reassess();
    }

    /** A start's memory was joined to its record. */
    void memoryRecorded() {
        reassess();
    }

    @EventListener
    public void onGpuReading(GpuMemoryView view) {
        MemoryMoment moment = view.moment();
        if (moment != null) {
            synchronized (this) {
                latest = moment;
                Daemon before = daemon;
                Daemon now = listsProcesses(view) ? Daemon.of(moment, before) : null;
                // A reading that lost track of a daemon process (its command line unreadable once) is no sign that
                // the daemon let go.
                boolean attributed = now == null || now.bytes() == moment.owner(Owner.PRELOAD_DAEMON);
                MemoryMoment low = lowest;
                if (attributed
                        && (low == null || moment.owner(Owner.PRELOAD_DAEMON) <= low.owner(Owner.PRELOAD_DAEMON))) {
                    lowest = moment;
                }
                if (now != null) {
                    if (before != null
                            && now.changedFrom(before, settings.tolerance().toBytes())) {
                        // It changed between the two readings.
                        daemonChangedAfter = before.at();
                        logger.info(
                                "Preload daemon changed between the GPU readings at {} and {}: pids {} -> {}, {} -> {}"
                                        + " MiB; what earlier starts showed it holds no longer counts",
                                before.at(),
                                now.at(),
                                before.pids(),
                                now.pids(),
                                MemoryMoment.mib(before.bytes()),
                                MemoryMoment.mib(now.bytes()));
                    }
                    daemon = now;
                }
            }
            reassess();
        }
    }

    /** The current assessment. */
    public synchronized MemoryAssessment assessment() {
        return assessment;
    }

    /** The DCGM exporter lists no processes: its readings say nothing of the daemon. */
    private static boolean listsProcesses(GpuMemoryView view) {
        return !"dcgm".equals(view.source());
    }

    private void reassess() {
        MemoryMoment low;
        MemoryMoment last;
        DaemonSightings sightings;
        synchronized (this) {
            low = lowest;
            last = latest;
            sightings = new DaemonSightings(recordedHere, daemonChangedAfter);
        }
        MemoryAssessment next = MemorySignals.assess(history.history(), sightings, low, last, settings);
        Set<MemorySignal> raised;
        synchronized (this) {
            Set<MemorySignal> before = assessment.active();
            raised = EnumSet.noneOf(MemorySignal.class);
            raised.addAll(next.active());
            raised.removeAll(before);
            Set<MemorySignal> cleared = EnumSet.noneOf(MemorySignal.class);
            cleared.addAll(before);
            cleared.removeAll(next.active());
            assessment = next;
            raised.forEach(
                    signal -> logger.warn("GPU memory signal {} raised: {}", signal.value(), explain(next, signal)));
            cleared.forEach(signal -> logger.info("GPU memory signal {} cleared", signal.value()));
        }
        publisher.accept(new MemoryAssessed(next, raised));
    }

    /** One line for the log: what fired and how much. */
    static String explain(MemoryAssessment a, MemorySignal signal) {
        return switch (signal) {
            case LEAK_ACROSS_RESTARTS -> {
                MemoryAssessment.Drift d = a.drift();
                yield d == null
                        ? ""
                        : "memory at readiness grows " + MemoryMoment.mib(d.bytesPerCycle()) + " MiB per cycle over "
                                + d.cycles() + " " + d.path() + " cycles (" + MemoryMoment.mib(d.firstBytes()) + " -> "
                                + MemoryMoment.mib(d.lastBytes())
                                + " MiB)";
            }
            case HELD_AFTER_STOP -> {
                MemoryAssessment.HeldAfterStop h = a.heldAfterStop();
                yield h == null
                        ? ""
                        : h.holders().stream()
                                        .filter(holder -> !holder.expected())
                                        .map(holder -> holder.owner().value() + " pid " + holder.pid() + " "
                                                + MemoryMoment.mib(holder.bytes()) + " MiB: " + holder.why())
                                        .toList()
                                + (h.unexplainedBytes() > 0
                                        ? " unexplained " + MemoryMoment.mib(h.unexplainedBytes()) + " MiB"
                                        : "");
            }
            case STALE_CACHE -> {
                MemoryAssessment.StaleCache c = a.staleCache();
                yield c == null
                        ? ""
                        : "the preload daemon holds " + MemoryMoment.mib(c.staleBytes()) + " MiB beyond the weights of "
                                + c.checkpoint() + " (switched from " + c.previousCheckpoint() + "; shown by "
                                + c.evidence() + ")";
            }
            case KV_CACHE_SHRINKING -> {
                MemoryAssessment.KvCache k = a.kvCache();
                yield k == null ? "" : "kv_cache_size_tokens over the last " + k.cycles() + " cycles: " + k.tokens();
            }
        };
    }
}
