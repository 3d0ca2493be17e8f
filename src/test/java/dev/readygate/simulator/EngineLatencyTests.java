package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Latency seen over HTTP. Only lower bounds are asserted (a timer never fires early), so a loaded machine cannot
 * make these fail; the exact arithmetic is in {@link LatencyModelTests}.
 */
class EngineLatencyTests {

    @TempDir
    Path workDir;

    static Duration timed(Runnable call) {
        long started = System.nanoTime();
        call.run();
        return Duration.ofNanos(System.nanoTime() - started);
    }

    @Test
    void longPromptsTakeLongerToTheFirstToken() {
        try (RunningSimulator running =
                RunningSimulator.serving(workDir, "preload.enabled=false", "timing.prefill-per-token=2ms")) {
            Duration elapsed = timed(
                    () -> running.postJson("/v1/completions", Map.of("prompt", " the".repeat(400), "max_tokens", 1)));
            assertThat(elapsed).isGreaterThanOrEqualTo(Duration.ofMillis(800));
            // The same prompt again is served from the prefix cache: only the last partial block is prefilled.
            double hits = Metrics.value(running.metricsText(), "vllm:prefix_cache_hits_total");
            running.postJson("/v1/completions", Map.of("prompt", " the".repeat(400), "max_tokens", 1));
            assertThat(Metrics.value(running.metricsText(), "vllm:prefix_cache_hits_total") - hits)
                    .isEqualTo(400);
        }
    }

    @Test
    void firstRequestsAfterAStartPayTheWarmupPenalty() {
        try (RunningSimulator running = RunningSimulator.serving(
                workDir, "preload.enabled=false", "timing.warmup-requests=1", "timing.warmup-penalty=600ms")) {
            Duration first = timed(() -> running.postJson("/v1/completions", Map.of("prompt", "hi", "max_tokens", 1)));
            assertThat(first).isGreaterThanOrEqualTo(Duration.ofMillis(600));
            running.restartAndAwait(StartupPath.COLD);
            Duration afterRestart =
                    timed(() -> running.postJson("/v1/completions", Map.of("prompt", "hi", "max_tokens", 1)));
            assertThat(afterRestart).isGreaterThanOrEqualTo(Duration.ofMillis(600));
        }
    }

    @Test
    void engineIsAbleToServeOnceItsWarmupRequestsWereAdmitted() {
        try (RunningSimulator running = RunningSimulator.serving(
                workDir, "preload.enabled=false", "timing.warmup-requests=2", "timing.warmup-penalty=10ms")) {
            assertThat(running.simulator.ableToServe()).isFalse();
            assertThat(running.simulator.ableToServeSince()).isNull();
            running.postJson("/v1/completions", Map.of("prompt", "hi", "max_tokens", 1));
            assertThat(running.simulator.ableToServe()).isFalse();
            running.postJson("/v1/completions", Map.of("prompt", "hi", "max_tokens", 1));
            assertThat(running.simulator.ableToServe()).isTrue();
            assertThat(running.simulator.ableToServeSince())
                    .isAfter(running.simulator.engine().listeningSince());
        }
    }

    @Test
    void streamedTokensArrivePacedByTheDecodeTime() {
        try (RunningSimulator running =
                RunningSimulator.serving(workDir, "preload.enabled=false", "timing.decode-per-token=25ms")) {
            Duration elapsed = timed(() ->
                    running.postJson("/v1/completions", Map.of("prompt", "hi", "max_tokens", 21, "ignore_eos", true)));
            assertThat(elapsed).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        }
    }
}
