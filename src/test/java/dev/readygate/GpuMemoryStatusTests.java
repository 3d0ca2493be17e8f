package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.prometheus;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/** GPU memory in {@code /status} and the metrics, read from the simulator's GPU through the real reader. */
class GpuMemoryStatusTests {

    @TempDir
    Path workDir;

    static final String GPU = "GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da";

    /** readygate against the engine, reading its GPU every 500 ms with the given sources. */
    ConfigurableApplicationContext readygate(RunningSimulator engine, String... sources) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.gpu.interval=500ms",
                "--readygate.gpu.timeout=500ms"));
        args.addAll(List.of(sources));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    @Test
    void memoryHeldByTheEngineAndTheDaemonIsShownAndExported() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate =
                        readygate(engine, "--readygate.gpu.nvidia-smi=" + engine.nvidiaSmi())) {
            WebTestClient client = client(readygate);
            await().atMost(Duration.ofSeconds(15))
                    .until(() ->
                            status(client).at("/gpu/gpus/0/byOwnerBytes/engine").asLong(0) > 0);
            JsonNode gpu = status(client).at("/gpu/gpus/0");
            assertThat(gpu.get("uuid").asString()).isEqualTo(GPU);
            assertThat(gpu.at("/byOwnerBytes/preload_daemon").asLong()).isEqualTo(1668L * 1024 * 1024);
            assertThat(gpu.at("/byOwnerBytes/engine").asLong()).isEqualTo(8836L * 1024 * 1024);
            assertThat(gpu.get("usedBytes").asLong()).isEqualTo((1668L + 8836L) * 1024 * 1024);
            assertThat(prometheus(client))
                    .contains("readygate_gpu_memory_used_bytes{gpu=\"" + GPU + "\",owner=\"preload_daemon\"} "
                            + "1.749024768E9")
                    .contains("readygate_gpu_memory_used_bytes{gpu=\"" + GPU + "\",owner=\"total\"} 1.1014242304E10");
        }
    }

    @Test
    void missingNvidiaSmiIsANamedReasonThatLeavesReadinessAlone() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
                ConfigurableApplicationContext readygate =
                        readygate(engine, "--readygate.gpu.nvidia-smi=" + workDir.resolve("no-such-nvidia-smi"))) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> status(client).at("/gpu/failure").asString("").equals("binary_missing"));
            assertThat(prometheus(client)).contains("readygate_gpu_reading_failures_total{reason=\"binary_missing\"}");
        }
    }

    @Test
    void whenNvidiaSmiFailsTheDcgmExporterGivesTheTotalsAndTheFailureIsNamed() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        "--readygate.gpu.nvidia-smi=" + workDir.resolve("no-such-nvidia-smi"),
                        "--readygate.gpu.dcgm-url=" + engine.dcgmUrl())) {
            WebTestClient client = client(readygate);
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> status(client).at("/gpu/source").asString("").equals("dcgm"));
            JsonNode gpu = status(client).at("/gpu");
            assertThat(gpu.at("/sourceFailures/nvidia_smi/reason").asString()).isEqualTo("binary_missing");
            assertThat(gpu.at("/gpus/0/usedBytes").asLong()).isEqualTo((1668L + 8836L) * 1024 * 1024);
            assertThat(gpu.get("processes").isEmpty()).isTrue();
            ReadygateClients.awaitReady(client);
        }
    }
}
