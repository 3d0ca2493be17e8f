package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.support.MetricsRewritingProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * Lost evidence is said (issue 14, item 8): when the engine's {@code /metrics} stops giving what restart or busy
 * detection needs, {@code /status} names what is lost, since when, why and what readygate then cannot do, a meter is 1
 * for it, and both clear when the evidence comes back. Readiness does not depend on it. The engine is the simulator;
 * a proxy in front of it rewrites only {@code /metrics}.
 */
class LostEvidenceTests {

    /** A small body bound, so an exposition over it is cheap to make. */
    static final int MAX_BODY = 256 * 1024;

    @org.junit.jupiter.api.io.TempDir
    static Path workDir;

    static RunningSimulator engine;
    static MetricsRewritingProxy proxy;
    static ConfigurableApplicationContext readygate;
    static WebTestClient client;

    @BeforeAll
    static void start() {
        engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false");
        proxy = MetricsRewritingProxy.to(engine.baseUrl());
        readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=" + proxy.baseUrl(),
                        "--readygate.engine.max-body-size=" + MAX_BODY + "B",
                        "--readygate.state-dir=" + workDir.resolve("state"),
                        "--readygate.engine.request-timeout=300ms",
                        "--readygate.probe.ready-interval=300ms",
                        "--readygate.probe.health-interval=100ms",
                        "--readygate.probe.representative.prompt-tokens=100",
                        "--readygate.probe.representative.output-tokens=4");
        client = ReadygateClients.client(readygate);
        ReadygateClients.awaitReady(client);
    }

    @AfterAll
    static void stop() {
        if (readygate != null) {
            readygate.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        engine.close();
    }

    @AfterEach
    void evidenceComesBack() {
        proxy.metrics(UnaryOperator.identity());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> lost().isEmpty()
                        && ReadygateClients.prometheus(client)
                                .lines()
                                .filter(line -> line.startsWith("readygate_engine_evidence_lost{"))
                                .allMatch(line -> line.endsWith(" 0.0")));
        assertThat(status().at("/engine/endpoints/metrics").asString())
                .startsWith("usable: reachable")
                .doesNotContain("lost since");
    }

    static JsonNode status() {
        return ReadygateClients.status(client);
    }

    /** The lost evidence {@code /status} names, by its name. */
    static List<JsonNode> lost() {
        return status().at("/engine/lostEvidence").valueStream().toList();
    }

    static UnaryOperator<String> rewrite(String kind) {
        return switch (kind) {
            // The engine's exposition buried under another exporter's series, past max-body-size.
            case "too-large" ->
                body -> body
                        + IntStream.range(0, MAX_BODY / 40)
                                .mapToObj(i -> "lora_adapter_requests_total{adapter=\"a" + i + "\"} 1\n")
                                .collect(Collectors.joining());
            // Another process's metrics only.
            case "foreign" ->
                body -> "# TYPE node_cpu_seconds_total counter\nnode_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 12.5\n";
            case "unparsable" -> body -> "<html><body>502 Bad Gateway</body></html>\n";
            case "no-process-start" -> body -> without(body, "process_start_time_seconds");
            case "no-vllm" -> body -> without(body, "vllm:");
            default -> throw new IllegalArgumentException(kind);
        };
    }

    static String without(String body, String prefix) {
        return body.lines()
                .filter(line -> !line.startsWith(prefix)
                        && !line.startsWith("# HELP " + prefix)
                        && !line.startsWith("# TYPE " + prefix))
                .collect(Collectors.joining("\n", "", "\n"));
    }

    @ParameterizedTest(name = "{0}: {1} lost")
    @CsvSource(
            delimiter = ';',
            value = {
                "too-large; metrics; readygate.engine.max-body-size; no restart detection from /metrics",
                "foreign; metrics; none of the series readygate reads; no busy detection",
                "unparsable; metrics; not Prometheus text; no restart detection from /metrics",
                "no-process-start; process_start_time; absent from /metrics (last seen; no restart detection by process"
                        + " start time",
                "no-vllm; request_counts; absent from /metrics; no busy detection",
            })
    void metricsThatStopGivingWhatDetectionNeedsAreNamedInStatusAndAMeter(
            String kind, String evidence, String why, String cannot) {
        proxy.metrics(rewrite(kind));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> lost().stream()
                        .anyMatch(l -> l.get("evidence").asString().equals(evidence)));
        JsonNode loss = lost().stream()
                .filter(l -> l.get("evidence").asString().equals(evidence))
                .findFirst()
                .orElseThrow();
        assertThat(loss.get("why").asString()).contains(why);
        assertThat(loss.get("readygateCannot").asString()).contains(cannot);
        assertThat(loss.get("since").asString()).isNotBlank();
        assertThat(ReadygateClients.prometheus(client))
                .contains("readygate_engine_evidence_lost{evidence=\"" + evidence + "\"} 1.0");
        JsonNode status = status();
        if (evidence.equals("metrics")) {
            // Not "available" while nothing usable comes; the values shown are the last usable scrape's, said stale.
            assertThat(status.at("/engine/endpoints/metrics").asString()).startsWith("lost since ");
            assertThat(status.at("/engine/metrics/stale").booleanValue()).isTrue();
            // What readygate can see is not read from that stale scrape.
            assertThat(status.at("/engine/capabilities/busyDetection").asString())
                    .startsWith("no, for now: /metrics lost since ");
            assertThat(status.at("/engine/capabilities/restartDetection").asString())
                    .startsWith("nothing from /metrics for now");
        }
        if (kind.equals("no-vllm")) {
            assertThat(lost())
                    .extracting(l -> l.get("evidence").asString())
                    .containsExactlyInAnyOrder("request_counts", "generation_tokens", "request_success");
        }
        // Readiness does not depend on it.
        assertThat(status.get("ready").booleanValue()).isTrue();
    }
}
