package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.probe.MetricsEvidence.Part;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What each sequence of scrapes leaves lost, as a table. */
class MetricsEvidenceTests {

    static final Instant T = Instant.parse("2026-11-30T12:00:00Z");

    /** A scrape: a parsed sample, or a failure (null sample). */
    record Scrape(@Nullable EngineMetricsSample sample, String failure) {}

    static Scrape vllm() {
        return new Scrape(new EngineMetricsSample(1000.0, 0.0, 0.0, 10.0, 20.0, 3.0, Map.of()), "");
    }

    /** vLLM in Prometheus multiprocess mode: no process collector. */
    static Scrape multiprocess() {
        return new Scrape(new EngineMetricsSample(null, 0.0, 0.0, 10.0, 20.0, 3.0, Map.of()), "");
    }

    /** An engine without vLLM's success counter (llama.cpp's series, as their names map). */
    static Scrape noSuccessCounter() {
        return new Scrape(new EngineMetricsSample(null, 0.0, 0.0, 10.0, 20.0, null, Map.of()), "");
    }

    /** Another process's metrics: none of the series readygate reads. */
    static Scrape foreign() {
        return new Scrape(new EngineMetricsSample(null, null, null, null, null, null, Map.of()), "");
    }

    /** The process collector only (a proxy's, say): the engine's own series are gone. */
    static Scrape processOnly() {
        return new Scrape(new EngineMetricsSample(1000.0, null, null, null, null, null, Map.of()), "");
    }

    static Scrape failed(String why) {
        return new Scrape(null, why);
    }

    static Stream<Arguments> scrapes() {
        return Stream.of(
                Arguments.of(new Scrape[] {vllm()}, Set.of(), false),
                Arguments.of(new Scrape[] {multiprocess(), multiprocess()}, Set.of(), false),
                Arguments.of(new Scrape[] {noSuccessCounter()}, Set.of(), false),
                Arguments.of(new Scrape[] {vllm(), failed("body too large")}, Set.of(Part.METRICS), false),
                Arguments.of(new Scrape[] {failed("timed out"), vllm()}, Set.of(), true),
                Arguments.of(new Scrape[] {vllm(), foreign()}, Set.of(Part.METRICS), false),
                Arguments.of(new Scrape[] {foreign()}, Set.of(Part.METRICS), true),
                Arguments.of(new Scrape[] {vllm(), multiprocess()}, Set.of(Part.PROCESS_START_TIME), false),
                Arguments.of(
                        new Scrape[] {vllm(), processOnly()},
                        Set.of(Part.REQUEST_COUNTS, Part.GENERATION_TOKENS, Part.REQUEST_SUCCESS),
                        false),
                Arguments.of(new Scrape[] {processOnly()}, Set.of(Part.REQUEST_COUNTS, Part.GENERATION_TOKENS), false),
                Arguments.of(
                        new Scrape[] {vllm(), noSuccessCounter()},
                        Set.of(Part.PROCESS_START_TIME, Part.REQUEST_SUCCESS),
                        false),
                Arguments.of(new Scrape[] {vllm(), failed("reset"), vllm()}, Set.of(), false));
    }

    static MetricsEvidence fold(Scrape... scrapes) {
        MetricsEvidence evidence = MetricsEvidence.NONE;
        for (int i = 0; i < scrapes.length; i++) {
            Instant at = T.plusSeconds(i);
            Scrape scrape = scrapes[i];
            evidence = scrape.sample() == null
                    ? evidence.failed(scrape.failure(), at)
                    : evidence.scraped(scrape.sample(), at);
        }
        return evidence;
    }

    @ParameterizedTest
    @MethodSource("scrapes")
    void scrapesLoseWhatDetectionNeedsAndNothingAKnownDeploymentNeverHad(
            Scrape[] scrapes, Set<Part> lost, boolean firstScrapeMissed) {
        MetricsEvidence evidence = fold(scrapes);
        assertThat(evidence.lost().keySet()).containsExactlyInAnyOrderElementsOf(lost);
        assertThat(evidence.firstScrapeMissed()).isEqualTo(firstScrapeMissed);
        assertThat(evidence.usable()).isEqualTo(!lost.contains(Part.METRICS));
    }

    @org.junit.jupiter.api.Test
    void aLossKeepsWhenItBeganAndSaysWhyAndWhenThePartWasLastSeen() {
        MetricsEvidence evidence = fold(vllm(), multiprocess(), multiprocess());
        MetricsEvidence.Loss loss = evidence.lost().get(Part.PROCESS_START_TIME);
        assertThat(loss.since()).isEqualTo(T.plusSeconds(1));
        assertThat(loss.why()).isEqualTo("absent from /metrics (last seen " + T + ")");
        MetricsEvidence failing = fold(vllm(), failed("first"), failed("/metrics: timed out after 800ms"));
        assertThat(failing.lost().get(Part.METRICS))
                .isEqualTo(new MetricsEvidence.Loss(T.plusSeconds(1), "/metrics: timed out after 800ms"));
        assertThat(failing.lastUsableAt()).isEqualTo(T);
        assertThat(fold(processOnly()).lost().get(Part.REQUEST_COUNTS).why())
                .isEqualTo("absent from every scrape of this start");
    }
}
