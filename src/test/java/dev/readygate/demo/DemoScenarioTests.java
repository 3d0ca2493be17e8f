package dev.readygate.demo;

import static dev.readygate.HttpStatusPoll.statusOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateApplication;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The demo as the README's "Watching the demo" describes it: the demo profile with the scenario from the jar, for one
 * whole round and the start of the next, four times as fast ({@code readygate.simulator.time-scale=0.25}, but for two
 * short engine timings kept at their real lengths; of readygate's own settings only the GPU reading interval, the log
 * poll interval, the restart-loop window and the light checks' interval are scaled alike). While it runs,
 * {@code /readyz}, {@code /status} and the simulator's admin API are read every 100 ms, each answer labelled with the
 * scenario step that was running; then each promise of that section is asserted on the step it is about. When what
 * the demo does changes, this test and the README change together.
 */
class DemoScenarioTests {

    static final double TIME_SCALE = 0.25;
    static final JsonMapper json = JsonMapper.builder().build();

    /** The scenario's steps, numbered as {@code /admin/state} numbers them (from 1). */
    static final int COLD_START = 1;

    static final int PRELOAD_FALLBACK = 3;
    static final int WRONG_WEIGHTS = 6;
    static final int ROLLOUT_RESTART = 10;
    static final int CACHE_HIT_ON_NEW_REVISION = 12;
    /** vLLM's sleep mode, level 1; the next step wakes the engine. */
    static final int SLEEP = 14;

    static final int GPU_FAULT = 16;
    /** Users' clients stream long completions from here on. */
    static final int TRAFFIC = 18;
    /** The crash, with the users' requests in flight; the next step (at once) stops the clients. */
    static final int CRASH = 19;

    static final int LAST_STEP = 23;

    @TempDir
    Path stateDir;

    /** What was seen at one moment: the step running, and what readygate and the simulator said. */
    record Sample(
            long atMillis,
            int round,
            int step,
            int readyz,
            String state,
            @Nullable String reason,
            int engineHealth,
            List<String> signals,
            @Nullable String enginePhase,
            @Nullable String enginePath,
            @Nullable String daemonPhase) {

        @Override
        public String toString() {
            return "%6d ms  round %d step %2d  /readyz %d %s %s  engine /health %d  signals %s  engine %s %s  daemon %s"
                    .formatted(
                            atMillis,
                            round,
                            step,
                            readyz,
                            state,
                            reason,
                            engineHealth,
                            signals,
                            enginePhase,
                            enginePath,
                            daemonPhase);
        }
    }

    @Test
    void eachPromiseOfWatchingTheDemoHoldsThroughARound() {
        int engine = listenerPort();
        int admin = listenerPort();
        int daemonHealth = listenerPort();
        try (ConfigurableApplicationContext demo = new SpringApplicationBuilder(ReadygateApplication.class)
                .profiles("demo")
                .run(
                        "--server.port=0",
                        "--readygate.simulator.port=" + engine,
                        "--readygate.simulator.admin-port=" + admin,
                        "--readygate.simulator.preload.health-port=" + daemonHealth,
                        "--readygate.simulator.time-scale=" + TIME_SCALE,
                        // Kept at their real lengths: how long a stopping engine still listens and how long a start
                        // tries the cache before it falls back decide which log lines readygate has read when it
                        // sees the engine go; four times shorter, the next start's first lines race the stop.
                        "--readygate.simulator.timing.shutdown-time="
                                + unscaled(Duration.ofMillis(100)).toMillis() + "ms",
                        "--readygate.simulator.timing.fallback-detect-time="
                                + unscaled(Duration.ofMillis(300)).toMillis() + "ms",
                        "--readygate.simulator.log-to-stdout=false",
                        "--readygate.state-dir=" + stateDir,
                        "--readygate.gpu.interval=500ms",
                        "--readygate.gpu.timeout=500ms",
                        "--readygate.evidence.log-poll-interval="
                                + scaled(Duration.ofMillis(250)).toMillis() + "ms",
                        "--readygate.restart.loop-window="
                                + scaled(Duration.ofSeconds(10)).toMillis() + "ms",
                        // The light checks' cadence, scaled alike (2 s), its budget no longer than it.
                        "--readygate.probe.generation.interval="
                                + scaled(Duration.ofSeconds(2)).toMillis() + "ms",
                        "--readygate.probe.generation.timeout="
                                + scaled(Duration.ofSeconds(2)).toMillis() + "ms")) {
            int port = ((WebServerApplicationContext) demo).getWebServer().getPort();
            WebTestClient readygate = client(port);
            WebTestClient simulator = client(admin);
            WebTestClient simulated = client(engine);
            List<Sample> samples = new ArrayList<>();
            long start = System.nanoTime();
            // One whole round, and the next round's second step, by which the last step's cold start is verified.
            await().atMost(scaled(Duration.ofSeconds(224)).plus(Duration.ofSeconds(90)))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        Sample sample =
                                sample(readygate, simulator, simulated, (System.nanoTime() - start) / 1_000_000);
                        samples.add(sample);
                        return sample.round() == 2 && sample.step() >= 2;
                    });
            String seen = samples.stream().map(Sample::toString).collect(Collectors.joining("\n"));

            // 503 `down` while it loads, 200 once verified: the cold start that ends the round (the first one may be
            // under way before readygate listens), and the fallback's disk load.
            List<Sample> lastColdStart = new ArrayList<>(inStep(samples, 1, LAST_STEP));
            lastColdStart.addAll(inStep(samples, 2, COLD_START));
            for (List<Sample> loading : List.of(lastColdStart, inStep(samples, 1, PRELOAD_FALLBACK))) {
                assertThat(loading)
                        .as("a start loading from disk:\n%s", seen)
                        .anyMatch(
                                s -> s.readyz() == 503 && s.state().equals("down") && "engine_down".equals(s.reason()))
                        .anyMatch(s -> s.readyz() == 200 && s.state().equals("ready"));
                int down = firstIndex(loading, s -> s.state().equals("down"));
                assertThat(loading.subList(down, loading.size()))
                        .as("down, then ready once verified")
                        .anyMatch(s -> s.readyz() == 200);
            }

            // /admin/state .engine: which path the current start took.
            assertThat(inStep(samples, 1, PRELOAD_FALLBACK))
                    .as("the admin API's path during the fallback step:\n%s", seen)
                    .anyMatch(s -> "preload-fallback".equals(s.enginePath()));

            // 503 `canary_mismatch` when the preload daemon serves a fine-tune's weights, and never ready meanwhile.
            List<Sample> wrongWeights = inStep(samples, 1, WRONG_WEIGHTS);
            assertThat(wrongWeights)
                    .as("the cache hit with a fine-tune's weights:\n%s", seen)
                    .anyMatch(s -> s.readyz() == 503 && "canary_mismatch".equals(s.reason()));
            assertThat(wrongWeights.subList(firstIndex(wrongWeights, s -> s.readyz() == 503), wrongWeights.size()))
                    .as("not ready from the restart to the next step")
                    .allMatch(s -> s.readyz() == 503);

            // After the rollout the daemon still holds the old revision: stale_cache, until the daemon re-caches.
            assertThat(inStep(samples, 1, ROLLOUT_RESTART))
                    .as("after the rollout:\n%s", seen)
                    .anyMatch(s -> s.signals().contains("stale_cache"));
            List<Sample> recached = inStep(samples, 1, CACHE_HIT_ON_NEW_REVISION);
            assertThat(recached.getLast().signals())
                    .as("once the daemon re-cached the revision the engine serves:\n%s", seen)
                    .doesNotContain("stale_cache");

            // And nowhere else: the scenario has one stale cache (no false one after the rollback, or at a cold start).
            assertThat(samples)
                    .filteredOn(
                            s -> s.round() != 1 || s.step() < ROLLOUT_RESTART || s.step() > CACHE_HIT_ON_NEW_REVISION)
                    .as("stale_cache outside the rollout's steps:\n%s", seen)
                    .noneMatch(s -> s.signals().contains("stale_cache"));

            // Asleep (issue 29): 503 `sleeping`, never a failure's reason; awake, verified again and ready before the
            // GPU fault (asserted below: ready when it began).
            List<Sample> asleep = inStep(samples, 1, SLEEP);
            assertThat(asleep)
                    .as("while the engine sleeps:\n%s", seen)
                    .anyMatch(s -> s.readyz() == 503 && "sleeping".equals(s.reason()));
            assertThat(asleep.subList(firstIndex(asleep, s -> s.readyz() == 503), asleep.size()))
                    .as("asleep: sleeping, nothing else")
                    .allMatch(s -> s.readyz() == 503 && "sleeping".equals(s.reason()));
            assertThat(inStep(samples, 1, SLEEP + 1))
                    .as("after the wake:\n%s", seen)
                    .anyMatch(s -> s.readyz() == 200 && s.state().equals("ready"));

            // The GPU fault: /health stays 200, and the light generation checks see it within its 10 s (README,
            // "Watching the demo"): 503 generation_failed.
            List<Sample> gpuFault = inStep(samples, 1, GPU_FAULT);
            assertThat(gpuFault)
                    .as("during the GPU fault:\n%s", seen)
                    .isNotEmpty()
                    .anyMatch(s -> s.readyz() == 503 && "generation_failed".equals(s.reason()));
            assertThat(gpuFault.getFirst().readyz())
                    .as("ready when the GPU fault began")
                    .isEqualTo(200);
            // The engine's own /health does not see it: 200 whenever it answered (0: no answer within the client's
            // timeout, on a loaded machine).
            assertThat(gpuFault)
                    .as("the engine's /health during the GPU fault:\n%s", seen)
                    .anyMatch(s -> s.engineHealth() == 200)
                    .allMatch(s -> s.engineHealth() == 200 || s.engineHealth() == 0);
            // One fault, one word: generation_failed while it lasts, never the verifications' error_event.
            assertThat(gpuFault)
                    .filteredOn(s -> s.readyz() == 503)
                    .as("the reasons during the GPU fault:\n%s", seen)
                    .allMatch(s -> "generation_failed".equals(s.reason()));
            // Once it clears, a light check passes and a verification follows at once: ready again before the crash
            // (the breaker that suspended the failing verifications does not hold them for the rest of its 30 s).
            List<Sample> cleared = new ArrayList<>(inStep(samples, 1, GPU_FAULT + 1));
            cleared.addAll(inStep(samples, 1, TRAFFIC));
            assertThat(cleared)
                    .as("after the GPU fault cleared, before the crash:\n%s", seen)
                    .anyMatch(s -> s.readyz() == 200 && s.state().equals("ready"));

            // 503 `engine_down` after the crash, ready again once the container restarted it (the clients stop at once:
            // the next step's samples are the crash's too).
            List<Sample> crash = new ArrayList<>(inStep(samples, 1, CRASH));
            crash.addAll(inStep(samples, 1, CRASH + 1));
            assertThat(crash)
                    .as("the crash:\n%s", seen)
                    .anyMatch(s -> s.readyz() == 503 && "engine_down".equals(s.reason()));
            assertThat(crash.getLast().readyz())
                    .as("ready again before the next step")
                    .isEqualTo(200);

            // A record's after-stop reading is taken memory.after-stop-delay after its engine went away, and the record
            // is written again with it; on a loaded machine the reading of the start before the last may still be on
            // its way when the round ends.
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertHistory(
                            json.readTree(get(readygate, "/status").getResponseBody()), seen));
            assertAdminCommands(readygate, simulator, client(engine));
        }
    }

    /**
     * The README's ports table, file locations and round length are what the demo profile and its scenario set: each
     * port's setting has the port the table gives, the engine log is where the README says, and the scenario's waits
     * add up to the round the README states.
     */
    @Test
    void theReadmeSaysWhatTheDemoProfileAndScenarioSet() throws IOException {
        StandardEnvironment environment = new StandardEnvironment();
        YamlPropertySourceLoader loader = new YamlPropertySourceLoader();
        for (String file : List.of("application-demo.yaml", "application.yaml")) {
            loader.load(file, new ClassPathResource(file)).forEach(environment.getPropertySources()::addLast);
        }
        String readme = Files.readString(Path.of("README.md"));
        Matcher rows =
                Pattern.compile("(?m)^\\| (\\d+) +\\| .+\\| `([a-z.-]+)` *\\|$").matcher(readme);
        int ports = 0;
        while (rows.find()) {
            assertThat(environment.getProperty(rows.group(2)))
                    .as("the README's port of %s", rows.group(2))
                    .isEqualTo(rows.group(1));
            ports++;
        }
        assertThat(ports).as("rows of the README's ports table").isEqualTo(4);

        Path workDir = Path.of(Objects.requireNonNull(environment.getProperty("readygate.simulator.work-dir")));
        assertThat(workDir).isEqualTo(Path.of(System.getProperty("java.io.tmpdir"), "readygate-demo", "simulator"));
        assertThat(readme).contains("`/tmp/readygate-demo/simulator/engine.log`");
        assertThat(environment.getProperty("readygate.evidence.engine-log")).isEqualTo(workDir + "/engine.log");

        assertThat(environment.getProperty("readygate.simulator.scenario")).isEqualTo("classpath:simulator/demo.yaml");
        assertThat(readme).contains("`src/main/resources/simulator/demo.yaml`");
        Map<?, ?> scenario = new Yaml().load(Files.readString(Path.of("src/main/resources/simulator/demo.yaml")));
        Duration round = Duration.ZERO;
        for (Object step : (List<?>) scenario.get("steps")) {
            round = round.plus(DurationStyle.detectAndParse(String.valueOf(((Map<?, ?>) step).get("after"))));
        }
        assertThat(round).isEqualTo(Duration.ofSeconds(224));
        // Said twice: where the README says what the demo shows, and in "Watching the demo".
        assertThat(readme.replaceAll("\\s+", " "))
                .contains("A round takes 3 min 44 s, then it repeats")
                .contains("One round of its scenario takes 3 min 44 s, then it repeats");
    }

    /** {@code /status} → {@code restarts.history}: every start of the round, its path, evidence, phases and memory. */
    static void assertHistory(JsonNode status, String seen) {
        List<JsonNode> history = new ArrayList<>();
        status.at("/restarts/history").forEach(history::add);
        List<JsonNode> oldestFirst = history.reversed();
        List<String> paths = oldestFirst.stream()
                .map(record -> record.get("path").asString()
                        + (record.path("wrongWeightsFromCache").asBoolean(false) ? "+wrong_weights" : ""))
                .toList();
        assertThat(paths)
                .as("the round's starts, oldest first:\n%s\n%s", status.at("/restarts/history"), seen)
                .containsSubsequence(
                        "preload_hit", // the daemon's cache hit
                        "preload_fallback", // the daemon cannot be reached
                        "snapshot_restore",
                        "preload_hit+wrong_weights", // a fine-tune's weights from the cache
                        "preload_hit", // the right checkpoint again
                        "preload_fallback", // the rollout: fingerprint mismatch, disk load
                        "preload_hit", // the daemon re-cached the new revision
                        "cold", // a cold start of the new revision: the comparison's reference
                        "wake", // the engine woke from its level 1 sleep: the same process, verified again
                        "cold", // the container restarted the crashed engine (the last restart asked for cold)
                        "cold"); // the last step: a cold start again
        assertThat(paths).contains("cold", "preload_hit", "preload_fallback", "snapshot_restore", "wake");
        // The wake (issue 29): its sleep's level and length, and the GPU asleep as its before-start moment; the start
        // that fell asleep stopped by sleeping.
        int woke = paths.indexOf("wake");
        JsonNode wake = oldestFirst.get(woke);
        assertThat(wake.at("/sleep/level").asInt()).as("the wake %s", wake).isEqualTo(1);
        assertThat(wake.at("/sleep/asleepSeconds").asDouble())
                .as("the wake %s", wake)
                .isPositive();
        assertThat(wake.at("/recovery/kind").asString()).isEqualTo("woke");
        // The GPU while it slept (its before-start moment, by owner) and after its wake; vLLM's own wake time.
        assertThat(wake.at("/memory/beforeStart/byOwnerMiB").isObject())
                .as("memory asleep of %s", wake)
                .isTrue();
        assertThat(wake.at("/memory/atReady/usedMiB").asLong())
                .as("memory of %s", wake)
                .isGreaterThan(wake.at("/memory/beforeStart/usedMiB").asLong());
        assertThat(wake.at("/loggedDurations/wake_up").isNumber())
                .as("vLLM's wake time of %s", wake)
                .isTrue();
        assertThat(oldestFirst.get(woke - 1).at("/stop/how").asString()).isEqualTo("slept");
        JsonNode wrong = oldestFirst.stream()
                .filter(record -> record.path("wrongWeightsFromCache").asBoolean(false))
                .findFirst()
                .orElseThrow();
        assertThat(wrong.get("notReadyReason").asString()).isEqualTo("canary_mismatch");
        for (JsonNode record : oldestFirst.subList(0, oldestFirst.size() - 1)) {
            assertThat(record.get("evidence").isEmpty())
                    .as("evidence of %s", record)
                    .isFalse();
            JsonNode memory = record.path("memory");
            // Before the start, at readiness (a ready start) and after the stop, each by owner. A start replaced by a
            // process readygate did not see its engine make way for (on a loaded machine the probes and the log tail
            // can
            // both miss the demo's short restart gap, and the next scrape shows a new process start time) has no
            // reading between the two (docs/operations.md, the afterStop row).
            if (!"replaced".equals(record.path("stop").path("how").asString(""))) {
                assertThat(memory.path("afterStop").path("byOwnerMiB").isObject())
                        .as("memory of %s", record)
                        .isTrue();
            }
            if (record.get("outcome").asString().equals("ready")) {
                // By owner; which owner a simulated pid gets depends on the host's /proc, where a real process may
                // have the same pid (then "other"), so only that there are owners is asserted.
                assertThat(memory.path("atReady").path("byOwnerMiB").isEmpty())
                        .as("memory at readiness of %s", record)
                        .isFalse();
                assertThat(record.get("phaseOffsetsSeconds").isEmpty())
                        .as("phases of %s", record)
                        .isFalse();
            }
        }
        // The crash lost the users' three requests in flight, and the start after it is a container restart.
        int crashed = -1;
        for (int i = 0; i < oldestFirst.size(); i++) {
            if (oldestFirst.get(i).at("/stop/requestsRunning").asDouble(0) >= 3) {
                crashed = i;
            }
        }
        assertThat(crashed)
                .as("a start that stopped with three requests running:\n%s", status.at("/restarts/history"))
                .isBetween(0, oldestFirst.size() - 2);
        assertThat(oldestFirst.get(crashed).at("/stop/workLost").asString())
                .isEqualTo("3 request(s) in flight were lost (no restart path resumes them)");
        assertThat(oldestFirst.get(crashed + 1).at("/recovery/kind").asString()).isEqualTo("container_restarted");
        assertThat(oldestFirst.subList(1, crashed + 1))
                .as("every restart of the round before the crash restarted the engine process in its container")
                .allMatch(record -> record.at("/recovery/kind")
                        .asString()
                        .equals(record.get("path").asString().equals("wake") ? "woke" : "process_restarted"));
        // Restarts compared: the new revision's cache hit against its own cold starts.
        List<JsonNode> groups = new ArrayList<>();
        status.at("/restarts/comparison/groups").forEach(groups::add);
        assertThat(groups)
                .as("the comparison:\n%s", status.at("/restarts/comparison"))
                .anyMatch(group -> group.get("revision").asString().equals("rollout-2")
                        && group.get("path").asString().equals("preload_hit")
                        && group.get("speedupOverCold").asDouble(0) > 1)
                .anyMatch(group -> group.get("path").asString().equals("cold")
                        && group.get("recovery").asString().equals("container_restarted"));
        JsonNode memory = status.get("memory");
        for (String part : List.of("leak_across_restarts", "held_after_stop", "stale_cache", "kv_cache_shrinking")) {
            assertThat(memory.has(part))
                    .as("/status memory has %s: %s", part, memory)
                    .isTrue();
        }
    }

    /** The README's admin commands: break generation (/health stays 200), restart along a path, the engine's metrics. */
    static void assertAdminCommands(WebTestClient readygate, WebTestClient simulator, WebTestClient engine) {
        simulator
                .post()
                .uri("/admin/fault?name=generation-fails")
                .exchange()
                .expectStatus()
                .is2xxSuccessful();
        // The scenario goes on meanwhile: the engine may be between two starts.
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> statusOf(engine, "/health") == 200);
        simulator
                .post()
                .uri("/admin/restart?path=snapshot-restore")
                .exchange()
                .expectStatus()
                .is2xxSuccessful();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "snapshot-restore"
                        .equals(json.readTree(get(simulator, "/admin/state").getResponseBody())
                                .at("/engine/requestedPath")
                                .asString(null)));
        // Left on, the fault is seen by every verification after it: here the restored start's.
        await().atMost(Duration.ofSeconds(20))
                .until(() -> "error_event"
                        .equals(json.readTree(get(readygate, "/readyz").getResponseBody())
                                .at("/components/engine/details/reason")
                                .asString(null)));
        await().atMost(Duration.ofSeconds(10))
                .ignoreExceptions()
                .until(() -> text(engine, "/metrics").lines().anyMatch(line -> line.startsWith("vllm:")));
        assertThat(text(readygate, "/actuator/prometheus")).contains("readygate_");
    }

    /**
     * The README's "a second demo started while one runs with the same state directory is refused before it writes
     * anything there" (issue 25, item 4): given other ports, the second demo used to run beside the first and write
     * its engine container start id into the first one's folder, and the first readygate recorded its engine's next
     * restart as a container restart, naming a container that engine never had.
     */
    @Test
    void aSecondDemoWithTheSameStateDirIsRefusedBeforeItWritesThere() throws IOException {
        Path containerFile = stateDir.resolve("simulator").resolve("engine-container.json");
        try (ConfigurableApplicationContext first = demo()) {
            String container = Files.readString(containerFile);

            Throwable refused = catchThrowable(() -> demo().close());

            assertThat(refused)
                    .rootCause()
                    .hasMessageContaining("readygate.simulator.work-dir: " + stateDir.resolve("simulator")
                            + " is in use by another simulator");
            assertThat(Files.readString(containerFile)).isEqualTo(container);
            assertThat(first.isRunning()).as("the demo that ran first").isTrue();
        }
    }

    /** A demo with its own ports and this test's state directory, at the README's pace. */
    private ConfigurableApplicationContext demo() {
        return new SpringApplicationBuilder(ReadygateApplication.class)
                .profiles("demo")
                .run(
                        "--server.port=0",
                        "--readygate.simulator.port=" + listenerPort(),
                        "--readygate.simulator.admin-port=" + listenerPort(),
                        "--readygate.simulator.preload.health-port=" + listenerPort(),
                        "--readygate.simulator.log-to-stdout=false",
                        "--readygate.state-dir=" + stateDir);
    }

    /**
     * A free port below Linux's ephemeral range (32768 and up), as the demo's own are: the simulator binds the engine's
     * and the daemon's ports again at every restart, and a port from the ephemeral range can meanwhile become the
     * local port of any process's outgoing connection ("Failed to bind", seen once in this test under load).
     */
    static int listenerPort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(20_000, 32_000);
            try {
                new ServerSocket(port, 1, InetAddress.getLoopbackAddress()).close();
                return port;
            } catch (IOException ex) {
                // Taken: try another.
            }
        }
        throw new IllegalStateException("no free port between 20000 and 32000");
    }

    static Sample sample(WebTestClient readygate, WebTestClient simulator, WebTestClient engine, long atMillis) {
        EntityExchangeResult<byte[]> readyz = get(readygate, "/readyz");
        JsonNode details = json.readTree(readyz.getResponseBody()).at("/components/engine/details");
        JsonNode state = json.readTree(get(simulator, "/admin/state").getResponseBody());
        JsonNode status = json.readTree(get(readygate, "/status").getResponseBody());
        List<String> signals = new ArrayList<>();
        status.at("/memory/signals").forEach(signal -> signals.add(signal.asString()));
        return new Sample(
                atMillis,
                state.at("/scenario/round").asInt(0),
                state.at("/scenario/step").asInt(0),
                readyz.getStatus().value(),
                details.path("state").asString("?"),
                details.path("reason").asString(null),
                healthOf(engine),
                signals,
                state.at("/engine/phase").asString(null),
                state.at("/engine/path").asString(null),
                state.at("/daemon/phase").asString(null));
    }

    /** The engine's {@code /health} status, 0 while nothing listens (between two starts). */
    static int healthOf(WebTestClient engine) {
        try {
            return statusOf(engine, "/health");
        } catch (RuntimeException ex) {
            return 0;
        }
    }

    static List<Sample> inStep(List<Sample> samples, int round, int step) {
        return samples.stream()
                .filter(s -> s.round() == round && s.step() == step)
                .toList();
    }

    static int firstIndex(List<Sample> samples, Predicate<Sample> matching) {
        for (int i = 0; i < samples.size(); i++) {
            if (matching.test(samples.get(i))) {
                return i;
            }
        }
        throw new AssertionError(
                "no such sample in\n" + samples.stream().map(Sample::toString).collect(Collectors.joining("\n")));
    }

    static EntityExchangeResult<byte[]> get(WebTestClient client, String path) {
        return client.get()
                .uri(path)
                .header("Accept", "application/json")
                .exchange()
                .expectBody()
                .returnResult();
    }

    static String text(WebTestClient client, String path) {
        byte[] body =
                client.get().uri(path).exchange().expectBody().returnResult().getResponseBody();
        return new String(Objects.requireNonNull(body), StandardCharsets.UTF_8);
    }

    static WebTestClient client(int port) {
        return WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** What {@code time-scale} turns back into {@code duration}. */
    static Duration unscaled(Duration duration) {
        return Duration.ofNanos(Math.round(duration.toNanos() / TIME_SCALE));
    }

    static Duration scaled(Duration duration) {
        return Duration.ofNanos(Math.round(duration.toNanos() * TIME_SCALE));
    }
}
