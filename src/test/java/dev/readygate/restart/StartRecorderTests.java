package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.evidence.LogEvent;
import dev.readygate.evidence.LogFindings;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** How a recorded start is dated: the best source there is, as a table. */
class StartRecorderTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    static EngineMetricsSample metrics(@Nullable Double processStart) {
        return new EngineMetricsSample(processStart, 0.0, 0.0, 0.0, 0.0, null, Map.of());
    }

    /** An engine log whose start's first line is dated {@code firstLineAt} (or carries no date). */
    static LogFindings log(@Nullable Instant firstLineAt) {
        return LogFindings.of(List.of(new LogEvent.ServerVersion(firstLineAt, "APIServer", 1, "0.31.0")));
    }

    static Stream<Arguments> starts() {
        EngineStart afterDown = new EngineStart("s1", T0, StartSource.OBSERVED_DOWN, false);
        EngineStart firstSeen = new EngineStart("s1", T0, StartSource.FIRST_OBSERVED, true);
        EngineStart restarted = new EngineStart("s1", T0.plusSeconds(7), StartSource.PROCESS_START_TIME, false);
        double processStart = T0.plusSeconds(3).toEpochMilli() / 1000.0;
        return Stream.of(
                Arguments.of(
                        afterDown,
                        metrics(processStart),
                        log(T0.plusSeconds(4)),
                        T0.plusSeconds(3),
                        StartSource.PROCESS_START_TIME),
                Arguments.of(afterDown, metrics(null), log(T0.plusSeconds(4)), T0.plusSeconds(4), StartSource.LOG),
                Arguments.of(afterDown, null, log(null), T0, StartSource.OBSERVED_DOWN),
                Arguments.of(firstSeen, metrics(null), log(null), T0, StartSource.FIRST_OBSERVED),
                Arguments.of(
                        restarted, null, log(T0.plusSeconds(9)), T0.plusSeconds(7), StartSource.PROCESS_START_TIME));
    }

    @ParameterizedTest
    @MethodSource("starts")
    void datedTakesTheProcessStartTimeThenTheLogThenWhatReadinessSaw(
            EngineStart start, @Nullable EngineMetricsSample first, LogFindings log, Instant at, StartSource source) {
        assertThat(StartRecorder.dated(start, first, log)).isEqualTo(new StartRecorder.Dated(at, source));
    }
}
