package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine's batch over HTTP: at most {@code max-num-seqs} sequences run, the others wait their turn. */
class EngineBatchTests {

    @TempDir
    Path workDir;

    static Map<String, Object> completion(int tokens) {
        return Map.of("prompt", "hi", "max_tokens", tokens, "min_tokens", tokens, "ignore_eos", true);
    }

    @Test
    void aRequestBeyondMaxNumSeqsWaitsInTheQueueUntilASequenceIsFree() {
        try (RunningSimulator running = RunningSimulator.serving(
                        workDir, "preload.enabled=false", "model.max-num-seqs=1", "timing.decode-per-token=20ms");
                ExecutorService clients = Executors.newFixedThreadPool(2)) {
            CompletableFuture<Void> first =
                    CompletableFuture.runAsync(() -> running.postJson("/v1/completions", completion(40)), clients);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> Metrics.value(running.metricsText(), "vllm:num_requests_running") == 1);
            CompletableFuture<Void> second =
                    CompletableFuture.runAsync(() -> running.postJson("/v1/completions", completion(1)), clients);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> Metrics.value(running.metricsText(), "vllm:num_requests_waiting") == 1);
            assertThat(Metrics.value(running.metricsText(), "vllm:num_requests_running"))
                    .isEqualTo(1);
            // The waiting one runs only once the first is done: the engine counted both as finished when the second
            // answered (had they run together, the one-token request would have finished 0.8 s before the other).
            // The engine's own count, not the clients' clocks: a client thread may read its answer late.
            second.join();
            assertThat(Metrics.value(running.metricsText(), "vllm:request_success_total"))
                    .isEqualTo(2);
            first.join();
            assertThat(Metrics.value(running.metricsText(), "vllm:num_requests_waiting"))
                    .isZero();
            assertThat(Metrics.value(running.metricsText(), "vllm:num_requests_running"))
                    .isZero();
        }
    }
}
