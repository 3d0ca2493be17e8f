package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the engine's {@code /metrics} gives restart and busy detection in one start, and what of it is lost: a pure fold
 * over the start's scrapes. A scrape that fails (a body over {@code max-body-size}, not Prometheus text, a timeout, an
 * error status) or that has none of the series readygate reads loses {@link Part#METRICS} as a whole; a scrape that has
 * some loses the parts it lacks: the request gauges and the generation-token counter whenever they are absent (busy
 * detection needs them), the process start time and the success counter once a scrape of this start had them (vLLM in
 * multiprocess mode exports no process start time, other engines no success counter: their absence from the start is
 * a known deployment, not a loss). A server without {@code /metrics} at all (404) loses nothing here: it never offered
 * it ({@link EngineCapabilities}).
 *
 * @param lastUsableAt when a scrape last gave any of the series readygate reads
 * @param lastSeen when each part was last seen (never {@link Part#METRICS})
 * @param lost what is lost now, and since when and why
 * @param firstScrapeMissed whether a scrape of this start failed before any was usable: the first usable one came late,
 *     so its counters are not those the start began with
 */
public record MetricsEvidence(
        @Nullable Instant lastUsableAt, Map<Part, Instant> lastSeen, Map<Part, Loss> lost, boolean firstScrapeMissed) {

    /** A start not scraped yet. */
    public static final MetricsEvidence NONE = new MetricsEvidence(null, Map.of(), Map.of(), false);

    public MetricsEvidence {
        lastSeen = copy(lastSeen);
        lost = copy(lost);
    }

    /** What of {@code /metrics} restart and busy detection use. */
    public enum Part {
        /** The whole exposition: nothing usable came. */
        METRICS(
                "/metrics",
                "no restart detection from /metrics (a restart that keeps the port open goes unseen until /version"
                        + " changes), no busy detection (a heavy probe timing out on a busy engine counts as a failure),"
                        + " heavy probes not deferred to idle times, real traffic not taken as proof of health, a"
                        + " snapshot restore not told by its counters"),
        /** {@code process_start_time_seconds}. */
        PROCESS_START_TIME(
                "process_start_time_seconds",
                "no restart detection by process start time (only counters going down, or a changed /version), starts"
                        + " dated by the log or by what readygate saw"),
        /** {@code vllm:num_requests_running} and {@code vllm:num_requests_waiting}. */
        REQUEST_COUNTS(
                "vllm:num_requests_running and vllm:num_requests_waiting",
                "no busy detection (a heavy probe timing out on a busy engine counts as a failure), heavy probes not"
                        + " deferred to idle times"),
        /** {@code vllm:generation_tokens_total}. */
        GENERATION_TOKENS(
                "vllm:generation_tokens_total",
                "no busy detection (progress of other requests cannot be seen, so a heavy probe timing out counts as a"
                        + " failure), no restart detection by counters going down"),
        /** {@code vllm:request_success_total}. */
        REQUEST_SUCCESS(
                "vllm:request_success_total",
                "real traffic not taken as proof of health (heavy probes run anyway), a snapshot restore not told by"
                        + " its counters, no restart detection by request counts going down");

        private final String source;
        private final String cannot;

        Part(String source, String cannot) {
            this.source = source;
            this.cannot = cannot;
        }

        /** The stable snake_case name: the meter's {@code evidence} tag and {@code /status}'s. */
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** Where it comes from: the endpoint or the series. */
        public String source() {
            return source;
        }

        /** What readygate cannot do without it. */
        public String cannot() {
            return cannot;
        }
    }

    /**
     * One lost part.
     *
     * @param since when it was lost (the first scrape that lacked it)
     * @param why what the scrapes showed
     */
    public record Loss(Instant since, String why) {}

    /** Whether the latest scrape gave any of the series readygate reads (true before the first scrape). */
    public boolean usable() {
        return !lost.containsKey(Part.METRICS);
    }

    /** A scrape failed ({@code why} names how, in the engine client's words). */
    MetricsEvidence failed(String why, Instant at) {
        return metricsLost(why, at);
    }

    /** A scrape parsed: what it had, what it lacks. */
    MetricsEvidence scraped(EngineMetricsSample sample, Instant at) {
        Map<Part, Boolean> present = new EnumMap<>(Part.class);
        present.put(Part.PROCESS_START_TIME, sample.processStartTimeSeconds() != null);
        present.put(Part.REQUEST_COUNTS, sample.requestsRunning() != null && sample.requestsWaiting() != null);
        present.put(Part.GENERATION_TOKENS, sample.generationTokens() != null);
        present.put(Part.REQUEST_SUCCESS, sample.requestSuccess() != null);
        boolean any = present.containsValue(true)
                || sample.requestsRunning() != null
                || sample.requestsWaiting() != null
                || sample.promptTokens() != null;
        if (!any) {
            return metricsLost(
                    "answered, but with none of the series readygate reads (process_start_time_seconds, vllm:*"
                            + " request, token and success counters): not the engine's metrics",
                    at);
        }
        Map<Part, Instant> seen = new EnumMap<>(Part.class);
        seen.putAll(lastSeen);
        Map<Part, Loss> nowLost = new EnumMap<>(Part.class);
        present.forEach((part, there) -> {
            if (there) {
                seen.put(part, at);
                return;
            }
            boolean needed = part == Part.REQUEST_COUNTS || part == Part.GENERATION_TOKENS;
            Instant last = lastSeen.get(part);
            if (needed || last != null) {
                Loss known = lost.get(part);
                nowLost.put(
                        part,
                        known != null
                                ? known
                                : new Loss(
                                        at,
                                        last == null
                                                ? "absent from every scrape of this start"
                                                : "absent from /metrics (last seen " + last + ")"));
            }
        });
        return new MetricsEvidence(at, seen, nowLost, firstScrapeMissed);
    }

    private MetricsEvidence metricsLost(String why, Instant at) {
        Loss known = lost.get(Part.METRICS);
        Loss loss = known != null ? new Loss(known.since(), why) : new Loss(at, why);
        // Nothing can be said of the series while nothing usable comes.
        return new MetricsEvidence(
                lastUsableAt, lastSeen, Map.of(Part.METRICS, loss), firstScrapeMissed || lastUsableAt == null);
    }

    private static <V> Map<Part, V> copy(Map<Part, V> map) {
        return map.isEmpty() ? Map.of() : java.util.Collections.unmodifiableMap(new EnumMap<>(map));
    }
}
