package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import dev.readygate.support.KilledStateDir;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A start readygate is killed during is recorded after readygate's restart, once (issue 24, item 10). readygate killed
 * with {@code kill -9} leaves its state directory as it stood at that moment: the test copies the directory while the
 * engine restarts (what the disk holds at the kill), lets that readygate go, and starts the next one on the copy.
 */
class KilledDuringAStartTests {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path workDir;

    ConfigurableApplicationContext readygate(RunningSimulator engine, Path state) {
        return readygate(engine, state, true);
    }

    /** A readygate on {@code state}; without the engine log, a start begins only when the new engine answers. */
    ConfigurableApplicationContext readygate(RunningSimulator engine, Path state, boolean engineLog) {
        return StartOriginTests.readygate(engine, state, engineLog);
    }

    static JsonNode awaitRecords(WebTestClient client, int count) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> status(client).at("/restarts/history").size() >= count);
        return status(client).at("/restarts/history");
    }

    /** Restarts the engine and copies readygate's state directory once readygate has seen the start begin. */
    Path killedDuringARestart(RunningSimulator engine) throws IOException {
        return killedDuringARestart(engine, true);
    }

    Path killedDuringARestart(RunningSimulator engine, boolean engineLog) throws IOException {
        Path state = workDir.resolve("state");
        Path atKill = workDir.resolve("state-at-kill");
        try (ConfigurableApplicationContext before = readygate(engine, state, engineLog)) {
            WebTestClient client = client(before);
            awaitRecords(client, 1);
            engine.restart(StartupPath.COLD);
            // readygate saw the old engine go away and the new one begin (the log's header; vLLM's port still closed)
            // ...
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> status(client).get("state").asString().equals("down"));
            // ... and has had the moment it takes to write that down (a few milliseconds; the start is not ready yet).
            Path journal = state.resolve("starts-in-progress.json");
            try {
                await().atMost(Duration.ofMillis(500))
                        .pollInterval(Duration.ofMillis(10))
                        // With the engine log, the start its header began (dated by the log), not only the start
                        // awaited since the engine went away (dated by that sighting).
                        .until(() -> Files.exists(journal)
                                && (!engineLog || Files.readString(journal).contains("\"source\":\"log\"")));
            } catch (ConditionTimeoutException ex) {
                // A readygate that keeps no journal: killed all the same.
            }
            KilledStateDir.copy(state, atKill);
        }
        assertThat(lines(atKill.resolve("restarts.jsonl")).stream()
                        .map(line -> line.substring(0, line.indexOf(',')))
                        .distinct())
                .as("killed before the start was recorded: only the first-seen start before it (written once or more)")
                .hasSize(1);
        return atKill;
    }

    /** Waits until the engine's start {@code number} listens and would serve. */
    static void awaitListening(RunningSimulator engine, int number) {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> engine.latestStartNumber() == number
                        && engine.listeningSince() != null
                        && engine.ableToServe());
    }

    /** Newest first: the process found now (first seen), the killed readygate's start (unknown), the first. */
    static void assertFoundAnotherProcess(JsonNode history) {
        assertThat(history.valueStream()
                        .map(record -> record.get("outcome").asString() + " "
                                + record.get("firstSeen").booleanValue()))
                .as("newest first: the process found now (first seen), the killed readygate's start, the first")
                .containsExactly("ready true", "unknown false", "ready true");
    }

    static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Test
    void aStartReadygateWasKilledDuringIsRecordedOnceByTheNextReadygate() throws IOException {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false")) {
            Path atKill = killedDuringARestart(engine);
            // The engine comes up while no readygate runs: the next one finds it serving.
            awaitListening(engine, 2);
            try (ConfigurableApplicationContext after = readygate(engine, atKill)) {
                WebTestClient client = client(after);
                JsonNode history = awaitRecords(client, 2);
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> !Files.exists(atKill.resolve("starts-in-progress.json")));
                history = status(client).at("/restarts/history");
                assertThat(history.size()).as("no start lost, none twice").isEqualTo(2);
                JsonNode restart = history.get(0);
                assertThat(restart.get("firstSeen").booleanValue())
                        .as("the start the killed readygate saw begin is an engine start")
                        .isFalse();
                assertThat(restart.get("outcome").asString()).isEqualTo("ready");
                assertThat(restart.get("engineStartSource").asString()).isIn("process_start_time", "log");
                assertThat(restart.get("readinessLatencyBound").booleanValue())
                        .as("ready before the next readygate looked: when exactly, none saw")
                        .isTrue();
                assertThat(restart.get("evidence").valueStream().map(JsonNode::asString))
                        .anyMatch(line -> line.startsWith("journal: readygate was restarted during this start"));
                assertThat(history.get(1).get("firstSeen").booleanValue()).isTrue();
                await().atMost(Duration.ofSeconds(5))
                        .untilAsserted(() -> assertThat(FirstSeenStartTests.sum(
                                        ReadygateClients.prometheus(client), "readygate_engine_starts_total"))
                                .isEqualTo(1));
            }
        }
    }

    /**
     * Without the engine log, a start begins for readygate only when the new engine answers: killed after it saw the
     * old engine go away and before the new one answered (the whole of a vLLM load), readygate had journaled nothing,
     * and the next one, finding the engine serving, recorded the start only as first seen (the benchmark's
     * killed-readygate stage found it: docs/benchmarks.md, 3e).
     */
    @Test
    void aStartReadygateWasKilledDuringBeforeTheNewEngineAnsweredIsRecordedOnceWithoutAnEngineLog() throws IOException {
        try (RunningSimulator engine =
                RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false", "load-time=2s")) {
            Path atKill = killedDuringARestart(engine, false);
            awaitListening(engine, 2);
            try (ConfigurableApplicationContext after = readygate(engine, atKill, false)) {
                WebTestClient client = client(after);
                awaitRecords(client, 2);
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> !Files.exists(atKill.resolve("starts-in-progress.json")));
                JsonNode history = status(client).at("/restarts/history");
                assertThat(history.size()).as("no start lost, none twice").isEqualTo(2);
                JsonNode restart = history.get(0);
                assertThat(restart.get("firstSeen").booleanValue())
                        .as("the start the killed readygate saw begin (the old engine go away) is an engine start")
                        .isFalse();
                assertThat(restart.get("outcome").asString()).isEqualTo("ready");
                assertThat(restart.get("engineStartSource").asString()).isEqualTo("process_start_time");
                assertThat(restart.get("evidence").valueStream().map(JsonNode::asString))
                        .anyMatch(line -> line.startsWith("journal: readygate was restarted during this start"));
                assertThat(history.get(1).get("firstSeen").booleanValue()).isTrue();
            }
        }
    }

    /**
     * Without an engine log a start is dated by readygate's sighting until the engine's {@code /metrics} dates it: the
     * journal keeps that dating, so that the next readygate, finding a later process (the engine restarted again while
     * none ran), records the killed readygate's start with an unknown outcome instead of taking the later process for
     * it and leaving it without a record (the benchmark's killed-readygate stage, docs/benchmarks.md 3e).
     */
    @Test
    void aStartTheEngineDatedAndLeftWhileNoReadygateRanIsRecordedWithAnUnknownOutcomeWithoutAnEngineLog()
            throws IOException {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false")) {
            Path state = workDir.resolve("state");
            Path atKill = workDir.resolve("state-at-kill");
            Path journal = state.resolve("starts-in-progress.json");
            try (ConfigurableApplicationContext before = readygate(engine, state, false)) {
                awaitRecords(client(before), 1);
                // The new start answers (and its /metrics dates it) but is never verified: killed before its record.
                engine.fault("hang", false);
                engine.restart(StartupPath.COLD);
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> engine.latestStartNumber() == 2 && engine.listeningSince() != null);
                try {
                    await().atMost(Duration.ofSeconds(5))
                            .pollInterval(Duration.ofMillis(10))
                            .until(() -> Files.exists(journal)
                                    && Files.readString(journal).contains("process_start_time"));
                } catch (ConditionTimeoutException ex) {
                    // A readygate that keeps the sighting alone: killed all the same.
                }
                KilledStateDir.copy(state, atKill);
            }
            engine.clearFaults();
            Instant listened = engine.listeningSince();
            await().atMost(Duration.ofSeconds(10)).until(() -> Instant.now().isAfter(listened.plusSeconds(3)));
            engine.restartAndAwait(StartupPath.COLD);
            awaitListening(engine, 3);
            try (ConfigurableApplicationContext after = readygate(engine, atKill, false)) {
                WebTestClient client = client(after);
                awaitRecords(client, 3);
                JsonNode history = status(client).at("/restarts/history");
                assertFoundAnotherProcess(history);
                assertThat(history.get(1).get("engineStartSource").asString()).isEqualTo("process_start_time");
            }
        }
    }

    @Test
    void aStartReadygateWasKilledDuringThatTheEngineLeftMeanwhileIsRecordedWithAnUnknownOutcome() throws IOException {
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"), "preload.enabled=false")) {
            Path atKill = killedDuringARestart(engine);
            // Another restart while no readygate runs (seconds later: a process of its own by every clock), and the
            // next
            // readygate finds that other process.
            awaitListening(engine, 2);
            Instant seenBegin = Instant.parse(
                    JSON.readTree(atKill.resolve("starts-in-progress.json").toFile())
                            .at("/starts/0/since")
                            .asString());
            // The log dates a start to the second: a process that starts within two seconds of it reads as the same.
            await().atMost(Duration.ofSeconds(10)).until(() -> Instant.now().isAfter(seenBegin.plusSeconds(3)));
            engine.restartAndAwait(StartupPath.COLD);
            awaitListening(engine, 3);
            try (ConfigurableApplicationContext after = readygate(engine, atKill)) {
                WebTestClient client = client(after);
                awaitRecords(client, 3);
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> !Files.exists(atKill.resolve("starts-in-progress.json")));
                JsonNode history = status(client).at("/restarts/history");
                assertFoundAnotherProcess(history);
                JsonNode interrupted = history.get(1);
                assertThat(interrupted.get("engineStartSource").asString()).isEqualTo("log");
                assertThat(interrupted.get("evidence").valueStream().map(JsonNode::asString))
                        .anyMatch(line -> line.contains("how this start ended was seen by none"));
            }
        }
    }
}
