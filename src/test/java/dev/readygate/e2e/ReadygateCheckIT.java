package dev.readygate.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar target/readygate.jar check ...} as an operator runs it, against the embedded vLLM simulator and with
 * configurations that cannot work. The runs against llama.cpp's llama-server are in {@link LlamaServerIT}.
 */
class ReadygateCheckIT {

    @TempDir
    Path dir;

    @Test
    void checkAgainstTheSimulatorExitsZeroAndSaysWhatItSaw() {
        try (RunningSimulator engine = RunningSimulator.serving(dir.resolve("engine"))) {
            ReadygateJar.Result check = check(
                    "--readygate.engine.base-url=" + engine.baseUrl(),
                    "--readygate.evidence.engine-log=" + engine.engineLogFile(),
                    "--readygate.evidence.daemon-health-url=" + engine.daemonHealthUrl());

            System.out.println("readygate check against the simulator:\n" + check.output());
            assertThat(check.exitCode()).as(check.output()).isZero();
            assertThat(check.output())
                    .contains("dialect        vllm (/v1/models owned_by vllm)")
                    .contains("max_model_len  4096 (/v1/models max_model_len)")
                    .contains("version        0.31.0 (/version)")
                    .containsPattern("tokenize +usable: gave \\d+ token ids")
                    .contains("prompt tokens  planned 512, sent 512, the engine counted 512")
                    .contains("stable      yes:")
                    .contains("a new process_start_time_seconds")
                    .contains("vLLM's lines: {")
                    .contains("verdict: readygate would gate this engine correctly (exit 0)");
        }
    }

    @Test
    void checkOfAProbeThatDoesNotFitTheContextExitsOneAndSaysWhy() {
        try (RunningSimulator engine = RunningSimulator.serving(dir.resolve("engine"))) {
            ReadygateJar.Result check = check(
                    "--readygate.engine.base-url=" + engine.baseUrl(),
                    "--readygate.probe.representative.prompt-tokens=8000");

            assertThat(check.exitCode()).as(check.output()).isEqualTo(1);
            assertThat(check.output())
                    .contains("FAILED probe_exceeds_context: 8000 prompt + 64 output tokens exceed the engine's"
                            + " max_model_len 4096")
                    .contains("verdict: readygate would NOT gate this engine correctly (exit 1)");
        }
    }

    @Test
    void checkWithoutAnEngineExitsOneAfterWaiting() {
        ReadygateJar.Result check = check(
                "--readygate.engine.base-url=http://127.0.0.1:" + Loopback.freePort(),
                // Long enough for more than one attempt: on a loaded machine the first one can time out before
                // the refused connection is seen.
                "--readygate.check.wait-for-engine=5s");

        assertThat(check.exitCode()).as(check.output()).isEqualTo(1);
        assertThat(check.output())
                .contains("the engine never answered /health 200")
                .contains("refused");
    }

    @Test
    void checkWithABadConfigurationExitsTwoNamingTheKey() {
        ReadygateJar.Result check = check("--readygate.engine.dialect=ollama");

        assertThat(check.exitCode()).as(check.output()).isEqualTo(2);
        assertThat(check.output()).contains("configuration problem").contains("readygate.engine");
    }

    private ReadygateJar.Result check(String... args) {
        List<String> command =
                new java.util.ArrayList<>(List.of("check", "--readygate.state-dir=" + dir.resolve("state")));
        command.addAll(List.of(args));
        return ReadygateJar.run(
                dir.resolve("check-" + System.nanoTime() + ".log"), Map.of(), Duration.ofMinutes(3), command);
    }
}
