package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Schedulers;

/** Which log lines belong to which engine start, as the engine goes away and comes back. */
class EngineLogEvidenceTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    @TempDir
    Path dir;

    EngineLogEvidence evidence(Instant now, Duration lag) {
        return new EngineLogEvidence(
                new LogTail(
                        dir.resolve("engine.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                new VllmLogParser(Clock.fixed(now, ZoneOffset.UTC)),
                Clock.fixed(now, ZoneOffset.UTC),
                lag);
    }

    static LogEvent.CacheFallback fallback(Instant at) {
        return new LogEvent.CacheFallback(at, "EngineCore_DP0", 4243, "daemon unavailable");
    }

    @Test
    void newStartWhenTheEngineWentAwayKeepsLinesReadWithinTheLagAsTheNextStarts() {
        EngineLogEvidence log = evidence(T0.plusMillis(1000), Duration.ofMillis(700));
        log.accept(fallback(T0), T0.plusMillis(500));
        log.newStart();
        assertThat(log.current().cacheFallbackReason()).isEqualTo("daemon unavailable");
    }

    @Test
    void newStartWhenTheEngineWentAwayDropsLinesReadBeforeThePreviousStartWasVerified() {
        EngineLogEvidence log = evidence(T0.plusMillis(1000), Duration.ofMillis(700));
        log.accept(fallback(T0), T0.plusMillis(500));
        log.verified(T0.plusMillis(600));
        log.newStart();
        assertThat(log.current().cacheFallbackReason()).isNull();
    }
}
