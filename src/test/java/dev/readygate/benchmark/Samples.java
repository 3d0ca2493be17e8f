package dev.readygate.benchmark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A named set of measurements in one unit, with the percentiles the report quotes. Not thread-safe. */
final class Samples {

    private final String name;
    private final String unit;
    private final List<Double> values = new ArrayList<>();

    Samples(String name, String unit) {
        this.name = name;
        this.unit = unit;
    }

    String name() {
        return name;
    }

    String unit() {
        return unit;
    }

    void add(double value) {
        values.add(value);
    }

    void addAll(Samples other) {
        values.addAll(other.values);
    }

    int count() {
        return values.size();
    }

    /** The samples from {@code from} (inclusive) to {@code to} (exclusive), in the order they were added. */
    Samples slice(String name, int from, int to) {
        Samples slice = new Samples(name, unit);
        slice.values.addAll(values.subList(from, to));
        return slice;
    }

    boolean isEmpty() {
        return values.isEmpty();
    }

    double[] sorted() {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        return sorted;
    }

    /**
     * The {@code q} quantile by the nearest-rank method: the smallest sample with at least {@code q} of the samples at
     * or below it (so p99 of 100 samples is the 99th smallest, and of fewer than 100 samples the largest).
     */
    double quantile(double q) {
        double[] sorted = sorted();
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /** The {@link Interval#CONFIDENCE} confidence interval of the {@code q} quantile, from order statistics. */
    Interval interval(double q) {
        return Interval.ofQuantile(sorted(), q, Interval.CONFIDENCE);
    }

    double p50() {
        return quantile(0.50);
    }

    double p99() {
        return quantile(0.99);
    }

    double max() {
        return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    double min() {
        return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    double mean() {
        return values.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    double sum() {
        return values.stream().mapToDouble(Double::doubleValue).sum();
    }

    /** {@code count}, {@code p50}, {@code p99}, {@code max} (and min, mean), rounded for the report. */
    Map<String, Object> summary() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("unit", unit);
        out.put("count", count());
        if (!isEmpty()) {
            out.put("min", round(min()));
            out.put("p50", round(p50()));
            out.put("mean", round(mean()));
            out.put("p99", round(p99()));
            out.put("max", round(max()));
        }
        return out;
    }

    static double round(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return value;
        }
        double magnitude = Math.abs(value);
        double scale = magnitude >= 100 ? 10 : magnitude >= 1 ? 1000 : 1_000_000;
        return Math.round(value * scale) / scale;
    }
}
