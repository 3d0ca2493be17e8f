package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Talking to a readygate started in a test: its client, its {@code /status}, waiting for {@code /readyz}. */
public final class ReadygateClients {

    private static final JsonMapper json = JsonMapper.builder().build();

    private ReadygateClients() {}

    /** A client to the readygate of {@code context}, on its random port. */
    public static WebTestClient client(ConfigurableApplicationContext context) {
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        return WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** {@code GET /status} as JSON. */
    public static JsonNode status(WebTestClient client) {
        return json.readTree(client.get()
                .uri("/status")
                .header("Accept", "application/json")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult()
                .getResponseBody());
    }

    /** {@code GET /actuator/prometheus}, the exposition Prometheus scrapes. */
    public static String prometheus(WebTestClient client) {
        return client.get()
                .uri("/actuator/prometheus")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    /** A JSON body read as a tree. */
    public static JsonNode json(byte[] body) {
        return json.readTree(body);
    }

    /**
     * Asserts that a probe route ({@code /readyz}, {@code /livez}, answered ahead of Spring's web stack) answers what
     * Actuator's own health group answers the long way: status, body and media type.
     *
     * @return the status both answered
     */
    public static int assertProbeIsActuators(WebTestClient client, String probe, String actuatorPath) {
        var fast = client.get().uri(probe).exchange().expectBody().returnResult();
        var actuator = client.get().uri(actuatorPath).exchange().expectBody().returnResult();
        assertThat(fast.getStatus().value())
                .as(probe)
                .isEqualTo(actuator.getStatus().value());
        assertThat(json(fast.getResponseBody())).as(probe).isEqualTo(json(actuator.getResponseBody()));
        assertThat(fast.getResponseHeaders().getContentType())
                .as(probe)
                .isEqualTo(actuator.getResponseHeaders().getContentType());
        return fast.getStatus().value();
    }

    /** The status {@code /readyz} answers now. */
    public static int readyz(WebTestClient client) {
        return client.get()
                .uri("/readyz")
                .exchange()
                .returnResult(String.class)
                .getStatus()
                .value();
    }

    /** Asserts that {@code /readyz/gateway} answers 503 now, for {@code reason}. */
    public static void gatewayNotReady(WebTestClient client, String reason) {
        client.get()
                .uri("/readyz/gateway")
                .exchange()
                .expectStatus()
                .isEqualTo(503)
                .expectBody()
                .jsonPath("$.details.reason")
                .isEqualTo(reason);
    }

    /** {@code /readyz}'s body, whatever its status. */
    public static String readyzBody(WebTestClient client) {
        byte[] body = client.get()
                .uri("/readyz")
                .exchange()
                .expectBody()
                .returnResult()
                .getResponseBodyContent();
        return body == null ? "" : new String(body, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Waits until {@code /readyz} answers 200. */
    public static void awaitReady(WebTestClient client) {
        await().atMost(Duration.ofSeconds(15)).until(() -> readyz(client) == 200);
    }
}
