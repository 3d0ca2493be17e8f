package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link EngineMessages}: each engine's own words, as its source writes them. */
class EngineMessagesTests {

    @ParameterizedTest
    @ValueSource(
            strings = {
                "This model's maximum context length is 4096 tokens. However, you requested 64 output tokens and your"
                        + " prompt contains at least 4033 input tokens",
                "the request exceeds the available context size. try increasing the context size or enable context"
                        + " shift",
                "input is larger than the max context size. skipping",
                "The input (5000 tokens) is longer than the model's context length (4096 tokens).",
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 2000 `inputs` tokens"
                        + " and 64 `max_new_tokens`",
                "Input validation error: `inputs` must have less than 1024 tokens. Given: 1500"
            })
    void contextLengthWhenAnEngineSaysTheRequestDoesNotFitIsTrue(String message) {
        assertThat(EngineMessages.contextLength(message)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Loading model", "CUDA error: an illegal memory access", "Invalid API Key", ""})
    void contextLengthForOtherMessagesIsFalse(String message) {
        assertThat(EngineMessages.contextLength(message)).isEqualTo(false);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "503|Loading model|true",
                "503|the model is still loading|true",
                "503||false",
                "503|EngineDeadError|false",
                "500|Loading model|false"
            })
    void loadingOnlyForA503ThatSaysSo(int status, String message, boolean loading) {
        assertThat(EngineMessages.loading(status, message == null ? "" : message))
                .isEqualTo(loading);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "404|Not Found|true",
                "404|File Not Found|true",
                "405|Method Not Allowed|true",
                "501|This server does not support metrics endpoint. Start it with `--metrics`|true",
                "404|The model `other` does not exist.|false",
                "400|Bad Request|false"
            })
    void routeMissingForA404WithoutAModelA405OrA501(int status, String message, boolean missing) {
        assertThat(EngineMessages.routeMissing(status, message)).isEqualTo(missing);
    }
}
