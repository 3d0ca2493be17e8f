package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/** Every simulator fault, seen from a client over real HTTP (and raw TCP where HTTP hides the difference). */
class EngineFaultTests {

    @TempDir
    static Path workDir;

    static RunningSimulator running;

    static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeAll
    static void start() {
        running = RunningSimulator.serving(
                workDir,
                "preload.enabled=false",
                "timing.decode-per-token=5ms",
                "faults.slow-factor=20",
                "faults.truncate-prompt-limit=256",
                "faults.kv-too-small-tokens=512");
    }

    @AfterAll
    static void stop() {
        running.close();
    }

    @AfterEach
    void clearFaults() {
        running.simulator.faults().clear();
    }

    static void fault(Fault fault) {
        running.simulator.setFault(fault, true, FaultSet.Scope.INFERENCE);
    }

    static void faultEverywhere(Fault fault) {
        running.simulator.setFault(fault, true, FaultSet.Scope.ALL);
    }

    static HttpResponse<String> post(String path, String body, Duration timeout) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + running.properties.port() + path))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> get(String path, Duration timeout) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + running.properties.port() + path))
                .timeout(timeout)
                .GET()
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    static final String COMPLETION = "{\"prompt\":\"The capital of France is\",\"max_tokens\":4,\"ignore_eos\":true}";
    static final String STREAM = "{\"prompt\":\"The capital of France is\",\"max_tokens\":6,\"ignore_eos\":true,"
            + "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";

    @Test
    void hangAcceptsInferenceRequestsAndNeverAnswersWhileHealthStaysUp() throws Exception {
        fault(Fault.HANG);
        assertThatExceptionOfType(HttpTimeoutException.class)
                .isThrownBy(() -> post("/v1/completions", COMPLETION, Duration.ofMillis(700)));
        assertThat(get("/health", Duration.ofSeconds(2)).statusCode()).isEqualTo(200);
        assertThat(get("/v1/models", Duration.ofSeconds(2)).statusCode()).isEqualTo(200);
    }

    @Test
    void hangEverywhereAlsoHangsHealth() {
        faultEverywhere(Fault.HANG);
        assertThatExceptionOfType(HttpTimeoutException.class).isThrownBy(() -> get("/health", Duration.ofMillis(700)));
    }

    @Test
    void stallStreamStopsMidStreamWithoutDone() throws Exception {
        fault(Fault.STALL_STREAM);
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + running.properties.port() + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(STREAM))
                .build();
        HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        String received = readFor(response.body(), Duration.ofMillis(800));
        assertThat(Sse.events(received)).hasSize(2).noneMatch(event -> event.equals("[DONE]"));
        // The stalled request still counts as running, and generated tokens stop rising: a stall, not load.
        assertThat(metric("vllm:num_requests_running")).isEqualTo(1);
        double generated = metric("vllm:generation_tokens_total");
        await().during(Duration.ofMillis(300))
                .atMost(Duration.ofSeconds(2))
                .until(() -> metric("vllm:generation_tokens_total") == generated);
        response.body().close();
    }

    static double metric(String name) throws Exception {
        return Metrics.value(get("/metrics", Duration.ofSeconds(2)).body(), name);
    }

    /** Reads what arrives within {@code window}, then gives up (the stream is expected to stall). */
    static String readFor(InputStream in, Duration window) throws Exception {
        StringBuilder out = new StringBuilder();
        Thread reader = Thread.ofVirtual().start(() -> {
            byte[] buffer = new byte[4096];
            try {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    synchronized (out) {
                        out.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
                    }
                }
            } catch (IOException ex) {
                // Closed by the test after the window.
            }
        });
        reader.join(window);
        synchronized (out) {
            return out.toString();
        }
    }

    @Test
    void slowStretchesLatencyButAnswersCorrectly() throws Exception {
        fault(Fault.SLOW);
        long started = System.nanoTime();
        HttpResponse<String> response = post("/v1/completions", COMPLETION, Duration.ofSeconds(10));
        long slow = System.nanoTime() - started;
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(Sse.JSON
                        .readTree(response.body())
                        .at("/usage/completion_tokens")
                        .intValue())
                .isEqualTo(4);
        // Lower bound only: 3 inter-token gaps of 5 ms x 20 cannot be faster than 300 ms.
        assertThat(Duration.ofNanos(slow)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }

    @Test
    void error5xxAnswers500InVllmsErrorShape() throws Exception {
        fault(Fault.ERROR_5XX);
        HttpResponse<String> response = post("/v1/completions", COMPLETION, Duration.ofSeconds(5));
        assertThat(response.statusCode()).isEqualTo(500);
        JsonNode error = Sse.JSON.readTree(response.body());
        assertThat(error.at("/error/code").intValue()).isEqualTo(500);
        assertThat(error.at("/error/type").asString()).isEqualTo("InternalServerError");
        assertThat(get("/health", Duration.ofSeconds(2)).statusCode()).isEqualTo(200);
    }

    @Test
    void busy429AnswersTooManyRequests() throws Exception {
        fault(Fault.BUSY_429);
        HttpResponse<String> response = post("/v1/completions", COMPLETION, Duration.ofSeconds(5));
        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(Sse.JSON.readTree(response.body()).at("/error/code").intValue())
                .isEqualTo(429);
    }

    @Test
    void malformedJsonAnswers200WithABodyThatIsNotJson() throws Exception {
        fault(Fault.MALFORMED_JSON);
        HttpResponse<String> response = post("/v1/completions", COMPLETION, Duration.ofSeconds(5));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThatExceptionOfType(JacksonException.class).isThrownBy(() -> Sse.JSON.readTree(response.body()));
        HttpResponse<String> stream = post("/v1/completions", STREAM, Duration.ofSeconds(5));
        List<String> events = Sse.events(stream.body());
        assertThatExceptionOfType(JacksonException.class).isThrownBy(() -> Sse.JSON.readTree(events.getFirst()));
        assertThatNoException()
                .isThrownBy(() -> Sse.JSON.readTree(
                        get("/v1/models", Duration.ofSeconds(2)).body()));
    }

    @Test
    void malformedJsonEverywhereAlsoBreaksModels() throws Exception {
        faultEverywhere(Fault.MALFORMED_JSON);
        HttpResponse<String> models = get("/v1/models", Duration.ofSeconds(2));
        assertThat(models.statusCode()).isEqualTo(200);
        assertThatExceptionOfType(JacksonException.class).isThrownBy(() -> Sse.JSON.readTree(models.body()));
        assertThat(get("/health", Duration.ofSeconds(2)).statusCode()).isEqualTo(200);
    }

    @Test
    void truncatedSseClosesTheConnectionMidEvent() {
        fault(Fault.TRUNCATED_SSE);
        assertThatExceptionOfType(IOException.class)
                .isThrownBy(() -> post("/v1/completions", STREAM, Duration.ofSeconds(5)));
        assertThatExceptionOfType(IOException.class)
                .isThrownBy(() -> post("/v1/completions", COMPLETION, Duration.ofSeconds(5)));
    }

    @Test
    void resetSendsATcpResetInsteadOfAnAnswer() throws Exception {
        fault(Fault.RESET);
        try (var socket = new java.net.Socket("127.0.0.1", running.properties.port())) {
            socket.setSoTimeout(5000);
            String request = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + COMPLETION.length() + "\r\n\r\n" + COMPLETION;
            socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
            assertThatExceptionOfType(SocketException.class)
                    .isThrownBy(() -> socket.getInputStream().read())
                    .withMessageContaining("reset");
        }
        assertThat(get("/health", Duration.ofSeconds(2)).statusCode()).isEqualTo(200);
    }

    @Test
    void wrongWeightsAnswersTheCanaryDifferently() throws Exception {
        String canary = Sse.JSON.writeValueAsString(EngineApiContractTests.canary());
        JsonNode right = Sse.JSON.readTree(
                post("/v1/completions", canary, Duration.ofSeconds(5)).body());
        fault(Fault.WRONG_WEIGHTS);
        JsonNode wrong = Sse.JSON.readTree(
                post("/v1/completions", canary, Duration.ofSeconds(5)).body());
        assertThat(wrong.at("/choices/0/token_ids")).isNotEqualTo(right.at("/choices/0/token_ids"));
        assertThat(wrong.at("/choices/0/finish_reason").asString()).isEqualTo("length");
    }

    @Test
    void truncatePromptDropsTokensAndReportsTheSmallerCount() throws Exception {
        fault(Fault.TRUNCATE_PROMPT);
        String body =
                Sse.JSON.writeValueAsString(Map.of("prompt", " the".repeat(400), "max_tokens", 2, "ignore_eos", true));
        JsonNode answer = Sse.JSON.readTree(
                post("/v1/completions", body, Duration.ofSeconds(5)).body());
        assertThat(answer.at("/usage/prompt_tokens").intValue()).isEqualTo(256);
    }

    @Test
    void kvTooSmallFailsLongRequestsAndServesShortOnes() throws Exception {
        fault(Fault.KV_TOO_SMALL);
        String longRequest = Sse.JSON.writeValueAsString(Map.of("prompt", " the".repeat(500), "max_tokens", 64));
        HttpResponse<String> failed = post("/v1/completions", longRequest, Duration.ofSeconds(5));
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(Sse.JSON.readTree(failed.body()).at("/error/message").asString())
                .contains("Insufficient KV cache blocks");
        assertThat(post("/v1/completions", COMPLETION, Duration.ofSeconds(5)).statusCode())
                .isEqualTo(200);
    }

    @Test
    void generationFailsKeepsHealthUpButFailsCompletions() throws Exception {
        fault(Fault.GENERATION_FAILS);
        assertThat(get("/health", Duration.ofSeconds(2)).statusCode()).isEqualTo(200);
        assertThat(post("/v1/completions", COMPLETION, Duration.ofSeconds(5)).statusCode())
                .isEqualTo(500);
        List<JsonNode> events = Sse.jsonEvents(
                post("/v1/completions", STREAM, Duration.ofSeconds(5)).body());
        assertThat(events)
                .anySatisfy(
                        event -> assertThat(event.at("/error/code").intValue()).isEqualTo(500));
    }

    @Test
    void engineDeadAnswers503OnHealthAndFailsRequests() throws Exception {
        fault(Fault.ENGINE_DEAD);
        assertThat(get("/health", Duration.ofSeconds(2)).statusCode()).isEqualTo(503);
        assertThat(get("/ping", Duration.ofSeconds(2)).statusCode()).isEqualTo(503);
        HttpResponse<String> response = post("/v1/completions", COMPLETION, Duration.ofSeconds(5));
        assertThat(response.statusCode()).isEqualTo(500);
        assertThat(response.body()).contains("EngineCore encountered an issue");
    }

    @Test
    void faultsThatBlockServingMakeTheEngineUnableToServeUntilCleared() {
        assertThat(running.simulator.ableToServe()).isTrue();
        fault(Fault.GENERATION_FAILS);
        assertThat(running.simulator.ableToServe()).isFalse();
        assertThat(running.simulator.ableToServeSince()).isNull();
        running.simulator.setFault(Fault.GENERATION_FAILS, false, FaultSet.Scope.INFERENCE);
        assertThat(running.simulator.ableToServeSince())
                .isAfter(running.simulator.engine().listeningSince());
        fault(Fault.SLOW);
        assertThat(running.simulator.ableToServe()).isTrue();
    }
}
