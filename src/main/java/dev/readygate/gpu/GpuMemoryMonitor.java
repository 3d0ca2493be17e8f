package dev.readygate.gpu;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Reads GPU memory every {@code interval} (and when asked, at the moments of a restart cycle) from the first source
 * that works, in the configured order, and attributes each process's memory to its owner (engine, preload daemon,
 * other) from its command line, else its process name. A source that fails keeps its named reason for
 * {@code /status}; a failed reading never touches readiness.
 */
public final class GpuMemoryMonitor {

    private static final Logger logger = LoggerFactory.getLogger(GpuMemoryMonitor.class);

    private final List<GpuMemorySource> sources;
    private final Duration interval;
    private final Path proc;
    private final Clock clock;
    private final Scheduler timer;
    private final Scheduler blocking;
    private final Consumer<GpuMemoryView> published;
    private volatile @Nullable GpuMemoryView last;

    /**
     * {@code sources} empty: none configured; the view says {@code not_configured}.
     *
     * @param published told about every reading
     */
    public GpuMemoryMonitor(
            List<GpuMemorySource> sources,
            Duration interval,
            Path proc,
            Clock clock,
            Scheduler timer,
            Scheduler blocking,
            Consumer<GpuMemoryView> published) {
        this.sources = List.copyOf(sources);
        this.interval = interval;
        this.proc = proc;
        this.clock = clock;
        this.timer = timer;
        this.blocking = blocking;
        this.published = published;
        this.last = sources.isEmpty() ? GpuMemoryView.notConfigured(clock.instant()) : null;
    }

    /** Reads every {@code interval} until disposed (nothing when no source is configured). */
    public Disposable follow() {
        if (sources.isEmpty()) {
            return Disposables.disposed();
        }
        return Flux.interval(Duration.ZERO, interval, timer)
                .onBackpressureDrop()
                .concatMap(tick -> readNow(), 0)
                .subscribe(view -> {}, error -> logger.warn("GPU memory monitor stopped", error));
    }

    /** Whether any source is configured. */
    public boolean configured() {
        return !sources.isEmpty();
    }

    /**
     * Reads now, publishes the view and returns it; empty when no source is configured. Never an
     * error signal.
     */
    public Mono<GpuMemoryView> readNow() {
        if (sources.isEmpty()) {
            return Mono.empty();
        }
        return read(0, new LinkedHashMap<>()).doOnNext(this::publish);
    }

    /** Tries the sources in order; the first that works gives the view, the ones that failed are named in it. */
    private Mono<GpuMemoryView> read(int index, Map<String, GpuReading.Failure> failures) {
        if (index == sources.size()) {
            return Mono.just(GpuMemoryView.failed(clock.instant(), failures));
        }
        GpuMemorySource source = sources.get(index);
        return source.read()
                .onErrorResume(error -> Mono.just(new GpuReading.Failure(
                        GpuReading.Reason.IO_ERROR, NvidiaSmiParser.excerpt(String.valueOf(error)))))
                .flatMap(reading -> switch (reading) {
                    case GpuReading.Failure failure -> {
                        failures.put(source.name(), failure);
                        yield read(index + 1, failures);
                    }
                    case GpuReading.Success success ->
                        Mono.fromCallable(() -> attribute(source.name(), success.snapshot(), failures))
                                .subscribeOn(blocking);
                });
    }

    /** Reads {@code /proc/<pid>/cmdline} for each process: blocking, on the blocking scheduler. */
    private GpuMemoryView attribute(String source, GpuSnapshot snapshot, Map<String, GpuReading.Failure> failures) {
        Map<String, Map<ProcessOwners.Owner, Long>> byOwner = new LinkedHashMap<>();
        for (GpuMemory gpu : snapshot.gpus()) {
            byOwner.put(gpu.uuid(), new EnumMap<>(ProcessOwners.Owner.class));
        }
        List<GpuMemoryView.OwnedProcess> processes = new ArrayList<>();
        for (GpuProcess process : snapshot.processes()) {
            ProcessOwners.Owner owner =
                    ProcessOwners.classify(process, ProcessOwners.readCommandLine(proc, process.pid()));
            processes.add(new GpuMemoryView.OwnedProcess(process.pid(), owner, process.gpuUuid(), process.usedBytes()));
            byOwner.computeIfAbsent(process.gpuUuid(), uuid -> new EnumMap<>(ProcessOwners.Owner.class))
                    .merge(owner, process.usedBytes(), Long::sum);
        }
        Map<String, Map<ProcessOwners.Owner, Long>> frozen = new LinkedHashMap<>();
        byOwner.forEach((uuid, owners) -> frozen.put(uuid, Map.copyOf(owners)));
        return new GpuMemoryView(
                snapshot.at(),
                source,
                snapshot.gpus(),
                frozen,
                processes,
                null,
                null,
                failures,
                snapshot.driverVersion(),
                snapshot.cudaVersion());
    }

    private void publish(GpuMemoryView view) {
        last = view;
        published.accept(view);
    }

    /** The last view, or null before the first reading. */
    public @Nullable GpuMemoryView last() {
        return last;
    }
}
