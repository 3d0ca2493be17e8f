package dev.readygate.benchmark;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A distribution-free confidence interval for a quantile, from order statistics: the number of samples below the true
 * {@code q} quantile is binomial (n, q) whatever the distribution, so the {@code lowRank}-th and {@code highRank}-th
 * smallest samples (1-based) bracket it with probability {@code coverage}, at least the confidence asked for. The ranks
 * are chosen with at most half the missing probability on each side: {@code lowRank} is the largest rank with
 * P(B &lt; lowRank) &le; &alpha;/2, {@code highRank} the smallest with P(B &ge; highRank) &le; &alpha;/2. A side the
 * samples cannot bound (too few of them: p99 of fewer than 368 samples has no upper bound at 95 %) is open: rank
 * 0, or {@code n + 1}, and an infinite value. The samples are taken as independent; consecutive latencies of one run
 * are not quite, so the interval is a floor on the real uncertainty, not a ceiling.
 *
 * @param low the lower bound (negative infinity when open)
 * @param high the upper bound (positive infinity when open)
 * @param lowRank the lower bound's rank, 0 when open
 * @param highRank the upper bound's rank, {@code count + 1} when open
 * @param count the number of samples
 * @param coverage the probability that the interval holds the quantile, P(lowRank &le; B &lt; highRank)
 */
record Interval(double low, double high, int lowRank, int highRank, int count, double coverage) {

    /** The confidence every figure of the report is given at. */
    static final double CONFIDENCE = 0.95;

    /** The interval of the {@code q} quantile of {@code sorted} (ascending) at {@code confidence}. */
    static Interval ofQuantile(double[] sorted, double q, double confidence) {
        int n = sorted.length;
        double[] cdf = binomialCdf(n, q);
        double tail = (1 - confidence) / 2;
        int low = 0;
        for (int k = 1; k <= n; k++) {
            // P(B <= k - 1) = P(B < k)
            if (cdf[k - 1] <= tail) {
                low = k;
            }
        }
        int high = n + 1;
        for (int k = n; k >= 1; k--) {
            // P(B >= k) = 1 - P(B <= k - 1)
            if (1 - cdf[k - 1] <= tail) {
                high = k;
            }
        }
        double below = low == 0 ? 0 : cdf[low - 1];
        double upTo = high == n + 1 ? 1 : cdf[high - 1];
        return new Interval(
                low == 0 ? Double.NEGATIVE_INFINITY : sorted[low - 1],
                high == n + 1 ? Double.POSITIVE_INFINITY : sorted[high - 1],
                low,
                high,
                n,
                upTo - below);
    }

    /**
     * An interval of a figure measured once per repeat: from the smallest to the largest repeat's value, with no
     * stated coverage (0). Used beside the order-statistic interval where a stage has repeats.
     */
    static Interval spread(double min, double max, int repeats) {
        return new Interval(min, max, 1, repeats, repeats, 0);
    }

    /** P(B &le; k) for k = 0..n, B binomial (n, p), summed in log space so that large n does not underflow. */
    static double[] binomialCdf(int n, double p) {
        double[] cdf = new double[n + 1];
        double logP = Math.log(p);
        double logQ = Math.log1p(-p);
        double logPmf = n * logQ;
        double sum = 0;
        for (int k = 0; k <= n; k++) {
            if (k > 0) {
                logPmf += Math.log((double) (n - k + 1) / k) + logP - logQ;
            }
            sum += Math.exp(logPmf);
            cdf[k] = Math.min(1, sum);
        }
        return cdf;
    }

    boolean contains(double value) {
        return value >= low && value <= high;
    }

    boolean overlaps(Interval other) {
        return low <= other.high && other.low <= high;
    }

    boolean bounded() {
        return !Double.isInfinite(low) && !Double.isInfinite(high);
    }

    /** For {@code results.json}: the bounds (null when open), their ranks, the count and the coverage. */
    Map<String, Object> toMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("low", Double.isInfinite(low) ? null : Samples.round(low));
        out.put("high", Double.isInfinite(high) ? null : Samples.round(high));
        out.put("low_rank", lowRank);
        out.put("high_rank", highRank);
        out.put("count", count);
        out.put("coverage", Samples.round(coverage));
        return out;
    }

    /** The reverse of {@link #toMap()}, for a run read back (a missing bound is open). */
    static Interval fromMap(Map<?, ?> map) {
        double low = map.get("low") instanceof Number n ? n.doubleValue() : Double.NEGATIVE_INFINITY;
        double high = map.get("high") instanceof Number n ? n.doubleValue() : Double.POSITIVE_INFINITY;
        int lowRank = map.get("low_rank") instanceof Number n ? n.intValue() : 0;
        int highRank = map.get("high_rank") instanceof Number n ? n.intValue() : 0;
        int count = map.get("count") instanceof Number n ? n.intValue() : 0;
        double coverage = map.get("coverage") instanceof Number n ? n.doubleValue() : 0;
        return new Interval(low, high, lowRank, highRank, count, coverage);
    }
}
