package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.support.CanaryBesideTrickle;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * The canary on a healthy engine that serves a trickle of short requests, one at a time: vLLM is not batch-invariant,
 * so a canary that shared its batch with one answers its first token with a slightly moved logprob (the simulator
 * moves it by {@code batch-variance}, 0.03 x 0.5 to 1, beyond the strict {@code logprob-tolerance} of 0.01). A request
 * that began after the scrape before the canary and ended before the one after it shows in neither scrape's running
 * requests, only in the counters; readygate used to judge such a canary alone, with the strict tolerance, and latched a
 * healthy engine out as {@code canary_mismatch} (found by hand: within 40 s of such a trickle, canary every 4 s). Now
 * the counters moving beyond the canary's own count as other work ({@code EngineLoadTests}).
 */
class CanaryUnderTrafficTests {

    @TempDir
    Path workDir;

    @Test
    void shortRequestsBesideTheCanaryNeverTakeAHealthyEngineOut() throws Exception {
        Path sim = workDir.resolve("engine");
        try (RunningSimulator engine = RunningSimulator.serving(sim, "timing.decode-per-token=5ms");
                ConfigurableApplicationContext readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                        .run(
                                "--server.port=0",
                                "--spring.reactor.netty.shutdown-quiet-period=0s",
                                "--readygate.engine.base-url=" + engine.baseUrl(),
                                "--readygate.state-dir=" + workDir.resolve("state"),
                                "--readygate.probe.representative.prompt-tokens=100",
                                "--readygate.probe.representative.output-tokens=4",
                                // A canary every 150 ms instead of every 4 s: many of them beside the trickle.
                                "--readygate.probe.generation.interval=150ms",
                                "--readygate.probe.generation.timeout=150ms",
                                "--readygate.probe.generation.canary-every=1")) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);

            CanaryBesideTrickle seen = CanaryBesideTrickle.watch(
                    readygate, engine.baseUrl(), "Qwen/Qwen3-0.6B", 3000, Duration.ofSeconds(120));

            assertThat(seen.outs())
                    .as("readygate took the engine out under the trickle")
                    .isEmpty();
            JsonNode probes = status(client).at("/probes/canary");
            assertThat(probes.get("lastFailure").isNull()).as(probes.toString()).isTrue();
            // The case itself happened: canaries shared their batch with the trickle and were judged as such.
            assertThat(seen.canaryDetails())
                    .as("canary reports seen")
                    .anyMatch(detail -> detail.contains("under load"));
        }
    }
}
