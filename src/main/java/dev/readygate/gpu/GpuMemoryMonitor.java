package dev.readygate.gpu;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Reads GPU memory every {@code interval} and attributes each process's memory to its owner (engine, preload daemon,
 * other) from its command line, else its process name. A reading that fails keeps its named reason for
 * {@code /status}; it never touches readiness.
 */
public final class GpuMemoryMonitor implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(GpuMemoryMonitor.class);

    private final @Nullable NvidiaSmiReader reader;
    private final Duration interval;
    private final Path proc;
    private final Clock clock;
    private final Scheduler timer;
    private final Scheduler blocking;
    private final List<Consumer<GpuMemoryView>> listeners;
    private volatile @Nullable GpuMemoryView last;
    private volatile @Nullable Disposable running;

    /** {@code reader} null: no source configured; every view says {@code not_configured}. */
    public GpuMemoryMonitor(
            @Nullable NvidiaSmiReader reader,
            Duration interval,
            Path proc,
            Clock clock,
            Scheduler timer,
            Scheduler blocking,
            List<Consumer<GpuMemoryView>> listeners) {
        this.reader = reader;
        this.interval = interval;
        this.proc = proc;
        this.clock = clock;
        this.timer = timer;
        this.blocking = blocking;
        this.listeners = List.copyOf(listeners);
    }

    public synchronized void start() {
        if (reader == null) {
            last = GpuMemoryView.failed(
                    clock.instant(),
                    new GpuReading.Failure(GpuReading.Reason.NOT_CONFIGURED, "readygate.gpu.nvidia-smi is not set"));
            return;
        }
        if (running == null) {
            running = Flux.interval(Duration.ZERO, interval, timer)
                    .onBackpressureDrop()
                    .concatMap(tick -> read(), 0)
                    .subscribe(this::publish, error -> logger.warn("GPU memory monitor stopped", error));
        }
    }

    /** One reading, attributed. Never an error signal. */
    Mono<GpuMemoryView> read() {
        NvidiaSmiReader source = reader;
        if (source == null) {
            return Mono.empty();
        }
        return source.read().flatMap(reading -> switch (reading) {
            case GpuReading.Failure failure -> Mono.just(GpuMemoryView.failed(clock.instant(), failure));
            case GpuReading.Success success ->
                Mono.fromCallable(() -> attribute(success.snapshot())).subscribeOn(blocking);
        });
    }

    /** Reads {@code /proc/<pid>/cmdline} for each process: blocking, on the blocking scheduler. */
    private GpuMemoryView attribute(GpuSnapshot snapshot) {
        Map<String, Map<ProcessOwners.Owner, Long>> byOwner = new LinkedHashMap<>();
        for (GpuMemory gpu : snapshot.gpus()) {
            byOwner.put(gpu.uuid(), new EnumMap<>(ProcessOwners.Owner.class));
        }
        for (GpuProcess process : snapshot.processes()) {
            ProcessOwners.Owner owner =
                    ProcessOwners.classify(process, ProcessOwners.readCommandLine(proc, process.pid()));
            byOwner.computeIfAbsent(process.gpuUuid(), uuid -> new EnumMap<>(ProcessOwners.Owner.class))
                    .merge(owner, process.usedBytes(), Long::sum);
        }
        Map<String, Map<ProcessOwners.Owner, Long>> frozen = new LinkedHashMap<>();
        byOwner.forEach((uuid, owners) -> frozen.put(uuid, Map.copyOf(owners)));
        return new GpuMemoryView(snapshot.at(), snapshot.gpus(), frozen, null, null);
    }

    private void publish(GpuMemoryView view) {
        last = view;
        listeners.forEach(listener -> listener.accept(view));
    }

    /** The last view, or null before the first reading. */
    public @Nullable GpuMemoryView last() {
        return last;
    }

    @Override
    public synchronized void close() {
        Disposable loop = running;
        running = null;
        if (loop != null) {
            loop.dispose();
        }
    }
}
