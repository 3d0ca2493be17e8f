package dev.readygate.memory;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.restart.RestartRecorded;
import dev.readygate.restart.RestartRecords;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;

/**
 * Keeps the memory assessment current: re-assesses the restart history when a start is recorded, when a start's
 * memory is joined to its record, and on every GPU memory reading (a stale cache clears when the daemon lets go). Logs
 * each signal as it is raised and cleared, and publishes each assessment ({@link MemoryAssessed}).
 */
public final class MemoryWatch {

    private static final Logger logger = LoggerFactory.getLogger(MemoryWatch.class);

    private final RestartRecords history;
    private final ReadygateProperties.Memory settings;
    private final Consumer<Object> publisher;
    private MemoryAssessment assessment = MemoryAssessment.NONE;
    // Of the readings since the last recorded start, the one where the preload daemon held least.
    private @Nullable MemoryMoment lowest;
    private @Nullable MemoryMoment latest;

    public MemoryWatch(RestartRecords history, ReadygateProperties.Memory settings, Consumer<Object> publisher) {
        this.history = history;
        this.settings = settings;
        this.publisher = publisher;
    }

    @EventListener
    public void onRestartRecorded(RestartRecorded recorded) {
        synchronized (this) {
            lowest = null;
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
                MemoryMoment low = lowest;
                if (low == null || moment.owner(Owner.PRELOAD_DAEMON) <= low.owner(Owner.PRELOAD_DAEMON)) {
                    lowest = moment;
                }
            }
            reassess();
        }
    }

    /** The current assessment. */
    public synchronized MemoryAssessment assessment() {
        return assessment;
    }

    private void reassess() {
        MemoryMoment low;
        MemoryMoment last;
        synchronized (this) {
            low = lowest;
            last = latest;
        }
        MemoryAssessment next = MemorySignals.assess(history.history(), low, last, settings);
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
                                + c.checkpoint() + " (switched from " + c.previousCheckpoint() + ")";
            }
            case KV_CACHE_SHRINKING -> {
                MemoryAssessment.KvCache k = a.kvCache();
                yield k == null ? "" : "kv_cache_size_tokens over the last " + k.cycles() + " cycles: " + k.tokens();
            }
        };
    }
}
