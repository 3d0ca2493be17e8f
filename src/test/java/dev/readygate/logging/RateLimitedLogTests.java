package dev.readygate.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

@ExtendWith(OutputCaptureExtension.class)
class RateLimitedLogTests {

    /** A clock the test moves. */
    static final class MovingClock extends Clock {
        Instant now = Instant.parse("2026-11-30T12:00:00Z");

        @Override
        public ZoneId getZone() {
            return ZoneId.of("UTC");
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    final MovingClock clock = new MovingClock();
    final RateLimitedLog log =
            new RateLimitedLog(LoggerFactory.getLogger("rate-limited-test"), clock, Duration.ofMinutes(1));

    static List<String> lines(CapturedOutput output, String part) {
        return output.getAll().lines().filter(line -> line.contains(part)).toList();
    }

    @Test
    void warnWhenRepeatedWithinTheWindowLogsOnceThenTheCountOfTheRest(CapturedOutput output) {
        for (int i = 0; i < 213; i++) {
            log.warn("tls", "Engine calls fail: {}", "TLS failed: PKIX path building failed");
            clock.now = clock.now.plusMillis(100);
        }
        assertThat(lines(output, "Engine calls fail")).hasSize(1);
        // 21.3 s passed; the window ends 60 s after the first.
        clock.now = Instant.parse("2026-11-30T12:01:00Z");
        log.warn("tls", "Engine calls fail: {}", "TLS failed: PKIX path building failed");
        assertThat(lines(output, "Engine calls fail"))
                .hasSize(2)
                .last()
                .asString()
                .endsWith("Engine calls fail: TLS failed: PKIX path building failed (212 more in the last minute)");
        // A quiet window after: the next one is logged plainly.
        clock.now = clock.now.plus(Duration.ofMinutes(5));
        log.warn("tls", "Engine calls fail: {}", "again");
        assertThat(lines(output, "Engine calls fail").getLast()).endsWith("Engine calls fail: again");
    }

    @Test
    void warnKeepsKeysApartAndTheExceptionLast(CapturedOutput output) {
        log.warn("a", "first {}", "a");
        log.warn("b", "first {}", "b");
        log.warn("a", "first {}", "a");
        assertThat(lines(output, "first a")).hasSize(1);
        assertThat(lines(output, "first b")).hasSize(1);
        clock.now = clock.now.plusSeconds(61);
        log.warn("a", "Probe cycle failed: {}", "bug", new IllegalStateException("boom"));
        assertThat(output.getAll())
                .contains("Probe cycle failed: bug (1 more in the last minute)")
                .contains("java.lang.IllegalStateException: boom");
    }

    @Test
    void windowMustBePositive() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new RateLimitedLog(LoggerFactory.getLogger("x"), clock, Duration.ZERO));
    }
}
