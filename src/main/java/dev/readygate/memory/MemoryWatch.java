package dev.readygate.memory;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.GpuMemoryListener;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.restart.MemoryMoment;
import dev.readygate.restart.RestartListener;
import dev.readygate.restart.RestartRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the memory assessment current: re-assesses the restart history when a start is recorded, when a stopped
 * start gets its after-stop memory, and on every GPU memory reading (a stale cache clears when the daemon lets go). Logs
 * each signal as it is raised and cleared, and tells the listeners. Remembers what the history cannot tell: which
 * starts this process recorded, and when a reading last showed the preload daemon change ({@link DaemonSightings}).
 */
public final class MemoryWatch implements RestartListener, GpuMemoryListener {

    private static final Logger logger = LoggerFactory.getLogger(MemoryWatch.class);
    private static final int KEPT_IDS = 1000;

    private final Supplier<List<RestartRecord>> history;
    private final ReadygateProperties.Memory settings;
    private final List<MemorySignalListener> listeners;
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
                if ("preload_daemon".equals(holder.owner())
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

    public MemoryWatch(
            Supplier<List<RestartRecord>> history,
            ReadygateProperties.Memory settings,
            List<MemorySignalListener> listeners) {
        this.history = history;
        this.settings = settings;
        this.listeners = List.copyOf(listeners);
    }

    /** The moment of a reading, summed over the watched GPUs; null when the reading failed. */
    public static @Nullable MemoryMoment moment(GpuMemoryView view) {
        if (!view.read()) {
            return null;
        }
        Map<String, Long> owners = new LinkedHashMap<>();
        view.ownersTotal().forEach((owner, bytes) -> owners.put(owner.value(), bytes));
        Map<Integer, MemoryMoment.Holder> byPid = new LinkedHashMap<>();
        for (GpuMemoryView.OwnedProcess process : view.processes()) {
            byPid.merge(
                    process.pid(),
                    new MemoryMoment.Holder(process.pid(), process.owner().value(), process.usedBytes()),
                    (a, b) -> new MemoryMoment.Holder(a.pid(), a.owner(), a.bytes() + b.bytes()));
        }
        return new MemoryMoment(view.at(), view.usedBytes(), owners, new ArrayList<>(byPid.values()));
    }

    @Override
    public void recorded(RestartRecord record, boolean completed) {
        synchronized (this) {
            lowest = null;
            recordedHere.add(record.id());
            // Kept as long as the tracker keeps its history, and no longer.
            while (recordedHere.size() > KEPT_IDS) {
                recordedHere.remove(recordedHere.iterator().next());
            }
        }
        reassess();
    }

    @Override
    public void memoryRecorded(RestartRecord record) {
        reassess();
    }

    @Override
    public void read(GpuMemoryView view) {
        MemoryMoment moment = moment(view);
        if (moment != null) {
            synchronized (this) {
                latest = moment;
                Daemon before = daemon;
                Daemon now = listsProcesses(view) ? Daemon.of(moment, before) : null;
                // A reading that lost track of a daemon process (its command line unreadable once) is no sign that
                // the daemon let go.
                boolean attributed = now == null || now.bytes() == moment.owner("preload_daemon");
                MemoryMoment low = lowest;
                if (attributed && (low == null || moment.owner("preload_daemon") <= low.owner("preload_daemon"))) {
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
                                mib(before.bytes()),
                                mib(now.bytes()));
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
        MemoryAssessment next = MemorySignals.assess(history.get(), sightings, low, last, settings);
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
        listeners.forEach(listener -> listener.assessed(next, raised));
    }

    /** One line for the log: what fired and how much. */
    static String explain(MemoryAssessment a, MemorySignal signal) {
        return switch (signal) {
            case LEAK_ACROSS_RESTARTS -> {
                MemoryAssessment.Drift d = a.drift();
                yield d == null
                        ? ""
                        : "memory at readiness grows " + mib(d.bytesPerCycle()) + " MiB per cycle over "
                                + d.cycles() + " " + d.path() + " cycles (" + mib(d.firstBytes()) + " -> "
                                + mib(d.lastBytes())
                                + " MiB)";
            }
            case HELD_AFTER_STOP -> {
                MemoryAssessment.HeldAfterStop h = a.heldAfterStop();
                yield h == null
                        ? ""
                        : h.holders().stream()
                                        .filter(holder -> !holder.expected())
                                        .map(holder -> holder.owner() + " pid " + holder.pid() + " "
                                                + mib(holder.bytes()) + " MiB: " + holder.why())
                                        .toList()
                                + (h.unexplainedBytes() > 0
                                        ? " unexplained " + mib(h.unexplainedBytes()) + " MiB"
                                        : "");
            }
            case STALE_CACHE -> {
                MemoryAssessment.StaleCache c = a.staleCache();
                yield c == null
                        ? ""
                        : "the preload daemon holds " + mib(c.staleBytes()) + " MiB beyond the weights of "
                                + c.checkpoint() + " (switched from " + c.previousCheckpoint() + "; shown by "
                                + c.evidence() + ")";
            }
            case KV_CACHE_SHRINKING -> {
                MemoryAssessment.KvCache k = a.kvCache();
                yield k == null ? "" : "kv_cache_size_tokens over the last " + k.cycles() + " cycles: " + k.tokens();
            }
        };
    }

    private static long mib(long bytes) {
        return bytes / (1024 * 1024);
    }
}
