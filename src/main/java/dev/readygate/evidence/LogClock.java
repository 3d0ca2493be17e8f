package dev.readygate.evidence;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.jspecify.annotations.Nullable;

/**
 * The engine's log clock: the zone vLLM's zone-less times are read in ({@link LogTimeZone}), the configured one, else
 * the best learned so far (a zoned collector clock on the same line beats a line read as it was written), else UTC.
 * Learned from the tail's one worker and read from any thread.
 */
final class LogClock {

    /** How far a time may be from its zone's whole quarter hours and still tell the zone (vLLM writes whole seconds). */
    static final Duration TOLERANCE = Duration.ofSeconds(90);

    private static final int QUARTER_HOUR = 15 * 60;

    /** The furthest zones from UTC: UTC-12:00 and UTC+14:00. */
    private static final int MAX_OFFSET = 14 * 3600;

    private final @Nullable ZoneId configured;

    private volatile LogTimeZone learned = LogTimeZone.ASSUMED_UTC;

    /** @param configured {@code readygate.evidence.log-time-zone}, or null to learn it */
    LogClock(@Nullable ZoneId configured) {
        this.configured = configured;
    }

    /** The zone the log's times are read in now. */
    LogTimeZone zone() {
        return configured != null ? new LogTimeZone(configured, LogTimeZone.Source.CONFIGURED) : learned;
    }

    /** The instant of a time as vLLM wrote it. */
    Instant instant(LocalDateTime written) {
        return written.atZone(zone().zone()).toInstant();
    }

    /** A zoned collector's clock on the same line as {@code written}: the best teacher, it wins over read times. */
    void collectorClock(LocalDateTime written, Instant collector) {
        learn(written, collector, LogTimeZone.Source.COLLECTOR_CLOCK);
    }

    /**
     * A line read at {@code readAt} as it was written (after the backlog): teaches the zone unless a collector's clock
     * did.
     *
     * @return whether the zone changed (the line is read again)
     */
    boolean readAt(LocalDateTime written, Instant readAt) {
        if (learned.source() == LogTimeZone.Source.COLLECTOR_CLOCK
                || learned.source() == LogTimeZone.Source.READ_TIME) {
            return false;
        }
        LogTimeZone before = zone();
        learn(written, readAt, LogTimeZone.Source.READ_TIME);
        return !zone().zone().equals(before.zone());
    }

    private void learn(LocalDateTime written, Instant actual, LogTimeZone.Source source) {
        ZoneOffset offset = offset(written, actual);
        if (offset != null) {
            learned = new LogTimeZone(offset, source);
        }
    }

    /**
     * The zone offset that makes {@code written} the instant {@code actual}, to within {@link #TOLERANCE} of a whole
     * quarter hour (every zone's offset is one), or null when none does.
     */
    static @Nullable ZoneOffset offset(LocalDateTime written, Instant actual) {
        long seconds =
                Duration.between(actual, written.toInstant(ZoneOffset.UTC)).toSeconds();
        long quarters = Math.round(seconds / (double) QUARTER_HOUR);
        long rounded = quarters * QUARTER_HOUR;
        if (Math.abs(seconds - rounded) > TOLERANCE.toSeconds() || Math.abs(rounded) > MAX_OFFSET) {
            return null;
        }
        return ZoneOffset.ofTotalSeconds((int) rounded);
    }
}
