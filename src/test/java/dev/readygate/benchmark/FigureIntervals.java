package dev.readygate.benchmark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Each headline figure's interval, so that a reader can tell noise from a regression: the 95 % order-statistic interval
 * of the percentile it is ({@link Interval}), the spread between repeats where the stage ran more than once, and the
 * noise stage it was measured in. Also the comparison of one run's figures with another's (a quick run against the
 * last published full run, or a run against the previous one): a figure agrees when the two intervals overlap.
 */
final class FigureIntervals {

    /** One figure's interval, its repeats' spread (null with one repeat) and the stage whose noise it suffered. */
    record Entry(Interval interval, @Nullable Interval repeats, String stage) {

        Map<String, Object> toMap() {
            Map<String, Object> out = new LinkedHashMap<>(interval.toMap());
            if (repeats != null) {
                out.put("repeats_low", Samples.round(repeats.low()));
                out.put("repeats_high", Samples.round(repeats.high()));
                out.put("repeats", repeats.count());
            }
            out.put("noise_stage", stage);
            return out;
        }
    }

    /** How a figure of this run compares with the same figure of another. */
    record Agreement(
            String figure,
            double value,
            Interval interval,
            double other,
            Interval otherInterval,
            boolean agrees,
            @Nullable Double othersBusyCores) {

        /** The other run's interval overlaps this one's (a run with no intervals: its figure lies in this interval). */
        static Agreement of(
                String figure,
                double value,
                Interval interval,
                double other,
                @Nullable Interval otherInterval,
                @Nullable Double othersBusyCores) {
            Interval theirs = otherInterval == null ? new Interval(other, other, 0, 0, 0, 0) : otherInterval;
            return new Agreement(figure, value, interval, other, theirs, interval.overlaps(theirs), othersBusyCores);
        }

        /**
         * Agrees, disagrees, or cannot tell: this run's interval or the other's is open on both sides (too few
         * samples), and overlapping an interval that holds every value says nothing.
         */
        String verdict() {
            if (openOnBothSides(interval) || openOnBothSides(otherInterval)) {
                return "cannot tell";
            }
            return agrees ? "agrees" : "disagrees";
        }

        private static boolean openOnBothSides(Interval interval) {
            return Double.isInfinite(interval.low()) && Double.isInfinite(interval.high());
        }

        Map<String, Object> toMap() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("figure", figure);
            out.put("value", value);
            out.put("interval", interval.toMap());
            out.put("other", other);
            out.put("other_interval", otherInterval.toMap());
            out.put("agrees", agrees);
            out.put("verdict", verdict());
            out.put("others_busy_cores", othersBusyCores);
            return out;
        }
    }

    /** Other work on the machine above this (cores) makes a stage noisy. */
    static final double NOISY_CORES = 0.5;

    private final Map<String, Entry> entries = new LinkedHashMap<>();

    Map<String, Entry> entries() {
        return entries;
    }

    @Nullable
    Entry get(String figure) {
        return entries.get(figure);
    }

    void put(String figure, Samples samples, double q, String stage) {
        if (!samples.isEmpty()) {
            entries.put(figure, new Entry(samples.interval(q), null, stage));
        }
    }

    void put(String figure, Series series, double q, String stage) {
        Samples pooled = series.pooled();
        if (pooled.isEmpty()) {
            return;
        }
        List<Samples> repeats = series.repeats();
        Interval spread = null;
        if (repeats.size() > 1) {
            double low = Double.POSITIVE_INFINITY;
            double high = Double.NEGATIVE_INFINITY;
            for (Samples repeat : repeats) {
                low = Math.min(low, repeat.quantile(q));
                high = Math.max(high, repeat.quantile(q));
            }
            spread = Interval.spread(low, high, repeats.size());
        }
        entries.put(figure, new Entry(pooled.interval(q), spread, stage));
    }

    void put(String figure, @Nullable Interval interval, String stage) {
        if (interval != null) {
            entries.put(figure, new Entry(interval, null, stage));
        }
    }

    Map<String, Object> toMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        entries.forEach((k, v) -> out.put(k, v.toMap()));
        return out;
    }

    /** The intervals of a run read back from its {@code results.json} ({@code intervals}); empty for older runs. */
    static Map<String, Interval> read(@Nullable Object intervals) {
        Map<String, Interval> out = new LinkedHashMap<>();
        if (intervals instanceof Map<?, ?> map) {
            map.forEach((k, v) -> {
                if (v instanceof Map<?, ?> m) {
                    out.put(k.toString(), Interval.fromMap(m));
                }
            });
        }
        return out;
    }

    /**
     * Every figure of this run that has an interval and that the other run also has, compared; with how busy other
     * work kept the machine in the stage that measured it.
     */
    List<Agreement> compare(
            Map<String, Object> figures,
            Map<String, Object> other,
            Map<String, Interval> otherIntervals,
            List<Map<String, Object>> noise) {
        List<Agreement> out = new ArrayList<>();
        entries.forEach((figure, entry) -> {
            if (figures.get(figure) instanceof Number value && other.get(figure) instanceof Number theirs) {
                out.add(Agreement.of(
                        figure,
                        value.doubleValue(),
                        entry.interval(),
                        theirs.doubleValue(),
                        otherIntervals.get(figure),
                        othersBusy(noise, entry.stage())));
            }
        });
        return out;
    }

    /** The most other work seen in the stages whose name starts with {@code stage}, in cores; null when none ran. */
    static @Nullable Double othersBusy(List<Map<String, Object>> noise, String stage) {
        Double most = null;
        for (Map<String, Object> s : noise) {
            if (String.valueOf(s.get("stage")).startsWith(stage) && s.get("others_busy_cores") instanceof Number n) {
                most = most == null ? n.doubleValue() : Math.max(most, n.doubleValue());
            }
        }
        return most;
    }
}
