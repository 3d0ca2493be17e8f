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

    private static Samples ttft(double... millis) {
        Samples samples = new Samples("ttft", "ms");
        for (double value : millis) {
            samples.add(value);
        }
        return samples;
    }

    private String gatewayReport(double readygateSlowest) {
        GatewayStage stage = new GatewayStage(Plan.of("quick"), dir.resolve("readygate.jar"), dir);
        Map<GatewayStage.Leg, Samples> pooled = new java.util.LinkedHashMap<>();
        pooled.put(GatewayStage.Leg.DIRECT, ttft(10.0, 10.1, 10.4));
        pooled.put(GatewayStage.Leg.NGINX, ttft(10.3, 10.4, 11.0));
        pooled.put(GatewayStage.Leg.READYGATE, ttft(11.0, 11.2, readygateSlowest));
        stage.results.put("turns", GatewayStage.turns(2, 3, pooled, java.util.List.of(0.4, 1.6)));
        Results results = new Results(Plan.of("quick"), Instant.parse("2026-12-07T17:00:00Z"));
        results.gateway(stage);
        return new Report(results).markdown();
    }

    @Test
    void theGatewaysGoalIsJudgedOnThePooledTurnsAndShownRoundByRound() {
        // With three requests a path the p99 is the slowest: readygate's minus nginx's is 1.5 ms, then 0.8.
        assertThat(gatewayReport(12.5))
                .contains(
                        "| readygate gateway | 3 | 11.2 / 12.5 / 12.5 / 12.5 / 12.5 ms | 1.10 / 2.10 / 2.10 / 2.10 / 2.10 ms | [11.2, ∞] ms |")
                .contains("at p99 by round: [0.40, 1.60] ms")
                .contains("within 1 ms of nginx's): **not met**");
        assertThat(gatewayReport(11.8)).contains("within 1 ms of nginx's): **met**");
    }
}
