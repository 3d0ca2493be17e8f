package dev.readygate.restart;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.StartLog;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.probe.ManifestTrust;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.StartLedger;
import dev.readygate.statedir.StateDir;
import dev.readygate.statedir.Store;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * Wires restart tracking: the history file and the records kept from it, the recorder, and the tracker that follows
 * each engine start.
 */
@Configuration(proxyBeanMethods = false)
class RestartConfiguration implements DisposableBean {

    private static final Logger logger = LoggerFactory.getLogger(RestartConfiguration.class);

    /**
     * The history's one writer. Records are handed over from event loops: a lock-free queue, so that enqueueing never
     * parks one (a {@code LinkedBlockingQueue}'s lock does when contended).
     */
    private final ExecutorService historyWriter = new ThreadPoolExecutor(
            1,
            1,
            0L,
            TimeUnit.MILLISECONDS,
            new LinkedTransferQueue<>(),
            Thread.ofPlatform().daemon().name("readygate-restart-history").factory());

    @Bean
    RestartHistory restartHistory(ReadygateProperties properties) {
        ReadygateProperties.Restart restart = properties.restart();
        return new RestartHistory(
                properties.stateDir().resolve(RestartHistory.FILE_NAME),
                restart.historyMaxSize(),
                restart.historyFiles(),
                JsonMapper.builder().build());
    }

    /**
     * Read once at start, on the main thread: earlier starts survive readygate's own restarts. A failed write is the
     * state directory's degraded reason, never an error of the recorder.
     */
    @Bean
    RestartRecords restartRecords(RestartHistory history, StateDir stateDir, StartLedger ledger) {
        return new RestartRecords(
                loadHistory(history),
                record -> {
                    history.writing(record);
                    historyWriter.execute(() -> {
                        if (!stateDir.write(Store.RESTART_HISTORY, () -> history.append(record))) {
                            history.notWritten(record);
                        }
                    });
                },
                ledger);
    }

    /**
     * The latest records kept in memory, read line by line (the whole history would not fit a small heap); none when
     * the history cannot be read (readygate starts and gates all the same).
     */
    private static List<RestartRecord> loadHistory(RestartHistory history) {
        try {
            return history.latest(RestartRecords.KEPT);
        } catch (UncheckedIOException ex) {
            logger.warn(
                    "Cannot read the restart history {}: {}; starting without earlier records",
                    history.file(),
                    ex.getMessage());
            return List.of();
        }
    }

    /** Where each start runs; the boot id is read once, here. */
    @Bean
    HostFacts hostFacts(
            ReadygateProperties properties, EvidenceSources sources, GpuMemoryMonitor gpu, StartLedger ledger) {
        return new HostFacts(
                properties.node(),
                properties.gpu().uuids(),
                HostFacts.bootId(properties.node().bootIdFile()),
                sources,
                gpu,
                Schedulers.boundedElastic(),
                ledger);
    }

    /** The canary's question whether the snapshot manifest may vouch for this engine on this node. */
    @Bean
    ManifestTrust manifestTrust(EvidenceSources sources, HostFacts hosts) {
        return new SnapshotManifestTrust(sources, hosts);
    }

    @Bean
    RestartTracker restartTracker(
            ReadygateProperties properties,
            StartLedger ledger,
            StartLog startLog,
            EvidenceSources sources,
            RestartRecords records,
            HostFacts hosts,
            ApplicationEventPublisher publisher,
            ObjectProvider<BuildProperties> build,
            EngineStateMachine machine,
            StateDir stateDir,
            Clock clock) {
        BuildProperties buildProperties = build.getIfAvailable();
        // Read once at start, on the main thread, like the history; written by the history's writer after its appends.
        StartJournal journal = new StartJournal(
                properties.stateDir().resolve(StartJournal.FILE_NAME),
                stateDir,
                historyWriter,
                JsonMapper.builder().build(),
                records.history().stream().map(RestartRecord::id).collect(Collectors.toSet()));
        StartRecorder.Stamp stamp = new StartRecorder.Stamp(
                hash(properties.probe().toString()),
                buildProperties == null ? "dev" : buildProperties.getVersion(),
                node(properties.node()));
        return new RestartTracker(
                new StartRecorder(ledger, startLog, sources, records, hosts, publisher::publishEvent, stamp, journal),
                machine,
                clock);
    }

    private static Map<String, String> node(ReadygateProperties.Node node) {
        Map<String, String> facts = new LinkedHashMap<>();
        putIfSet(facts, "node_name", node.name());
        putIfSet(facts, "gpu_uuid", node.gpuUuid());
        putIfSet(facts, "driver_version", node.driverVersion());
        putIfSet(facts, "gpu_name", "unknown".equals(node.gpuName()) ? "" : node.gpuName());
        return facts;
    }

    private static void putIfSet(Map<String, String> map, String key, String value) {
        if (!value.isBlank()) {
            map.put(key, value);
        }
    }

    /** Lets records already handed to the writer reach the file before readygate exits. */
    @Override
    public void destroy() throws InterruptedException {
        historyWriter.shutdown();
        historyWriter.awaitTermination(5, TimeUnit.SECONDS);
    }

    /** A short, stable hash of the probe configuration: a changed probe is not a changed engine. */
    static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
