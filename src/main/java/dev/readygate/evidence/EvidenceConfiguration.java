package dev.readygate.evidence;

import dev.readygate.config.BackgroundLoop;
import dev.readygate.config.ReadygateProperties;
import dev.readygate.readiness.EngineStateMachine;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * Wires the evidence sources: the engine log (tailed from the start of the file, through rotation and truncation), the
 * preload daemon's log, health URL and socket directory, and the snapshot directory; each optional.
 */
@Configuration(proxyBeanMethods = false)
class EvidenceConfiguration {

    private static final DataSize MAX_LINE = DataSize.ofKilobytes(64);

    /** The engine's log when configured. */
    @Bean
    StartLog startLog(ReadygateProperties properties, Clock clock, EngineStateMachine machine) {
        ReadygateProperties.Evidence evidence = properties.evidence();
        if (evidence.engineLog() == null) {
            return StartLog.NONE;
        }
        LogTail tail =
                new LogTail(evidence.engineLog(), evidence.logPollInterval(), MAX_LINE, Schedulers.boundedElastic());
        return new EngineLogEvidence(
                tail,
                // The year of vLLM's timestamps from the file's modification time: an old log is not dated next year.
                new VllmLogParser(clock, tail::modifiedAt, evidence.logTimeZone()),
                clock,
                noticedWithin(properties.probe())
                        .plus(evidence.logPollInterval())
                        .plusMillis(250),
                machine.ledger(),
                // The log begins the starts whose port never opens, and ends those that die before serving.
                machine::apply);
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

    /** The preload daemon's log when configured (without it, it never says the daemon is ready). */
    @Bean
    DaemonLog daemonLog(ReadygateProperties properties, Clock clock) {
        ReadygateProperties.Evidence evidence = properties.evidence();
        Path file = evidence.daemonLog();
        LogTail tail = file == null
                ? null
                : new LogTail(file, evidence.logPollInterval(), MAX_LINE, Schedulers.boundedElastic());
        // The daemon runs in the engine's container: its times are in the same zone.
        return new DaemonLog(
                tail,
                new VllmLogParser(clock, tail == null ? () -> null : tail::modifiedAt, evidence.logTimeZone()),
                clock);
    }

    /** Both logs are read from the start of the application to its end. */
    @Bean
    BackgroundLoop logTails(StartLog startLog, DaemonLog daemonLog) {
        return new BackgroundLoop("log tails", BackgroundLoop.READERS, () -> {
            Disposable.Composite tails = Disposables.composite(daemonLog.follow());
            if (startLog instanceof EngineLogEvidence engineLog) {
                tails.add(engineLog.follow());
            }
            return tails;
        });
    }

    @Bean
    EvidenceSources evidenceSources(
            ReadygateProperties properties, DaemonLog daemonLog, @Qualifier("timerScheduler") Scheduler timer) {
        ReadygateProperties.Evidence evidence = properties.evidence();
        return new EvidenceSources(
                evidence.snapshotDir(),
                evidence.daemonHealthUrl(),
                evidence.daemonSocketDir(),
                daemonLog,
                evidence.engineContainerFile(),
                // Only with a daemon to ask: the JDK's client initializes TLS as it is built (about 60 ms of start-up
                // and some hundreds of classes) and keeps a selector thread.
                evidence.daemonHealthUrl() == null
                        ? null
                        : HttpClient.newBuilder()
                                .connectTimeout(evidence.daemonHealthTimeout())
                                .build(),
                JsonMapper.builder().build(),
                Schedulers.boundedElastic(),
                evidence.daemonHealthTimeout(),
                timer);
    }
}
