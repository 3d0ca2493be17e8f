package dev.readygate.restart;

import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the restart history's "ready in" cell says of a start: its readiness latency, a bound of it, or why it has
 * none. Decided once here, from the record, for {@code /status} and both renderings of its page (the server's HTML and
 * the page's script), so that only a start that never became ready says {@link #NEVER}.
 */
public enum ReadyIn {
    /** Verified ready, timed from the engine's own start time: the latency. */
    MEASURED,
    /** Verified ready, timed from when readygate saw the previous engine go away: at most the figure. */
    AT_MOST,
    /** Verified ready, timed from when readygate first saw the start (or verified late): at least the figure. */
    AT_LEAST,
    /** Verified ready, but readygate started beside the running engine: when it started is unknown. */
    FIRST_SEEN,
    /** Verified ready with no latency for another reason. */
    NOT_MEASURED,
    /** Not verified ready yet, and the start still runs: it may still be. */
    NOT_YET,
    /** The start ended (or died before serving) without ever being verified ready. */
    NEVER,
    /** No readygate saw how the start ended. */
    UNKNOWN;

    /** The snake_case name used in {@code /status}. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The cell of a start with {@code outcome}, a readiness latency or none, the latency a bound or not, its start time
     * from {@code source}, first seen or not; {@code running}: whether the start is the engine's current one.
     */
    public static ReadyIn of(
            Outcome outcome, boolean latency, boolean bound, StartSource source, boolean firstSeen, boolean running) {
        return switch (outcome) {
            case READY -> {
                if (latency) {
                    yield !bound ? MEASURED : source == StartSource.OBSERVED_DOWN ? AT_MOST : AT_LEAST;
                }
                yield firstSeen ? FIRST_SEEN : NOT_MEASURED;
            }
            case NOT_READY -> running ? NOT_YET : NEVER;
            case FAILED -> NEVER;
            case UNKNOWN -> UNKNOWN;
        };
    }

    /** The cell of {@code record}; {@code running}: whether its start is the engine's current one. */
    public static ReadyIn of(RestartRecord record, boolean running) {
        return of(
                record.verdict().outcome(),
                record.verdict().readinessLatency() != null,
                record.verdict().readinessLatencyBound(),
                record.when().engineStartSource(),
                record.when().firstSeen(),
                running);
    }

    /** What the cell says ({@code 12.50 s}, {@code ≤ 12.50 s}, {@code first seen}, {@code never}). */
    public String text(@Nullable Duration latency) {
        String figure = latency == null ? "" : String.format(Locale.ROOT, "%.2f\u00a0s", latency.toMillis() / 1000.0);
        return switch (this) {
            case MEASURED -> figure;
            case AT_MOST -> "\u2264\u00a0" + figure;
            case AT_LEAST -> "\u2265\u00a0" + figure;
            case FIRST_SEEN -> "first seen";
            case NOT_MEASURED -> "not measured";
            case NOT_YET -> "not yet";
            case NEVER -> "never";
            case UNKNOWN -> "unknown";
        };
    }

    /** Why the cell says what it says (shown on hover), or null for a plain measurement. */
    public @Nullable String why(StartSource source) {
        return switch (this) {
            case MEASURED -> null;
            case AT_MOST, AT_LEAST ->
                "a bound, not a measurement: the engine gave no start time of its own (" + source.value()
                        + "), so readygate timed it from what it saw; kept out of the latency meters";
            case FIRST_SEEN ->
                "readygate started beside the running engine: when it started is unknown, so no readiness latency";
            case NOT_MEASURED -> "verified ready; no readiness latency";
            case NOT_YET -> "this start still runs and has not been verified ready yet";
            case NEVER -> "this start ended without ever being verified ready";
            case UNKNOWN -> "no readygate saw how this start ended";
        };
    }

    /** Whether the cell is an alarm (red): only a start that never became ready. */
    public boolean alarm() {
        return this == NEVER;
    }

    /** The entry {@code /status} gives: {@code kind}, {@code text}, {@code why}. */
    public Map<String, Object> status(RestartRecord record) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kind", value());
        out.put("text", text(record.verdict().readinessLatency()));
        out.put("why", why(record.when().engineStartSource()));
        return out;
    }
}
