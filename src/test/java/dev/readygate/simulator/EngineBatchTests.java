package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
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
            CompletableFuture<Instant> first = CompletableFuture.supplyAsync(
                    () -> {
                        running.postJson("/v1/completions", completion(40));
                        return Instant.now();
                    },
                    clients);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> Metrics.value(running.metricsText(), "vllm:num_requests_running") == 1);
            CompletableFuture<Instant> second = CompletableFuture.supplyAsync(
                    () -> {
                        running.postJson("/v1/completions", completion(1));
                        return Instant.now();
                    },
                    clients);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> Metrics.value(running.metricsText(), "vllm:num_requests_waiting") == 1);
            assertThat(Metrics.value(running.metricsText(), "vllm:num_requests_running"))
                    .isEqualTo(1);
            // The waiting one runs only once the first is done.
            assertThat(second.join()).isAfterOrEqualTo(first.join());
            assertThat(Metrics.value(running.metricsText(), "vllm:num_requests_waiting"))
                    .isZero();
            assertThat(Metrics.value(running.metricsText(), "vllm:num_requests_running"))
                    .isZero();
        }
    }
}
