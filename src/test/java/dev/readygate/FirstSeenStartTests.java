package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.readiness.EngineState;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * A start readygate did not see begin is not an engine restart (issue 14, item 5): readygate started (or restarted)
 * beside an engine that has been up and serving records that start as first seen, with the path its own evidence proves
 * or {@code unknown} (never {@code snapshot_restore} from counters its traffic left), no readiness latency, and nothing
 * in the per-path meters.
 */
class FirstSeenStartTests {

    @TempDir
    Path workDir;

    /** readygate beside {@code engine}; with {@code engineLog}, it reads the engine's log. */
    ConfigurableApplicationContext readygate(RunningSimulator engine, boolean engineLog) {
        // The engine restarts seconds after it started: by the rule a crash loop's second start, held for loop-hold.
        return readygate(engine, engineLog, "--readygate.restart.loop-hold=0s");
    }

    ConfigurableApplicationContext readygate(RunningSimulator engine, boolean engineLog, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4"));
        if (engineLog) {
            args.add("--readygate.evidence.engine-log=" + engine.engineLogFile());
        }
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    /** An engine that has been up and serving: its counters are not zero when readygate first scrapes it. */
    static RunningSimulator servingEngine(Path dir) {
        RunningSimulator engine = RunningSimulator.serving(dir, "preload.enabled=false");
        for (int i = 0; i < 5; i++) {
            engine.postJson(
                    "/v1/completions",
                    Map.of("model", "Qwen/Qwen3-0.6B", "prompt", "Hello there", "max_tokens", 3, "ignore_eos", true));
        }
        return engine;
    }

    static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> status(client).at("/restarts/history").size() >= count);
        return status(client).at("/restarts/history");
    }

    /** The sum of a meter's samples over its label sets, from readygate's Prometheus exposition. */
    static double sum(String prometheus, String name) {
        Matcher sample = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*} (\\S+)$")
                .matcher(prometheus);
        double total = 0;
        while (sample.find()) {
            total += Double.parseDouble(sample.group(1));
        }
        return total;
    }

    static void assertFirstSeenAndKeptOutOfComparisons(JsonNode record, String prometheus) {
        assertThat(record.get("outcome").asString()).isEqualTo("ready");
        assertThat(record.get("readinessLatencySeconds").isNull())
                .as("a first-seen start's 'latency' would be the engine's uptime")
                .isTrue();
        assertThat(record.get("firstSeen").booleanValue()).isTrue();
        assertThat(record.get("comparable").booleanValue()).isFalse();
        assertThat(record.get("evidence").valueStream().map(JsonNode::asString))
                .anyMatch(line -> line.startsWith("first seen: readygate did not see this start begin"))
                .noneMatch(line -> line.contains("restored from a snapshot image"));
        assertThat(sum(prometheus, "readygate_readiness_latency_seconds_count")).isZero();
        assertThat(sum(prometheus, "readygate_engine_starts_total")).isZero();
        assertThat(sum(prometheus, "readygate_phase_duration_seconds_count")).isZero();
    }

    /**
     * Issue 24, item 5: readygate first sees an engine of a crash loop running; it crashes and starts again. That second
     * start was served (about 0.75 s in the benchmark, each round of a loop that began before readygate) because the
     * first seen start's beginning was taken as unknown. Its own evidence dates it ({@code process_start_time_seconds},
     * and with the log its start-up header): it lived seconds, so the restart is a crash loop's second start and is
     * held. {@code /readyz} is never 200 from the crash on.
     */
    @ParameterizedTest(name = "with the engine log: {0}")
    @ValueSource(booleans = {false, true})
    void aCrashLoopThatBeganBeforeReadygateLookedIsNotServedOnItsSecondStart(boolean engineLog) {
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"),
                        "preload.enabled=false",
                        "faults.crash-loop-uptime=1500ms",
                        "auto-restart-delay=200ms",
                        "load-time=200ms");
                // The defaults: loop-hold 1 m, three starts make a loop (the restart is only the second).
                ConfigurableApplicationContext readygate = readygate(engine, engineLog, new String[0])) {
            WebTestClient client = client(readygate);
            assertThat(awaitRecords(client, 1).get(0).get("firstSeen").booleanValue())
                    .isTrue();
            List<EngineState> states = StateChanges.recorded(readygate);
            int first = engine.latestStartNumber();
            engine.fault("crash-loop", false);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> states.stream().anyMatch(state -> state.kind() == EngineState.Kind.HELD));
            assertThat(engine.latestStartNumber()).isGreaterThan(first);
            assertThat(StateChanges.sinceTheFirstCrash(states)).noneMatch(EngineState::acceptsTraffic);
            assertThat(ReadygateClients.readyz(client)).isEqualTo(503);
            engine.clearFault("crash-loop");
        }
    }

    @Test
    void startedBesideAServingEngineWithoutItsLogRecordsAFirstSeenStartOfUnknownPath() {
        try (RunningSimulator engine = servingEngine(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine, false)) {
            WebTestClient client = client(readygate);
            JsonNode first = awaitRecords(client, 1).get(0);
            assertThat(first.get("path").asString())
                    .as("non-zero counters at the first scrape are the engine's traffic, not a snapshot restore")
                    .isEqualTo("unknown");
            assertThat(first.get("evidence").valueStream().map(JsonNode::asString))
                    .anyMatch(line -> line.contains("at the first scrape: requests served before readygate looked"));
            assertThat(first.get("engineStartSource").asString()).isEqualTo("process_start_time");
            assertFirstSeenAndKeptOutOfComparisons(first, ReadygateClients.prometheus(client));

            // The next start readygate sees begin is an engine start again, with its latency.
            engine.restartAndAwait(StartupPath.COLD);
            JsonNode next = awaitRecords(client, 2).get(0);
            assertThat(next.get("firstSeen").booleanValue()).isFalse();
            assertThat(next.get("comparable").booleanValue()).isTrue();
            assertThat(next.get("readinessLatencySeconds").doubleValue()).isPositive();
            await().atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(sum(
                                    ReadygateClients.prometheus(client), "readygate_readiness_latency_seconds_count"))
                            .isEqualTo(1));
        }
    }

    /**
     * A single restart of an engine that had stayed up {@code loop-hold} before readygate first saw it, by its own
     * {@code process_start_time_seconds}, is not held, however soon after readygate's first look it comes (counted from
     * that look, the first seen start would have lived too short).
     */
    @Test
    void aRestartOfAFirstSeenEngineThatHadStayedUpTheHoldIsNotHeld() {
        try (RunningSimulator engine = servingEngine(workDir.resolve("engine"))) {
            Instant listening = engine.listeningSince();
            assertThat(listening).isNotNull();
            // Real time: the engine is up longer than the hold when readygate first looks at it.
            await().atMost(Duration.ofSeconds(10)).until(() -> Instant.now().isAfter(listening.plusSeconds(3)));
            try (ConfigurableApplicationContext readygate =
                    readygate(engine, false, "--readygate.restart.loop-hold=3s")) {
                WebTestClient client = client(readygate);
                awaitRecords(client, 1);
                List<EngineState> states = StateChanges.recorded(readygate);
                engine.restartAndAwait(StartupPath.COLD);
                JsonNode next = awaitRecords(client, 2).get(0);
                assertThat(next.get("outcome").asString()).isEqualTo("ready");
                assertThat(states)
                        .extracting(EngineState::kind)
                        .contains(EngineState.Kind.READY)
                        .doesNotContain(EngineState.Kind.HELD);
            }
        }
    }

    @Test
    void startedBesideAServingEngineWithItsLogTakesThePathTheLogProves() {
        try (RunningSimulator engine = servingEngine(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine, true)) {
            WebTestClient client = client(readygate);
            JsonNode first = awaitRecords(client, 1).get(0);
            assertThat(first.get("path").asString()).isEqualTo("cold");
            assertThat(first.get("evidence").valueStream().map(JsonNode::asString))
                    .anyMatch(line -> line.startsWith("log: Loading weights took"));
            assertFirstSeenAndKeptOutOfComparisons(first, ReadygateClients.prometheus(client));
        }
    }

    /**
     * A loaded machine: readygate's first looks at a running engine time out ({@code /health} accepts the connection
     * and answers nothing within {@code request-timeout}). That is the same engine start, seen late, not a start of its
     * own that never became ready: one first-seen record, ready, and no {@code not_ready} record before it.
     */
    @Test
    void firstLooksThatTimeOutAreNoStartOfTheirOwn() {
        try (RunningSimulator engine = servingEngine(workDir.resolve("engine"))) {
            engine.fault("hang", true);
            try (ConfigurableApplicationContext readygate = readygate(engine, false)) {
                WebTestClient client = client(readygate);
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                    JsonNode status = status(client);
                    assertThat(status.get("state").asString()).isEqualTo("listening");
                    assertThat(status.get("detail").asString()).contains("/health");
                });
                engine.clearFaults();
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> status(client)
                                .at("/restarts/history")
                                .valueStream()
                                .anyMatch(r -> r.get("outcome").asString().equals("ready")));
                JsonNode history = status(client).at("/restarts/history");
                assertThat(history.valueStream().map(r -> r.get("outcome").asString() + " " + r.get("notReadyReason")))
                        .as("the timed-out first looks were the same engine start, not one that never became ready")
                        .containsExactly("ready null");
                JsonNode only = history.get(0);
                assertThat(only.get("path").asString()).isEqualTo("unknown");
                assertThat(only.get("engineStartSource").asString()).isEqualTo("process_start_time");
                assertFirstSeenAndKeptOutOfComparisons(only, ReadygateClients.prometheus(client));
            }
        }
    }

    @Test
    void restartedBesideARunningEngineWithItsStateDirTakesThePathItRecordedWhenItSawTheStartBegin() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"))) {
            JsonNode seen;
            try (ConfigurableApplicationContext before = readygate(engine, true)) {
                WebTestClient client = client(before);
                awaitRecords(client, 1);
                engine.restartAndAwait(StartupPath.PRELOAD_HIT);
                seen = awaitRecords(client, 2).get(0);
                assertThat(seen.get("path").asString()).isEqualTo("preload_hit");
                assertThat(seen.get("firstSeen").booleanValue()).isFalse();
                assertThat(seen.get("readinessLatencySeconds").doubleValue()).isPositive();
            }
            // readygate restarts (an upgrade of the sidecar) while the engine keeps serving; this time it is not given
            // the engine log, so only the record it made when it saw the start begin can tell the path.
            try (ConfigurableApplicationContext after = readygate(engine, false)) {
                WebTestClient client = client(after);
                JsonNode history = awaitRecords(client, 3);
                JsonNode again = history.get(0);
                assertThat(again.get("id").asString())
                        .isNotEqualTo(seen.get("id").asString());
                assertThat(again.get("engineStart").asString())
                        .isEqualTo(seen.get("engineStart").asString());
                assertThat(again.get("path").asString()).isEqualTo("preload_hit");
                assertThat(again.get("evidence").valueStream().map(JsonNode::asString))
                        .anyMatch(line -> line.startsWith("history: an earlier readygate saw this engine start begin")
                                && line.contains(seen.get("id").asString()));
                assertFirstSeenAndKeptOutOfComparisons(again, ReadygateClients.prometheus(client));
                // The record of the start as it was seen begin is kept as it was.
                JsonNode kept = history.get(1);
                assertThat(kept.get("id").asString()).isEqualTo(seen.get("id").asString());
                assertThat(kept.get("comparable").booleanValue()).isTrue();
                assertThat(kept.get("readinessLatencySeconds").doubleValue())
                        .isEqualTo(seen.get("readinessLatencySeconds").doubleValue());
            }
        }
    }
}
