package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Settings for what the reference leaves unconfirmed: which paths the API key guards, and the error shape. */
class EngineApiKeyAndErrorShapeTests {

    @TempDir
    Path workDir;

    @Test
    void apiKeyGuardsV1PathsOnlyByDefault() {
        try (RunningSimulator running = RunningSimulator.serving(workDir, "api-key=s3cret", "preload.enabled=false")) {
            running.engine()
                    .get()
                    .uri("/v1/models")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized()
                    .expectBody()
                    .json("{\"error\":\"Unauthorized\"}");
            running.engine()
                    .get()
                    .uri("/v1/models")
                    .header("Authorization", "Bearer wrong")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
            running.engine()
                    .get()
                    .uri("/v1/models")
                    .header("Authorization", "Bearer s3cret")
                    .exchange()
                    .expectStatus()
                    .isOk();
            running.engine().get().uri("/health").exchange().expectStatus().isOk();
            running.engine().get().uri("/metrics").exchange().expectStatus().isOk();
            // As vLLM logs it (the real line kept 'hf_token': 'hf_...' whole): readygate redacts it.
            assertThat(running.engineLog()).contains("'api_key': ['s3cret']");
        }
    }

    @Test
    void apiKeyCanGuardEveryPath() {
        try (RunningSimulator running = RunningSimulator.serving(
                workDir, "api-key=s3cret", "api-key-protects-health=true", "preload.enabled=false")) {
            running.engine().get().uri("/health").exchange().expectStatus().isUnauthorized();
            running.engine()
                    .get()
                    .uri("/health")
                    .header("Authorization", "Bearer s3cret")
                    .exchange()
                    .expectStatus()
                    .isOk();
        }
    }

    @Test
    void flatErrorShapeIsTheOlderVllmOne() {
        try (RunningSimulator running =
                RunningSimulator.serving(workDir, "error-shape=flat", "preload.enabled=false")) {
            byte[] body = running.engine()
                    .post()
                    .uri("/v1/completions")
                    .header("Content-Type", "application/json")
                    .bodyValue("{}")
                    .exchange()
                    .expectStatus()
                    .isBadRequest()
                    .expectBody()
                    .returnResult()
                    .getResponseBody();
            JsonNode error = Sse.JSON.readTree(body);
            assertThat(error.get("object").asString()).isEqualTo("error");
            assertThat(error.get("code").intValue()).isEqualTo(400);
            assertThat(error.has("error")).isFalse();
        }
    }

    @Test
    void openaiOnlyServesNoneOfVllmsOwnEndpoints() {
        try (RunningSimulator running =
                RunningSimulator.serving(workDir, "openai-only=true", "preload.enabled=false")) {
            for (String path : new String[] {"/version", "/metrics", "/ping", "/load"}) {
                running.engine().get().uri(path).exchange().expectStatus().isNotFound();
            }
            running.engine()
                    .post()
                    .uri("/tokenize")
                    .header("Content-Type", "application/json")
                    .bodyValue("{\"prompt\":\"hi\"}")
                    .exchange()
                    .expectStatus()
                    .isNotFound();
            running.engine()
                    .get()
                    .uri("/v1/models")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.data[0].id")
                    .isEqualTo("Qwen/Qwen3-0.6B")
                    .jsonPath("$.data[0].max_model_len")
                    .doesNotExist();
            JsonNode answer = running.postJson("/v1/completions", java.util.Map.of("prompt", "hi", "max_tokens", 2));
            assertThat(answer.at("/usage/completion_tokens").intValue()).isPositive();
        }
    }
}
