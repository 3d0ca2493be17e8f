package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link SafeDetail}: engine messages made short, single-line and free of secrets. */
class SafeDetailTests {

    @Test
    void ofWhenTheMessageContainsASecretRedactsIt() {
        assertThat(SafeDetail.of("bad key sk-12345 for prompt 'Hello there'", List.of("sk-12345", "Hello there")))
                .isEqualTo("bad key <redacted> for prompt '<redacted>'");
    }

    @Test
    void ofWhenTheMessageEchoesAnInputValueRedactsIt() {
        String pydantic = "1 validation error for CompletionRequest\nprompt\n  String should have at most 10 characters"
                + " [type=string_too_long, input_value='The capital of Fr...', input_type=str]";

        assertThat(SafeDetail.of(pydantic, List.of()))
                .isEqualTo("1 validation error for CompletionRequest prompt String should have at most 10 characters"
                        + " [type=string_too_long, input_value=<redacted>, input_type=str]");
    }

    @Test
    void ofWhenTheMessageIsLongCutsItTo200Characters() {
        assertThat(SafeDetail.of("x".repeat(1000), List.of())).hasSize(200).endsWith("...");
    }

    @Test
    void ofWhenASecretIsVeryShortLeavesTheMessageReadable() {
        assertThat(SafeDetail.of("This is fine", List.of("is"))).isEqualTo("This is fine");
    }
}
