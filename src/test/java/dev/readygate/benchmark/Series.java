package dev.readygate.benchmark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One measured quantity over every repeat of a run: the pooled samples and each repeat's own. */
final class Series {

    private final Samples pooled;
    private final List<Samples> repeats = new ArrayList<>();

    Series(String name, String unit) {
        this.pooled = new Samples(name, unit);
    }

    /** Adds a sample to the pooled set and to repeat {@code repeat} (0-based). */
    void add(int repeat, double value) {
        while (repeats.size() <= repeat) {
            repeats.add(new Samples(pooled.name() + " #" + (repeats.size() + 1), pooled.unit()));
        }
        repeats.get(repeat).add(value);
        pooled.add(value);
    }

    Samples pooled() {
        return pooled;
    }

    List<Samples> repeats() {
        return List.copyOf(repeats);
    }

    /** The pooled summary, with each repeat's p50 and p99 beside it when there was more than one repeat. */
    Map<String, Object> summary() {
        Map<String, Object> out = new LinkedHashMap<>(pooled.summary());
        if (repeats.size() > 1) {
            out.put(
                    "repeats",
                    repeats.stream()
                            .map(r -> Map.of(
                                    "count",
                                    r.count(),
                                    "p50",
                                    Samples.round(r.p50()),
                                    "p99",
                                    Samples.round(r.p99()),
                                    "max",
                                    Samples.round(r.max())))
                            .toList());
        }
        return out;
    }
}
