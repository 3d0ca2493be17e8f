package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report's table of this run's figures beside the previous run's. */
class ReportTests {

    @TempDir
    Path dir;

    private Results footprintRun(Plan plan, double... startups) {
        FootprintStage stage = new FootprintStage(plan, dir.resolve("readygate.jar"), dir);
        Series image = new Series("start-up image", "s");
        for (double seconds : startups) {
            image.add(0, seconds);
        }
        stage.startup.put(FootprintStage.recommended(), image);
        Results results = new Results(plan, Instant.parse("2026-12-01T16:53:45Z"));
        results.footprint(stage);
        results.previous = Map.of(
                "started_at",
                "2026-11-30T18:44:51Z",
                "recommended_variant",
                FootprintStage.recommended(),
                "startup_to_livez_seconds",
                0.85);
        return results;
    }

    private static String row(String markdown, String figure) {
        return markdown.lines()
                .filter(l -> l.startsWith("| `" + figure + "` |"))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void aFigureWhoseIntervalIsOpenOnBothSidesCannotTellAgainstThePreviousRun() {
        // Five starts (the full plan's count before it was six) bound a median on neither side: [−∞, ∞].
        String markdown = new Report(footprintRun(Plan.of("full"), 2.0, 2.1, 2.19, 2.3, 2.34)).markdown();
        assertThat(row(markdown, "startup_to_livez_seconds"))
                .contains("[−∞, ∞]")
                .contains("cannot tell")
                .doesNotContain("within the intervals");
    }

    @Test
    void aBoundedFigureAgainstThePreviousRunIsWithinOrMovedBeyondItsInterval() {
        String moved = new Report(footprintRun(Plan.of("full"), 2.01, 2.1, 2.19, 2.2, 2.3, 2.34)).markdown();
        assertThat(row(moved, "startup_to_livez_seconds"))
                .contains("[2.01, 2.34]")
                .contains("**moved beyond its interval**");
        String within = new Report(footprintRun(Plan.of("full"), 0.8, 0.82, 0.84, 0.86, 0.88, 0.9)).markdown();
        assertThat(row(within, "startup_to_livez_seconds")).contains("within the intervals");
    }

    @Test
    void aBoundedFigureCannotTellAgainstAPreviousRunWhoseIntervalIsOpenOnBothSides() {
        Results results = footprintRun(Plan.of("full"), 2.01, 2.1, 2.19, 2.2, 2.3, 2.34);
        results.previousIntervals = Map.of(
                "startup_to_livez_seconds",
                new Interval(Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, 0, 0, 5, 0));
        assertThat(row(new Report(results).markdown(), "startup_to_livez_seconds"))
                .contains("0.85 [−∞, ∞]")
                .contains("cannot tell");
    }

    @Test
    void theFullPlanStartsEachVariantOftenEnoughToBoundItsMedian() {
        Samples starts = new Samples("start-up", "s");
        for (int i = 1; i <= Plan.of("full").startupRuns(); i++) {
            starts.add(i);
        }
        Interval median = starts.interval(0.5);
        assertThat(median.low()).isFinite();
        assertThat(median.high()).isFinite();
    }
}
