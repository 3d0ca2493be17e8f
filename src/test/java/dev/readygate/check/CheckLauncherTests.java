package dev.readygate.check;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.simulator.RunningSimulator;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link CheckLauncher}: configuration problems are exit 2, named, without a stack trace; an engine readygate would
 * gate only with limits is exit 3, never 0.
 */
class CheckLauncherTests {

    @TempDir
    Path dir;

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

    @Test
    void anEngineGatedWithLimitsExitsThreeNotZero() {
        // Issue 24: exit 0 promises correct gating; a warning (here the canary off: wrong weights go unnoticed) is a
        // limit, its own status.
        try (RunningSimulator engine = RunningSimulator.serving(dir.resolve("engine"))) {
            assertThat(run(
                            3,
                            "--readygate.engine.base-url=" + engine.baseUrl(),
                            "--readygate.state-dir=" + dir.resolve("state"),
                            "--readygate.probe.canary.enabled=false",
                            "--readygate.probe.representative.prompt-tokens=100",
                            "--readygate.probe.representative.output-tokens=4"))
                    .contains("  - the canary is disabled")
                    .contains("verdict: readygate would gate this engine, with the limits of the 1 problem or warning"
                            + " above (exit 3)");
        }
    }
}
