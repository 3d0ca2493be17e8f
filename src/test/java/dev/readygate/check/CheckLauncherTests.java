package dev.readygate.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@link CheckLauncher}: configuration problems are exit 2, named, without a stack trace. */
class CheckLauncherTests {

    static String run(int expectedExit, String... args) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = CheckLauncher.run(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String output = bytes.toString(StandardCharsets.UTF_8);
        assertThat(exit).as(output).isEqualTo(expectedExit);
        return output;
    }

    @Test
    void runWithoutABaseUrlIsABadConfigurationNamingTheKey() {
        assertThat(run(2)).contains("configuration problem: readygate.engine.base-url: is not set");
    }

    @Test
    void runWithAnUnknownDialectIsABadConfigurationNamingTheKey() {
        assertThat(run(2, "--readygate.engine.base-url=http://127.0.0.1:1", "--readygate.engine.dialect=ollama"))
                .contains(
                        "readygate.engine.dialect: must be auto, vllm, llama-cpp, sglang, tgi or openai (was ollama)");
    }

    @Test
    void runWithoutAnEngineWaitsThenSaysItNeverAnswered() {
        assertThat(run(1, "--readygate.engine.base-url=http://127.0.0.1:1", "--readygate.check.wait-for-engine=0s"))
                .contains("the engine never answered /health 200")
                .contains("verdict: readygate would NOT gate this engine correctly (exit 1)");
    }
}
