package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A run's figures against another's: agreement by overlapping intervals, and the noise of the stage that measured. */
class FigureIntervalsTests {

    private static Samples oneTo(int n, double scale) {
        Samples samples = new Samples("x", "ms");
        for (int i = 1; i <= n; i++) {
            samples.add(i * scale);
        }
        return samples;
    }

    @Test
    void aFigureAgreesWhenTheIntervalsOverlapAndNotOtherwise() {
        FigureIntervals intervals = new FigureIntervals();
        // median of 1..100 ms: [40, 61]
        intervals.put("lag_p50_ms", oneTo(100, 1), 0.5, "lag");
        List<Map<String, Object>> noise = List.of(
                Map.of("stage", "lag #1", "others_busy_cores", 0.2),
                Map.of("stage", "lag #2", "others_busy_cores", 0.9));

        List<FigureIntervals.Agreement> close = intervals.compare(
                Map.of("lag_p50_ms", 50.0),
                Map.of("lag_p50_ms", 70.0),
                Map.of("lag_p50_ms", new Interval(60, 80, 1, 2, 2, 0.95)),
                noise);
        assertThat(close).singleElement().satisfies(a -> {
            assertThat(a.agrees()).isTrue();
            assertThat(a.othersBusyCores()).isEqualTo(0.9);
        });

        List<FigureIntervals.Agreement> apart = intervals.compare(
                Map.of("lag_p50_ms", 50.0),
                Map.of("lag_p50_ms", 70.0),
                Map.of("lag_p50_ms", new Interval(62, 80, 1, 2, 2, 0.95)),
                noise);
        assertThat(apart).singleElement().satisfies(a -> {
            assertThat(a.agrees()).isFalse();
            assertThat(a.verdict()).isEqualTo("disagrees");
        });

        FigureIntervals few = new FigureIntervals();
        few.put("lag_p50_ms", oneTo(5, 1), 0.5, "lag");
        assertThat(few.compare(Map.of("lag_p50_ms", 3.0), Map.of("lag_p50_ms", 70.0), Map.of(), List.of()))
                .singleElement()
                .satisfies(a -> assertThat(a.verdict()).isEqualTo("cannot tell"));
    }

    @Test
    void againstARunWhoseIntervalIsOpenOnBothSidesItCannotTell() {
        // The full run of 2026-12-01: five starts, so its start-up median was 2.19 s [−∞, ∞]; a quick run's six
        // starts bound theirs, and overlapping an interval that holds everything says nothing.
        FigureIntervals quick = new FigureIntervals();
        quick.put("startup_to_livez_seconds", oneTo(6, 0.5), 0.5, "footprint: start-up");
        assertThat(quick.compare(
                        Map.of("startup_to_livez_seconds", 1.5),
                        Map.of("startup_to_livez_seconds", 2.19),
                        Map.of(
                                "startup_to_livez_seconds",
                                new Interval(Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, 0, 0, 5, 0)),
                        List.of()))
                .singleElement()
                .satisfies(a -> {
                    assertThat(a.agrees()).isTrue();
                    assertThat(a.verdict()).isEqualTo("cannot tell");
                });
    }

    @Test
    void againstARunWithoutIntervalsItsFigureMustLieInside() {
        FigureIntervals intervals = new FigureIntervals();
        intervals.put("lag_p50_ms", oneTo(100, 1), 0.5, "lag");
        assertThat(intervals.compare(Map.of("lag_p50_ms", 50.0), Map.of("lag_p50_ms", 61.0), Map.of(), List.of()))
                .singleElement()
                .satisfies(a -> {
                    assertThat(a.agrees()).isTrue();
                    assertThat(a.othersBusyCores()).isNull();
                });
        assertThat(intervals.compare(Map.of("lag_p50_ms", 50.0), Map.of("lag_p50_ms", 62.0), Map.of(), List.of()))
                .singleElement()
                .satisfies(a -> assertThat(a.agrees()).isFalse());
    }

    @Test
    void aRepeatedSeriesAlsoRecordsTheSpreadOfItsRepeats() {
        Series series = new Series("x", "ms");
        for (int i = 1; i <= 10; i++) {
            series.add(0, i);
            series.add(1, 10 + i);
        }
        FigureIntervals intervals = new FigureIntervals();
        intervals.put("x_p50_ms", series, 0.5, "lag");
        FigureIntervals.Entry entry = intervals.get("x_p50_ms");
        assertThat(entry).isNotNull();
        // each repeat's nearest-rank median: 5 and 15
        assertThat(entry.repeats()).isNotNull();
        assertThat(entry.repeats().low()).isEqualTo(5);
        assertThat(entry.repeats().high()).isEqualTo(15);
        // the pooled 20 samples 1..20: ranks 6 and 15
        assertThat(entry.interval().low()).isEqualTo(6);
        assertThat(entry.interval().high()).isEqualTo(15);
        Interval read = FigureIntervals.read(intervals.toMap()).get("x_p50_ms");
        assertThat(read.low()).isEqualTo(6);
        assertThat(read.highRank()).isEqualTo(15);
    }
}
