package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * A saturated engine with no fault, at readygate's defaults: the simulator at its concurrency limit (every sequence of
 * the batch taken, requests waiting, tokens flowing). Its progress is evidence that it is busy, not broken: no flap,
 * no second of false not-ready. (llama-server with one slot and a long request: {@code LlamaServerIT}.)
 */
class SaturatedEngineTests {

    @TempDir
    Path workDir;

    @Test
    void aSaturatedEngineIsBusyNeverBroken() {
        List<ReadyEngineTests.Change> saturatedChanges = new CopyOnWriteArrayList<>();
        try (RunningSimulator saturated = RunningSimulator.serving(
                        workDir.resolve("saturated"),
                        "preload.enabled=false",
                        "model.max-num-seqs=4",
                        "timing.decode-per-token=5ms");
                ConfigurableApplicationContext gate =
                        ReadyEngineTests.readygate(saturated, workDir.resolve("saturated-state"), saturatedChanges)) {
            WebTestClient gateClient = ReadygateClients.client(gate);
            ReadyEngineTests.awaitReady(gateClient);
            WebClient web = WebClient.create(saturated.baseUrl());
            AtomicBoolean stop = new AtomicBoolean();
            // Twice as many long requests (2 s each) as the batch holds: every sequence taken, a queue, tokens flowing.
            Disposable load = Flux.range(0, 8)
                    .flatMap(
                            worker -> Mono.defer(() -> web.post()
                                            .uri("/v1/completions")
                                            .bodyValue(Map.of(
                                                    "prompt", "hi " + worker, "max_tokens", 400, "ignore_eos", true))
                                            .retrieve()
                                            .toBodilessEntity()
                                            .then()
                                            .onErrorResume(error -> Mono.empty()))
                                    .repeat(() -> !stop.get()),
                            8)
                    .subscribe();
            Instant from = Instant.now();
            try {
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> ReadygateClients.status(gateClient)
                                        .at("/engine/metrics/requestsWaiting")
                                        .asDouble(0)
                                > 0);
                await().during(Duration.ofSeconds(20))
                        .atMost(Duration.ofSeconds(25))
                        .until(() -> ReadyEngineTests.outAfter(saturatedChanges, from) == null);
            } finally {
                stop.set(true);
                load.dispose();
            }
            // No flap and no false not-ready second: busy is not broken.
            assertThat(ReadyEngineTests.outAfter(saturatedChanges, from)).isNull();
            JsonNode status = ReadygateClients.status(gateClient);
            assertThat(status.path("state").asString()).isEqualTo("ready");
            assertThat(status.at("/probes/generation/last/outcome").asString()).isIn("passed", "busy");
        }
    }
}
