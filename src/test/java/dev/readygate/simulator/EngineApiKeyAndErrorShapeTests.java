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
            assertThat(running.engineLog())
                    .contains("'api_key': ['<redacted>']")
                    .doesNotContain("s3cret");
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
}
