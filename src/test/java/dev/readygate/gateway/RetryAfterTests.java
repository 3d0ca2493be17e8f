package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.StartSource;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.TestRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link RetryAfter}: the path's recorded latencies less the time spent, clamped. */
class RetryAfterTests {

    static List<Duration> seconds(double... values) {
        return java.util.Arrays.stream(values)
                .mapToObj(s -> Duration.ofMillis(Math.round(s * 1000)))
                .toList();
    }

    static Stream<Arguments> rows() {
        // Twenty latencies 1..20 s: median 10 s (the lower middle), p95 19 s.
        List<Duration> twenty =
                IntStream.rangeClosed(1, 20).mapToObj(Duration::ofSeconds).toList();
        return Stream.of(
                Arguments.of("no history", List.of(), 0.0, RetryAfter.Basis.NO_HISTORY, 10.0, 10L),
                Arguments.of("no history, long under way", List.of(), 300.0, RetryAfter.Basis.NO_HISTORY, 10.0, 10L),
                Arguments.of("before the median", twenty, 4.0, RetryAfter.Basis.MEDIAN, 6.0, 6L),
                Arguments.of("a fraction rounds up", twenty, 4.5, RetryAfter.Basis.MEDIAN, 5.5, 6L),
                Arguments.of("at the median: the p95", twenty, 10.0, RetryAfter.Basis.P95, 9.0, 9L),
                Arguments.of("past the p95: late", twenty, 19.0, RetryAfter.Basis.LATE, 0.0, 1L),
                Arguments.of("one start", seconds(3.2), 1.0, RetryAfter.Basis.MEDIAN, 2.2, 3L),
                Arguments.of("a snapshot restore of 0.4 s", seconds(0.4, 0.5), 0.1, RetryAfter.Basis.MEDIAN, 0.3, 1L),
                Arguments.of(
                        "cold starts of minutes", seconds(240, 250, 260), 30.0, RetryAfter.Basis.MEDIAN, 220.0, 60L),
                Arguments.of("any order", seconds(9, 1, 5), 2.0, RetryAfter.Basis.MEDIAN, 3.0, 3L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void ofFollowsTheTable(
            String row, List<Duration> latencies, double spent, RetryAfter.Basis basis, double remaining, long header) {
        RetryAfter wait = RetryAfter.of(latencies, Duration.ofMillis(Math.round(spent * 1000)));
        assertThat(wait.basis()).as(row).isEqualTo(basis);
        assertThat(wait.remaining()).as(row).isEqualTo(Duration.ofMillis(Math.round(remaining * 1000)));
        assertThat(wait.seconds()).as(row).isEqualTo(header);
    }

    @Test
    void secondsWhenNegativeOrHugeIsClamped() {
        assertThat(RetryAfter.seconds(Duration.ofSeconds(-5))).isEqualTo(RetryAfter.MIN_SECONDS);
        assertThat(RetryAfter.seconds(Duration.ZERO)).isEqualTo(RetryAfter.MIN_SECONDS);
        assertThat(RetryAfter.seconds(Duration.ofHours(1))).isEqualTo(RetryAfter.MAX_SECONDS);
        assertThat(RetryAfter.seconds(Duration.ofMillis(2001))).isEqualTo(3);
    }

    static RestartRecord ready(String id, RestartPath path, int minute, double latency) {
        return TestRecords.record(id)
                .path(path)
                .engineStart(TestRecords.START.plusSeconds(60L * minute))
                .outcome(Outcome.READY)
                .readinessLatency(Duration.ofMillis(Math.round(latency * 1000)))
                .build();
    }

    @Test
    void latenciesTakeTheMeasuredReadyStartsOfThePathOnly() {
        List<RestartRecord> records = List.of(
                ready("hit-1", RestartPath.PRELOAD_HIT, 1, 4.0),
                ready("cold", RestartPath.COLD, 2, 200.0),
                ready("hit-2", RestartPath.PRELOAD_HIT, 3, 5.0),
                // Never ready, first seen, a bound: no measurement.
                TestRecords.from(ready("hit-failed", RestartPath.PRELOAD_HIT, 4, 1.0))
                        .outcome(Outcome.NOT_READY)
                        .build(),
                TestRecords.from(ready("hit-first-seen", RestartPath.PRELOAD_HIT, 5, 1.0))
                        .firstSeen(true)
                        .build(),
                TestRecords.from(ready("hit-bound", RestartPath.PRELOAD_HIT, 6, 1.0))
                        .engineStartSource(StartSource.OBSERVED_DOWN)
                        .readinessLatencyBound(true)
                        .build());
        assertThat(RetryAfter.latencies(records, RestartPath.PRELOAD_HIT))
                .containsExactly(seconds(5.0, 4.0).toArray(Duration[]::new));
        assertThat(RetryAfter.latencies(records, RestartPath.SNAPSHOT_RESTORE)).isEmpty();
    }

    @Test
    void latenciesTakeTheLatestStartsOnly() {
        List<RestartRecord> records = new ArrayList<>();
        for (int i = 0; i < RetryAfter.RECENT_STARTS + 5; i++) {
            // The five oldest took 100 s; the recent ones 2 s.
            records.add(ready("s" + i, RestartPath.SNAPSHOT_RESTORE, i, i < 5 ? 100.0 : 2.0));
        }
        assertThat(RetryAfter.latencies(records, RestartPath.SNAPSHOT_RESTORE))
                .hasSize(RetryAfter.RECENT_STARTS)
                .containsOnly(Duration.ofSeconds(2));
    }
}
