package dev.readygate.restart;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.StartLedger;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Where each engine start runs ({@link NodeFacts}), captured as the start begins: the node and the pod (the downward
 * API, through the configuration), the kernel's boot id (read once), the engine container's start id (the file the
 * chart's engine entrypoint writes when the container starts: read when the start begins, so a later container's id
 * is never taken for this start's), and the GPU and its driver (the latest GPU reading, else the configuration).
 * Compared with the start before, these facts give the start's {@link Recovery}. The reading of a start is kept in its
 * sheet of the {@link StartLedger} ({@link #WHERE}).
 */
public final class HostFacts {

    private static final Logger logger = LoggerFactory.getLogger(HostFacts.class);

    /** Where a start runs, as read when it began (null for a start readygate did not see begin). */
    static final StartLedger.Slot<@Nullable Mono<Map<String, String>>> WHERE =
            StartLedger.Slot.empty("where the start runs");

    private final ReadygateProperties.Node node;
    private final List<String> watchedGpus;
    private final @Nullable String bootId;
    private final EvidenceSources sources;
    private final GpuMemoryMonitor gpu;
    private final Scheduler blocking;
    private final StartLedger ledger;
    private volatile Map<String, String> latest = Map.of();

    /**
     * @param node the node's and pod's settings
     * @param watchedGpus {@code readygate.gpu.uuids}: when set, the engine's GPUs
     * @param bootId the kernel's boot id, or null when it cannot be read
     */
    HostFacts(
            ReadygateProperties.Node node,
            List<String> watchedGpus,
            @Nullable String bootId,
            EvidenceSources sources,
            GpuMemoryMonitor gpu,
            Scheduler blocking,
            StartLedger ledger) {
        this.node = node;
        this.watchedGpus = List.copyOf(watchedGpus);
        this.bootId = bootId;
        this.sources = sources;
        this.gpu = gpu;
        this.blocking = blocking;
        this.ledger = ledger;
    }

    /** The boot id in a file ({@code /proc/sys/kernel/random/boot_id}), or null. Blocking. */
    static @Nullable String bootId(Path file) {
        try {
            String id = Files.readString(file).strip();
            return id.isEmpty() ? null : id;
        } catch (IOException | RuntimeException ex) {
            logger.info("No boot id ({}: {}): a reboot cannot be told from an engine restart", file, ex.toString());
            return null;
        }
    }

    /** A start that begins has its facts read now, before a later container could write its own start id. */
    @EventListener
    @Order(3)
    public void onEngineStateChanged(EngineStateChanged change) {
        EngineStart start = change.start();
        if (change.startBegan() && start != null) {
            Mono<Map<String, String>> facts = read().cache();
            ledger.update(start.id(), WHERE, known -> facts);
            facts.subscribe(
                    read -> latest = read,
                    error -> logger.warn("Cannot read where engine start {} runs", start.id(), error));
        }
    }

    /**
     * The facts of a start: as read when it began (a GPU fact not known then is taken from the latest reading), else
     * read now.
     */
    Mono<Map<String, String>> of(StartLedger.Sheet sheet) {
        Mono<Map<String, String>> known = sheet.get(WHERE);
        return known == null ? read() : known.map(this::withGpu);
    }

    /** The facts of the latest start that began, as read then (empty before the first); never blocks. */
    public Map<String, String> latest() {
        return withGpu(latest);
    }

    /** The facts as they are now. Blocking (reads the container's start id). */
    public Map<String, String> now() {
        return facts(sources.engineContainer());
    }

    private Mono<Map<String, String>> read() {
        return Mono.fromCallable(sources::engineContainer)
                .subscribeOn(blocking)
                .map(this::facts)
                .switchIfEmpty(Mono.fromSupplier(() -> facts(null)));
    }

    private Map<String, String> facts(EvidenceSources.@Nullable ContainerStart container) {
        Map<String, String> facts = new LinkedHashMap<>();
        putIfSet(facts, NodeFacts.NODE_NAME, node.name());
        putIfSet(facts, NodeFacts.POD_UID, node.podUid());
        putIfSet(facts, NodeFacts.BOOT_ID, bootId);
        putIfSet(facts, NodeFacts.ENGINE_CONTAINER, container == null ? null : container.id());
        return withGpu(facts);
    }

    /** The facts with the GPU's, where they are not known yet: the latest reading's, else the configuration's. */
    private Map<String, String> withGpu(Map<String, String> known) {
        Map<String, String> facts = new LinkedHashMap<>(known);
        GpuMemoryView view = gpu.last();
        boolean read = view != null && view.read();
        List<String> gpus =
                !watchedGpus.isEmpty() ? watchedGpus.stream().sorted().toList() : read ? view.engineGpus() : List.of();
        putIfAbsent(facts, NodeFacts.GPU_UUID, gpus.isEmpty() ? node.gpuUuid() : String.join(",", gpus));
        putIfAbsent(
                facts,
                NodeFacts.GPU_NAME,
                read && view.engineGpuName() != null
                        ? view.engineGpuName()
                        : "unknown".equals(node.gpuName()) ? null : node.gpuName());
        putIfAbsent(
                facts,
                NodeFacts.DRIVER_VERSION,
                read && view.driverVersion() != null ? view.driverVersion() : node.driverVersion());
        putIfAbsent(facts, NodeFacts.CUDA_VERSION, read ? view.cudaVersion() : null);
        return facts;
    }

    private static void putIfSet(Map<String, String> facts, String name, @Nullable String value) {
        if (value != null && !value.isBlank()) {
            facts.put(name, value.strip());
        }
    }

    private static void putIfAbsent(Map<String, String> facts, String name, @Nullable String value) {
        if (!facts.containsKey(name)) {
            putIfSet(facts, name, value);
        }
    }
}
