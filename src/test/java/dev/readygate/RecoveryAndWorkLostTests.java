package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * Against the simulator: each start's recovery kind (the engine process restarted in its container, the container
 * restarted after a crash), the work a crash lost (the requests users had in flight, as readygate last scraped them),
 * and restarts side by side, in {@code /status}, the history, the comparison's CSV and the metrics.
 */
class RecoveryAndWorkLostTests {

    @TempDir
    Path workDir;

    ConfigurableApplicationContext readygate(RunningSimulator engine) {
        return readygate(engine, workDir.resolve("engine/snapshot"));
    }

    ConfigurableApplicationContext readygate(RunningSimulator engine, Path snapshotDir, String... extra) {
        Path sim = workDir.resolve("engine");
        List<String> args = new java.util.ArrayList<>(List.of(
                "--server.port=0",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.evidence.snapshot-dir=" + snapshotDir,
                "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                "--readygate.evidence.engine-container-file=" + sim.resolve("engine-container.json"),
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4",
                "--readygate.node.name=node-a",
                "--readygate.node.pod-uid=pod-1",
                // Its engine restarts and crashes on purpose, several times in a row: no restart-loop hold.
                "--readygate.restart.loop-hold=0s"));
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    static List<String> comparisonCsv(WebTestClient client, String query) {
        return client.get()
                .uri("/status/comparison.csv" + query)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody()
                .lines()
                .toList();
    }

    /**
     * vLLM's snapshots restore a TP1 engine only: snapshot evidence configured for a data-parallel engine is named as an
     * unsupported configuration on {@code /status}, from the engine's own arguments; the same engine without snapshot
     * evidence is no concern of the snapshot scope.
     */
    @Test
    void aSnapshotConfigurationWiderThanOneGpuIsNamedOnStatus() throws Exception {
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"), "preload.enabled=false", "deployment.data-parallel-size=2");
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            JsonNode snapshot = status(client).at("/restarts/snapshot");
            assertThat(snapshot.get("configured").booleanValue()).isTrue();
            assertThat(snapshot.get("supported").booleanValue()).isFalse();
            assertThat(snapshot.get("unsupported").valueStream().map(JsonNode::asString))
                    .containsExactly("data_parallel_size is 2: vLLM's snapshots restore one GPU (TP1) engines only,"
                            + " so readygate.evidence.snapshot-dir cannot describe this engine's starts");
        }
    }

