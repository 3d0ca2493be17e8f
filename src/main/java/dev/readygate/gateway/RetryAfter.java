package dev.readygate.gateway;

import dev.readygate.restart.Outcome;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * How long a client refused during an engine start should wait: the recorded readiness latencies of the current
 * start's restart path, less the time the start has already run, as the {@code Retry-After} seconds. The median
 * first; once the start has run past it, the 95th percentile; past that too, the start is late and the client is told
 * to come back soon. Clamped to [{@value #MIN_SECONDS}, {@value #MAX_SECONDS}] s: HTTP says whole seconds, and the
 * OpenAI Python client (Stainless-built, as Anthropic's) follows a {@code Retry-After} only up to 60 s (its
 * {@code _calculate_retry_timeout}; beyond that it falls back to its own backoff, so a longer figure would be
 * ignored). A pure function.
 *
 * @param remaining the time the start is expected to take still (zero when late)
 * @param basis what the figure comes from
 */
public record RetryAfter(Duration remaining, Basis basis) {

    /** The shortest {@code Retry-After}: a late start is retried each second, each refusal costing the engine nothing. */
    public static final long MIN_SECONDS = 1;

    /** The longest: what OpenAI's clients still follow. */
    public static final long MAX_SECONDS = 60;

    /** Without a recorded latency for the path: one kubelet probe period. */
    public static final Duration NO_HISTORY = Duration.ofSeconds(10);

    /** How many of the path's latest starts the figure is taken from: the node and release of today, not of last year. */
    public static final int RECENT_STARTS = 20;

    /** What the figure comes from. */
    public enum Basis {
        /** The median latency of the path, less the time spent. */
        MEDIAN,
        /** The start ran past the median: the 95th percentile, less the time spent. */
        P95,
        /** The start ran past the 95th percentile: late, retry soon. */
        LATE,
        /** No latency recorded for the path: {@link #NO_HISTORY}. */
        NO_HISTORY
    }

    /** The {@code Retry-After} header's value, in whole seconds, rounded up and clamped. */
    public long seconds() {
        return seconds(remaining);
    }

    /** {@code wait} as a {@code Retry-After} header's value: whole seconds, rounded up, clamped. */
    public static long seconds(Duration wait) {
        if (wait.isNegative()) {
            return MIN_SECONDS;
        }
        long seconds = wait.toSeconds() + (wait.toNanosPart() > 0 ? 1 : 0);
        return Math.clamp(seconds, MIN_SECONDS, MAX_SECONDS);
    }

    /**
     * The wait for a start whose path's recorded latencies are {@code latencies} (any order) and that has run
     * {@code spent}.
     */
    public static RetryAfter of(List<Duration> latencies, Duration spent) {
        if (latencies.isEmpty()) {
            return new RetryAfter(NO_HISTORY, Basis.NO_HISTORY);
        }
        List<Duration> sorted = latencies.stream().sorted().toList();
        Duration median = percentile(sorted, 0.5);
        if (spent.compareTo(median) < 0) {
            return new RetryAfter(median.minus(spent), Basis.MEDIAN);
        }
        Duration p95 = percentile(sorted, 0.95);
        if (spent.compareTo(p95) < 0) {
            return new RetryAfter(p95.minus(spent), Basis.P95);
        }
        return new RetryAfter(Duration.ZERO, Basis.LATE);
    }

    /**
     * The readiness latencies of {@code path} in {@code records}, of the {@value #RECENT_STARTS} latest starts that
     * were verified ready and timed from the engine's own start (as the restart comparison counts them: a first-seen
     * start or a latency that is only a bound is no measurement).
     */
    public static List<Duration> latencies(Collection<RestartRecord> records, RestartPath path) {
        return records.stream()
                .filter(record -> record.pathEvidence().path() == path
                        && record.when().comparable()
                        && record.verdict().outcome() == Outcome.READY
                        && record.verdict().measuredReadinessLatency() != null
                        && !record.verdict().measuredReadinessLatency().isNegative())
                .sorted(Comparator.comparing(
                                (RestartRecord record) -> record.when().engineStart())
                        .reversed())
                .limit(RECENT_STARTS)
                .map(record -> record.verdict().measuredReadinessLatency())
                .toList();
    }

    /** Nearest rank, as the restart comparison computes it (the median of an even count is the lower middle value). */
    private static Duration percentile(List<Duration> sorted, double fraction) {
        int rank = (int) Math.ceil(fraction * sorted.size());
        return sorted.get(Math.clamp(rank - 1, 0, sorted.size() - 1));
    }
}
