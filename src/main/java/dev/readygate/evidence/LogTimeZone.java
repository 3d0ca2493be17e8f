package dev.readygate.evidence;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * How vLLM's log times are read. vLLM writes its {@code MM-dd HH:mm:ss} in the engine container's local time, with no
 * zone: the zone comes from the configuration ({@code readygate.evidence.log-time-zone}, the engine container's
 * {@code TZ}), else is learned from the log (a log collector's zoned clock on the same line, a line read as it was
 * written, the start's first line against its process start time), else UTC is assumed, and said so.
 *
 * @param zone the zone the times are read in
 * @param source what told it
 */
public record LogTimeZone(ZoneId zone, Source source) {

    /** Nothing told the engine's zone: its times are read as UTC. */
    public static final LogTimeZone ASSUMED_UTC = new LogTimeZone(ZoneOffset.UTC, Source.ASSUMED);

    /** What told readygate the engine's zone. */
    public enum Source {
        /** {@code readygate.evidence.log-time-zone}. */
        CONFIGURED("set by readygate.evidence.log-time-zone"),
        /** A log collector's clock with a zone, on the same lines as vLLM's own time (CRI, a bracketed ISO time). */
        COLLECTOR_CLOCK("learned from the log collector's clock on the same lines"),
        /** A line read within seconds of being written: its time against readygate's clock. */
        READ_TIME("learned from lines read as they were written"),
        /** The start's first line against the engine's {@code process_start_time_seconds}. */
        PROCESS_START("learned from the start's first line against the engine's process start time"),
        /** Nothing: read as UTC. */
        ASSUMED("assumed: no zoned collector clock on the lines, no line read as it was written, and"
                + " readygate.evidence.log-time-zone not set");

        private final String why;

        Source(String why) {
            this.why = why;
        }

        /** The stable snake_case name. */
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The zone offset that puts a start's first line, read as UTC, just after its process started, when it is whole
     * quarter hours away from it (every zone's offset is): vLLM writes its first line within
     * {@value #FIRST_LINE_WITHIN} s of its process start. Null when no offset does.
     */
    public static @Nullable ZoneOffset offsetFromProcessStart(Instant firstLineAsUtc, Instant processStart) {
        long seconds = Duration.between(processStart, firstLineAsUtc).toSeconds();
        long quarter = 15 * 60;
        long offset = Math.floorDiv(seconds + CLOCK_SLACK, quarter) * quarter;
        long after = seconds - offset;
        if (after < -CLOCK_SLACK || after > FIRST_LINE_WITHIN || Math.abs(offset) > 14 * 3600) {
            return null;
        }
        return ZoneOffset.ofTotalSeconds((int) offset);
    }

    /** How soon after its process start vLLM writes its first line, at most, in seconds (imports, then the banner). */
    static final int FIRST_LINE_WITHIN = 90;

    /** vLLM's whole seconds against the process start time's fraction. */
    private static final int CLOCK_SLACK = 2;

    /** Whether something told the zone (not {@link Source#ASSUMED}). */
    public boolean known() {
        return source != Source.ASSUMED;
    }

    /** Whether the times are UTC's. */
    public boolean utc() {
        return zone.normalized().equals(ZoneOffset.UTC);
    }

    /** For the record's evidence: {@code vLLM's log times are UTC-07:00 (learned from ...)}. */
    public String describe() {
        String name = utc() ? "UTC" : zone instanceof ZoneOffset offset ? "UTC" + offset.getId() : zone.getId();
        return (known() ? "vLLM's log times are " + name : "vLLM's log times read as " + name) + " (" + source.why
                + ")";
    }
}
