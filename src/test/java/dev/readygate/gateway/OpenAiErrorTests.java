package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@link OpenAiError}: statuses, and bodies in OpenAI's shape whatever the message holds. */
class OpenAiErrorTests {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "INVALID_REQUEST, 400, invalid_request_error, invalid_request",
        "ROUTE_NOT_PROXIED, 404, invalid_request_error, route_not_proxied",
        "REQUEST_TOO_LARGE, 413, invalid_request_error, request_too_large",
        "ENGINE_SATURATED, 429, rate_limit_error, engine_saturated",
        "ENGINE_NOT_READY, 503, server_error, engine_not_ready",
        "ENGINE_DRAINING, 503, server_error, engine_draining",
        "ENGINE_UNREACHABLE, 502, server_error, engine_unreachable",
        "ENGINE_CONNECT_TIMEOUT, 504, server_error, engine_connect_timeout",
        "ENGINE_TIMEOUT, 504, server_error, engine_timeout"
    })
    void bodyIsOpenAisShape(OpenAiError error, int status, String type, String code) {
        assertThat(error.status()).isEqualTo(status);
        JsonNode root = JSON.readTree(error.body("The engine is not ready; retry after 4 s."));
        assertThat(root.size()).isEqualTo(1);
        JsonNode body = root.get("error");
        assertThat(body.get("message").asString()).isEqualTo("The engine is not ready; retry after 4 s.");
        assertThat(body.get("type").asString()).isEqualTo(type);
        assertThat(body.get("param").isNull()).isTrue();
        assertThat(body.get("code").asString()).isEqualTo(code);
        assertThat(body.propertyNames()).containsExactly("message", "type", "param", "code");
    }

    @Test
    void bodyWhenMessageCarriesQuotesAndControlCharactersStaysOneJsonString() {
        String hostile = "model \"x\"}, \"code\": \"owned\", \"y\": {\"z\n\t\u0000\\";
        byte[] body = OpenAiError.INVALID_REQUEST.body(hostile);
        JsonNode error = JSON.readTree(body).get("error");
        assertThat(error.get("message").asString()).isEqualTo(hostile);
        assertThat(error.get("code").asString()).isEqualTo("invalid_request");
        assertThat(new String(body, StandardCharsets.UTF_8)).doesNotContain("\n");
    }
}
