package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

/**
 * vLLM's sleep mode as the simulator serves it with {@code sleep-mode} ({@code --enable-sleep-mode} and {@code
 * VLLM_SERVER_DEV_MODE=1}): the dev endpoints and their answers, a completion queued while asleep, {@code
 * vllm:engine_sleep_state}, a partial wake, level 2's garbage weights until {@code reload_weights}, {@code
 * the GPU memory and the log lines.
 */
class SleepModeTests {

    private static final Map<String, Object> COMPLETION =
            Map.of("model", "Qwen/Qwen3-0.6B", "prompt", "The capital of France is", "max_tokens", 8, "temperature", 0);

    private static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @TempDir
    Path workDir;

    private RunningSimulator running;

    @AfterEach
    void stop() {
        if (running != null) {
            running.close();
        }
    }

    private RunningSimulator sleepMode(String... overrides) {
        String[] all = new String[overrides.length + 2];
        all[0] = "preload.enabled=false";
        all[1] = "sleep-mode=true";
        System.arraycopy(overrides, 0, all, 2, overrides.length);
        running = RunningSimulator.serving(workDir, all);
        return running;
    }

    @Test
    void theDevEndpointsAnswerAsVllmDoes() {
        sleepMode();
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":false}");

        running.engine()
                .post()
                .uri("/sleep?level=1")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .isEmpty();
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":true}");
        // /health and /v1/models answer as usual while asleep.
        running.engine().get().uri("/health").exchange().expectStatus().isOk();
        running.engine().get().uri("/v1/models").exchange().expectStatus().isOk();
        // A second sleep changes nothing: vLLM warns.
        running.engine().post().uri("/sleep").exchange().expectStatus().isOk();

        running.engine()
                .post()
                .uri("/wake_up")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .isEmpty();
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":false}");
        // The level is read from the query string only; one that int() refuses is Starlette's plain 500.
        running.engine()
                .post()
                .uri("/sleep?level=deep")
                .exchange()
                .expectStatus()
                .isEqualTo(500)
                .expectBody(String.class)
                .isEqualTo("Internal Server Error");
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":false}");

        assertThat(running.engineLog())
                .contains("[abstract.py:302] Executor is already sleeping.")
                .contains("wake up the engine with tags: None")
                .contains("seconds to wake up tags {'weights', 'kv_cache'}.");
    }

    @Test
    void withoutSleepModeTheEndpointsAreUnknownPaths() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false");
        for (String path : new String[] {"/sleep", "/wake_up", "/collective_rpc"}) {
            running.engine()
                    .post()
                    .uri(path)
                    .exchange()
                    .expectStatus()
                    .isNotFound()
                    .expectBody(String.class)
                    .isEqualTo("{\"detail\":\"Not Found\"}");
        }
        running.engine().get().uri("/is_sleeping").exchange().expectStatus().isNotFound();
        // The gauge is registered whether or not sleep mode is on: awake.
        assertThat(running.metricsText())
                .contains(
                        "vllm:engine_sleep_state{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\",sleep_state=\"awake\"} 1.0");
    }

    @Test
    void aCompletionSentWhileAsleepIsAnsweredOnlyOnceAwake() {
        sleepMode();
        String awake = text(running.postJson("/v1/completions", COMPLETION));
        post("/sleep?level=1");

        CompletableFuture<HttpResponse<String>> queued = queuedCompletion();
        assertThat(queued).isNotDone();

        post("/wake_up");
        HttpResponse<String> answered =
                queued.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join();
        assertThat(answered.statusCode()).isEqualTo(200);
        assertThat(text(Sse.JSON.readTree(answered.body()))).isEqualTo(awake);
    }

    @Test
    void theSleepStateGaugeHasOneSeriesPerStateTheCurrentOneAtOne() {
        sleepMode();
        assertThat(sleepState()).containsExactly(1.0, 0.0, 0.0);
        post("/sleep?level=1");
        assertThat(sleepState()).containsExactly(0.0, 1.0, 0.0);
        post("/wake_up");
        assertThat(sleepState()).containsExactly(1.0, 0.0, 0.0);
        post("/sleep?level=2");
        assertThat(sleepState()).containsExactly(0.0, 0.0, 1.0);
        assertThat(running.metricsText())
                .contains("# TYPE vllm:engine_sleep_state gauge\n")
                .contains(
                        "vllm:engine_sleep_state{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\",sleep_state=\"discard_all\"}"
                                + " 1.0\n");
    }

    @Test
    void aPartialWakeStillSleepsAndServesNothing() {
        sleepMode();
        post("/sleep?level=1");
        post("/wake_up?tags=weights");
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":true}");
        assertThat(sleepState()).containsExactly(0.0, 1.0, 0.0);
        assertThat(running.ableToServe()).isFalse();
        CompletableFuture<HttpResponse<String>> queued = queuedCompletion();
        assertThat(queued).isNotDone();
        // Waking a tag that is awake already wakes nothing (vLLM warns).
        post("/wake_up?tags=weights");
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":true}");

        post("/wake_up?tags=kv_cache");
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":false}");
        assertThat(queued.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS)
                        .join()
                        .statusCode())
                .isEqualTo(200);
        assertThat(running.engineLog())
                .contains("wake up the engine with tags: ['weights']")
                .contains("seconds to wake up tags ['weights'].")
                .contains("Tag weights is not in sleeping tags {'kv_cache'}")
                .contains("seconds to wake up tags ['kv_cache'].");
    }

    @Test
    void levelOneWeightsComeBackIntactLevelTwoAnswerGarbageUntilReloadWeights() {
        sleepMode();
        String before = text(running.postJson("/v1/completions", COMPLETION));

        post("/sleep?level=1");
        post("/wake_up");
        assertThat(text(running.postJson("/v1/completions", COMPLETION))).isEqualTo(before);
        assertThat(running.ableToServe()).isTrue();

        post("/sleep?level=2");
        post("/wake_up");
        assertThat(text(running.postJson("/v1/completions", COMPLETION))).isNotEqualTo(before);
        assertThat(running.ableToServe()).isFalse();
        // /health says nothing of it.
        running.engine().get().uri("/health").exchange().expectStatus().isOk();

        JsonNode reload = running.postJson("/collective_rpc", Map.of("method", "reload_weights"));
        assertThat(reload.toString()).isEqualTo("{\"results\":[null]}");
        assertThat(text(running.postJson("/v1/completions", COMPLETION))).isEqualTo(before);
        assertThat(running.ableToServe()).isTrue();

        running.engine()
                .post()
                .uri("/collective_rpc")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("args", java.util.List.of()))
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody(String.class)
                .isEqualTo("{\"detail\":\"Missing 'method' in request body\"}");
    }

    @Test
    void wakeCorruptsChangesNothingAwakeAndMakesALevelOneWakeServeGarbageUntilReloadWeights() {
        sleepMode();
        String before = text(running.postJson("/v1/completions", COMPLETION));
        running.fault("wake-corrupts", false);
        // Awake, the fault shows nothing.
        assertThat(text(running.postJson("/v1/completions", COMPLETION))).isEqualTo(before);
        assertThat(running.ableToServe()).isTrue();

        running.sleep(1);
        running.wakeUp();
        assertThat(isSleeping()).isEqualTo("{\"is_sleeping\":false}");
        running.engine().get().uri("/health").exchange().expectStatus().isOk();
        assertThat(text(running.postJson("/v1/completions", COMPLETION))).isNotEqualTo(before);
        assertThat(running.ableToServe()).isFalse();

        running.postJson("/collective_rpc", Map.of("method", "reload_weights"));
        assertThat(text(running.postJson("/v1/completions", COMPLETION))).isEqualTo(before);
        assertThat(running.ableToServe()).isTrue();
    }

    @Test
    void asleepTheEngineHoldsOnlyItsContextAndTheLogSaysWhatWasFreed() {
        sleepMode();
        GpuMemoryModel gpu = running.simulator.gpu();
        long serving = gpu.byOwner().get("engine");
        post("/sleep?level=1");
        // 520 MiB of CUDA context (and graphs) stay; the weights and the KV cache are freed.
        assertThat(gpu.byOwner().get("engine")).isEqualTo(520L).isLessThan(serving);
        post("/wake_up?tags=weights");
        assertThat(gpu.byOwner().get("engine")).isEqualTo(520L + Math.round(1.1214 * 1024));
        post("/wake_up?tags=kv_cache");
        assertThat(gpu.byOwner().get("engine")).isEqualTo(serving);

        String log = running.engineLog();
        assertThat(log)
                .containsPattern(
                        "\\(EngineCore pid=\\d+\\) INFO .* \\[cumem\\.py:\\d+] CuMemAllocator: sleep freed 8\\.12 GiB"
                                + " memory in total, of which 1\\.12 GiB is backed up in CPU and the rest 7\\.00 GiB is discarded"
                                + " directly\\.")
                .containsPattern(
                        "\\(EngineCore pid=\\d+\\) INFO .* \\[gpu_worker\\.py:\\d+] Sleep mode freed 8\\.12 GiB memory,"
                                + " 0\\.51 GiB memory is still in use\\.")
                .containsPattern("\\(EngineCore pid=\\d+\\) INFO .* It took \\d+\\.\\d{6} seconds to fall asleep\\.");
    }

    /**
     * What a sleep does with the requests in flight, as vLLM's {@code /sleep?mode=} says ({@code AsyncLLM.sleep(level,
     * mode="abort")}): by default a stream under way ends at once with {@code finish_reason} {@code abort} and
     * {@code [DONE]}; with {@code mode=wait} the sleep waits for it to finish whole; with {@code mode=keep} it is frozen
     * and finishes whole after the wake. An unknown mode is a 500.
     */
    @Test
    void aSleepAbortsTheRequestsInFlightByDefaultWaitsForThemOrKeepsThemAsAsked() {
        sleepMode("timing.decode-per-token=50ms");
        Map<String, Object> stream = Map.of(
                "model",
                "Qwen/Qwen3-0.6B",
                "prompt",
                "Tell me about the sea.",
                "max_tokens",
                40,
                "ignore_eos",
                true,
                "stream",
                true);

        CompletableFuture<HttpResponse<String>> aborted = inFlight(stream);
        post("/sleep?level=1");
        String abortedBody = aborted.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS)
                .join()
                .body();
        assertThat(abortedBody).contains("\"finish_reason\":\"abort\"").endsWith("data: [DONE]\n\n");
        assertThat(abortedBody.split("\"finish_reason\":null").length - 1).isBetween(1, 39);
        post("/wake_up");

        CompletableFuture<HttpResponse<String>> waited = inFlight(stream);
        post("/sleep?level=1&mode=wait");
        assertThat(waited).isDone();
        assertThat(waited.join().body())
                .contains("\"finish_reason\":\"length\"")
                .doesNotContain("abort");
        post("/wake_up");

        CompletableFuture<HttpResponse<String>> kept = inFlight(stream);
        post("/sleep?level=1&mode=keep");
        assertThat(kept).isNotDone();
        post("/wake_up");
        assertThat(kept.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS)
                        .join()
                        .body())
                .contains("\"finish_reason\":\"length\"")
                .doesNotContain("abort");

        running.engine()
                .post()
                .uri("/sleep?level=1&mode=later")
                .exchange()
                .expectStatus()
                .isEqualTo(500);
    }

    /** Sends {@code body} and waits until the engine counts it as running. */
    private CompletableFuture<HttpResponse<String>> inFlight(Map<String, Object> body) {
        CompletableFuture<HttpResponse<String>> sent = send(body);
        await().atMost(Duration.ofSeconds(10)).until(() -> running.requestsRunning() == 1.0);
        return sent;
    }

    /** Sends a completion and waits until the engine counts it as waiting. */
    private CompletableFuture<HttpResponse<String>> queuedCompletion() {
        CompletableFuture<HttpResponse<String>> queued = send(COMPLETION);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> running.metricsText()
                        .contains("vllm:num_requests_waiting{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 1.0"));
        return queued;
    }

    private CompletableFuture<HttpResponse<String>> send(Map<String, Object> body) {
        return http.sendAsync(
                HttpRequest.newBuilder(URI.create(running.baseUrl() + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(Sse.JSON.writeValueAsString(body)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private void post(String uri) {
        running.engine().post().uri(uri).exchange().expectStatus().isOk();
    }

    private String isSleeping() {
        return running.engine()
                .get()
                .uri("/is_sleeping")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    /** {@code vllm:engine_sleep_state}'s awake, weights_offloaded and discard_all values. */
    private java.util.List<Double> sleepState() {
        String metrics = running.metricsText();
        return java.util.stream.Stream.of("awake", "weights_offloaded", "discard_all")
                .map(state -> {
                    String series = "vllm:engine_sleep_state{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\",sleep_state=\""
                            + state + "\"} ";
                    int at = metrics.indexOf(series);
                    assertThat(at).as(series).isNotNegative();
                    return Double.parseDouble(metrics.substring(at + series.length(), metrics.indexOf('\n', at)));
                })
                .toList();
    }

    private static String text(JsonNode completion) {
        return completion.get("choices").get(0).get("text").asString();
    }
}
