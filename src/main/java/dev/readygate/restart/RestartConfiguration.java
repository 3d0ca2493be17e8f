package dev.readygate.restart;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.probe.EngineFacts;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/** Wires restart tracking: the evidence sources, the history file and the tracker, fed by engine state changes. */
@Configuration(proxyBeanMethods = false)
public class RestartConfiguration implements DisposableBean {

    private final ExecutorService historyWriter = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "readygate-restart-history");
        thread.setDaemon(true);
        return thread;
    });

    @Bean
    RestartHistory restartHistory(ReadygateProperties properties) {
        ReadygateProperties.Restart restart = properties.restart();
        return new RestartHistory(
                properties.stateDir().resolve(RestartHistory.FILE_NAME),
                restart.historyMaxSize(),
                restart.historyFiles(),
                JsonMapper.builder().build());
    }

    @Bean
    EvidenceSources evidenceSources(ReadygateProperties properties, Clock clock) {
        ReadygateProperties.Evidence evidence = properties.evidence();
        return new EvidenceSources(
                evidence.snapshotDir(),
                evidence.daemonHealthUrl(),
                evidence.daemonSocketDir(),
                daemonLog(evidence, clock),
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build(),
                JsonMapper.builder().build(),
                Schedulers.boundedElastic());
    }

    private @Nullable DaemonLog daemonLog(ReadygateProperties.Evidence evidence, Clock clock) {
        if (evidence.daemonLog() == null) {
            return null;
        }
        LogTail tail = new LogTail(
                evidence.daemonLog(),
                evidence.logPollInterval(),
                DataSize.ofKilobytes(64),
                Schedulers.boundedElastic());
        DaemonLog log = new DaemonLog(tail, new VllmLogParser(clock, tail::modifiedAt), clock);
        log.start();
        return log;
    }

    /**
     * How late readygate notices that the engine went away: a ready engine's {@code /health} is checked every
     * {@code health-interval}, a not-ready one's every {@code not-ready-interval}.
     */
    static Duration noticedWithin(ReadygateProperties.Probe probe) {
        return probe.healthInterval().compareTo(probe.notReadyInterval()) > 0
                ? probe.healthInterval()
                : probe.notReadyInterval();
    }

    /** The engine's log when configured: tailed from the start of the file, through rotation and truncation. */
    @Bean(destroyMethod = "close")
    StartLog startLog(ReadygateProperties properties, Clock clock) {
        ReadygateProperties.Evidence evidence = properties.evidence();
        if (evidence.engineLog() == null) {
            return StartLog.NONE;
        }
        LogTail tail = new LogTail(
                evidence.engineLog(),
                evidence.logPollInterval(),
                DataSize.ofKilobytes(64),
                Schedulers.boundedElastic());
        EngineLogEvidence log = new EngineLogEvidence(
                tail,
                // The year of vLLM's timestamps from the file's modification time: an old log is not dated next year.
                new VllmLogParser(clock, tail::modifiedAt),
                clock,
                noticedWithin(properties.probe())
                        .plus(evidence.logPollInterval())
                        .plusMillis(250));
        log.start();
        return log;
    }

    @Bean
    RestartTracker restartTracker(
            ReadygateProperties properties,
            EngineFacts facts,
            StartLog startLog,
            EvidenceSources sources,
            RestartHistory history,
            ObjectProvider<RestartListener> listeners,
            ObjectProvider<BuildProperties> build,
            MemoryMoments memoryMoments,
            Clock clock) {
        BuildProperties buildProperties = build.getIfAvailable();
        ReadygateProperties.Node node = properties.node();
        Map<String, String> nodeFacts = new LinkedHashMap<>();
        putIfSet(nodeFacts, "node_name", node.name());
        putIfSet(nodeFacts, "gpu_uuid", node.gpuUuid());
        putIfSet(nodeFacts, "driver_version", node.driverVersion());
        putIfSet(nodeFacts, "gpu_name", "unknown".equals(node.gpuName()) ? "" : node.gpuName());
        // Read once at start, on the main thread: earlier starts survive readygate's own restarts.
        return new RestartTracker(
                facts,
                startLog,
                sources,
                listeners.orderedStream().toList(),
                record -> historyWriter.execute(() -> history.append(record)),
                history.load(),
                clock,
                hash(properties.probe().toString()),
                buildProperties == null ? "dev" : buildProperties.getVersion(),
                nodeFacts,
                properties.restart().loopWindow(),
                properties.restart().loopStarts(),
                memoryMoments,
                properties.memory().afterStopDelay());
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