    static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> status(client).at("/restarts/history").size() >= count);
        return status(client).at("/restarts/history");
    }

    /**
     * readygate reads a copy of the snapshot directory (the chart's entrypoint keeps one it can read), whose manifest
     * names another driver than the node's: the restore is named, not trusted, and counted.
     */
    @Test
    void aSnapshotRestoreWhoseManifestNamesAnotherDriverIsNamedNotTrustedAndCounted() throws Exception {
        Path view = Files.createDirectories(workDir.resolve("snapshot-view"));
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"));
                // The node's driver from the (simulated) nvidia-smi.
                ConfigurableApplicationContext readygate = readygate(
                        engine,
                        view,
                        "--readygate.gpu.nvidia-smi=" + engine.nvidiaSmi(),
                        "--readygate.gpu.interval=500ms",
                        "--readygate.gpu.timeout=500ms")) {
            WebTestClient client = client(readygate);
            awaitRecords(client, 1);
            String manifest = Files.readString(workDir.resolve("engine/snapshot/manifest.json"));
            assertThat(manifest).contains("\"driver_version\" : \"580.159.04\"");
            Files.writeString(
                    view.resolve("manifest.json"),
                    manifest.replace("\"driver_version\" : \"580.159.04\"", "\"driver_version\" : \"570.86.15\""));

            engine.restartAndAwait(StartupPath.SNAPSHOT_RESTORE);
            JsonNode restored = awaitRecords(client, 2).get(0);

            assertThat(restored.get("path").asString()).isEqualTo("snapshot_restore");
            // A restored engine logs no arguments: they and the revision are the manifest's.
            assertThat(restored.get("revision").asString()).isEqualTo("c1899de289a04d12100db370d81485cdf75e47ca");
            assertThat(restored.get("engineArgs").asString()).contains("'max_model_len': 4096");
            assertThat(restored.get("snapshotMismatches").valueStream().map(JsonNode::asString))
                    .containsExactly(
                            "driver_version: the snapshot was taken on 570.86.15, this engine runs on" + " 580.159.04");
            assertThat(restored.get("evidence").valueStream().map(JsonNode::asString))
                    .contains("snapshot manifest not trusted: driver_version: the snapshot was taken on 570.86.15,"
                            + " this engine runs on 580.159.04");
            JsonNode snapshot = status(client).at("/restarts/snapshot");
            assertThat(snapshot.get("matchesThisEngine").booleanValue()).isFalse();
            assertThat(snapshot.get("supported").booleanValue()).isTrue();
            // The canary did not take the manifest's oracle as the answer, and said why.
            assertThat(status(client).at("/probes/canary/last/detail").asString())
                    .contains("the snapshot manifest's oracle was not used (driver_version: the snapshot was taken on"
                            + " 570.86.15, this engine runs on 580.159.04)");
            assertThat(ReadygateClients.prometheus(client))
                    .contains("readygate_snapshot_manifest_mismatches_total{field=\"driver_version\"} 1.0")
                    .contains("readygate_snapshot_manifest_mismatches_total{field=\"gpu_uuid\"} 0.0");
        }
    }

    @Test
    void eachStartSaysWhatItRecoveredFromAndACrashRecordsTheRequestsItLost() throws Exception {
        // Decoding at 10 ms a token, the users' requests (1500 tokens each) are in flight for about 15 s.
        try (RunningSimulator engine =
                        RunningSimulator.serving(workDir.resolve("engine"), "timing.decode-per-token=10ms");
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            JsonNode first = awaitRecords(client, 1).get(0);
            assertThat(first.get("firstSeen").booleanValue()).isTrue();
            assertThat(first.at("/recovery/kind").asString()).isEqualTo("unknown");
            assertThat(first.at("/node/pod_uid").asString()).isEqualTo("pod-1");
            String container = first.at("/node/engine_container").asString();
            assertThat(container).matches("[0-9a-f-]{36}");

            // An admin restart: the engine process restarts in the same container.
            engine.restartAndAwait(StartupPath.COLD);
            JsonNode restarted = awaitRecords(client, 2).get(0);
            assertThat(restarted.at("/recovery/kind").asString()).isEqualTo("process_restarted");
            assertThat(restarted.at("/recovery/changes")).isEmpty();
            assertThat(restarted.at("/node/engine_container").asString()).isEqualTo(container);
            // The first start's record says how it ended: its engine was replaced; nothing was in flight.
            JsonNode ended = status(client).at("/restarts/history").get(1);
            assertThat(ended.at("/stop/requestsRunning").doubleValue()).isZero();

            // Users' requests in flight, seen by readygate's scrape, then a crash: the container restarts.
            engine.traffic(3);
            await().atMost(Duration.ofSeconds(15))
                    .until(() ->
                            status(client).at("/engine/metrics/requestsRunning").asDouble() >= 3);
            engine.crash();
            engine.traffic(0);
            JsonNode afterCrash = awaitRecords(client, 3);
            JsonNode crashed = afterCrash.get(1);
            JsonNode recovered = afterCrash.get(0);
            assertThat(crashed.get("id").asString())
                    .isEqualTo(restarted.get("id").asString());
            assertThat(crashed.at("/stop/how").asString()).isEqualTo("went_away");
            assertThat(crashed.at("/stop/requestsRunning").doubleValue()).isEqualTo(3.0);
            assertThat(crashed.at("/stop/requestsWaiting").doubleValue()).isZero();
            assertThat(Instant.parse(crashed.at("/stop/observedAt").asString()))
                    .isBefore(Instant.parse(crashed.at("/stop/at").asString()));
            assertThat(crashed.at("/stop/workLost").asString())
                    .isEqualTo("3 request(s) in flight were lost (no restart path resumes them)");
            assertThat(recovered.at("/recovery/kind").asString()).isEqualTo("container_restarted");
            assertThat(recovered.at("/recovery/changes").get(0).asString())
                    .startsWith("engine_container " + container + " → ");

            JsonNode status = status(client);
            assertThat(status.at("/restarts/workLost/resumesInFlight").booleanValue())
                    .isFalse();
            assertThat(status.at("/restarts/workLost/statement").asString())
                    .startsWith("No restart path resumes requests in flight");
            assertThat(status.at("/restarts/workLost/lastStop/requestsRunning").doubleValue())
                    .isEqualTo(3.0);

            // Side by side: the first start (not seen beginning) is left out, the cold starts are grouped by kind.
            JsonNode comparison = status.at("/restarts/comparison");
            assertThat(comparison.get("excluded").intValue()).isEqualTo(1);
            assertThat(comparison
                            .get("groups")
                            .valueStream()
                            .map(group -> group.get("path").asString() + "/"
                                    + group.get("recovery").asString())
                            .toList())
                    .containsExactly("cold/process_restarted", "cold/container_restarted");
            JsonNode cold = comparison.get("groups").get(0);
            assertThat(cold.get("revision").asString()).isEqualTo("c1899de289a04d12100db370d81485cdf75e47ca");
            assertThat(cold.get("configuration").asString()).matches("[0-9a-f]{8}");
            assertThat(cold.at("/readinessSeconds/p50").doubleValue()).isPositive();
            assertThat(cold.at("/phaseMedianSeconds/port_listening").doubleValue())
                    .isPositive();
            assertThat(cold.at("/loggedMedianSeconds/weights_loading").isNumber())
                    .isTrue();
            assertThat(cold.get("speedupOverCold").doubleValue()).isPositive();

            String csv = client.get()
                    .uri("/status/comparison.csv")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectHeader()
                    .contentTypeCompatibleWith("text/csv")
                    .expectBody(String.class)
                    .returnResult()
                    .getResponseBody();
            List<String> lines = csv.lines().toList();
            assertThat(lines).hasSize(3);
            assertThat(lines.get(0)).startsWith("vllm_version,revision,configuration,");
            assertThat(lines.get(2)).contains(",cold,container_restarted,1,1,0,");
            // ?since= and ?limit= pick the records as for the exports: after the restarted start, only the recovered
            // one; the first record alone (not seen beginning) leaves no group; a bad limit is refused.
            assertThat(comparisonCsv(client, "?since=" + restarted.get("id").asString()))
                    .hasSize(2)
                    .last()
                    .asString()
                    .contains(",cold,container_restarted,1,1,0,");
            assertThat(comparisonCsv(client, "?limit=1")).hasSize(1);
            client.get()
                    .uri("/status/comparison.csv?limit=zero")
                    .exchange()
                    .expectStatus()
                    .isBadRequest();

            String metrics = ReadygateClients.prometheus(client);
            assertThat(metrics)
                    .contains("readygate_engine_recoveries_total{path=\"cold\",recovery=\"container_restarted\"} 1.0")
                    .contains("readygate_engine_recoveries_total{path=\"snapshot_restore\",recovery=\"new_node\"} 0.0")
                    .contains("readygate_engine_release_info{config=\""
                            + cold.get("configuration").asString()
                            + "\",revision=\"c1899de289a04d12100db370d81485cdf75e47ca\",vllm_version=\"0.31.0\"} 1\n")
                    .contains("readygate_snapshot_manifest_mismatches_total{field=\"driver_version\"} 0.0");
            // The history on disk holds the same.
            assertThat(Files.readString(workDir.resolve("state/restarts.jsonl")))
                    .contains("\"recovery\":{\"kind\":\"container_restarted\"")
                    .contains("\"requestsRunning\":3.0");
        }
    }
}
