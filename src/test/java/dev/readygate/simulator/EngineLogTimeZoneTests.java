package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code deployment.time-zone}: vLLM writes its {@code %m-%d %H:%M:%S} timestamps in the engine's local time (the
 * container's {@code TZ}), so the simulator writes them in the configured zone; the log collector's prefix stays in
 * UTC.
 */
class EngineLogTimeZoneTests {

    private static final Pattern TIMESTAMP =
            Pattern.compile(" (?:INFO|WARNING|ERROR) (\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d) \\[");

    @TempDir
    Path workDir;

    @ParameterizedTest
    @ValueSource(strings = {"+05:30", "America/Los_Angeles"})
    void aStartedSimulatorWritesTheRealInstantInTheConfiguredZone(String zone) {
        Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        try (RunningSimulator running =
                RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.time-zone=" + zone)) {
            Instant after = Instant.now();
            ZoneId id = ZoneId.of(zone);
            String line = running.engineLog()
                    .lines()
                    .filter(text -> text.contains("Starting vLLM server on"))
                    .findFirst()
                    .orElseThrow();
            Matcher matcher = TIMESTAMP.matcher(line);
            assertThat(matcher.find()).as(line).isTrue();
            LocalDateTime written = LocalDateTime.parse(
                    before.atZone(id).getYear() + "-" + matcher.group(1),
                    DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
            Instant instant = written.atZone(id).toInstant();

            assertThat(instant).as(line).isBetween(before, after);
        }
    }

    @Test
    void theTimestampIsLocalTimeAndTheCollectorPrefixUtc() throws IOException {
        SimulatorProperties properties = RunningSimulator.properties(
                workDir, "deployment.time-zone=+05:30", "deployment.log-prefix=iso-bracket");
        Path file = workDir.resolve("zoned.log");
        Clock clock = Clock.fixed(Instant.parse("2026-12-31T20:15:42Z"), ZoneOffset.UTC);
        try (EngineLog log = new EngineLog(file, null, clock, properties.deployment(), "time-zone-test")) {
            log.info("APIServer", 4242, "launcher.py:120", "Shutting down FastAPI HTTP server.");
            log.flush();
        }

        assertThat(Files.readString(file))
                .isEqualTo("[2026-12-31T20:15:42Z] (APIServer pid=4242) INFO 01-01 01:45:42 [launcher.py:120] "
                        + "Shutting down FastAPI HTTP server.\n");
    }
}
