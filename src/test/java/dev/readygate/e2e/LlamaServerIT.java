package dev.readygate.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateApplication;
import dev.readygate.ReadygateClients;
import dev.readygate.support.CanaryBesideTrickle;
import dev.readygate.support.KilledStateDir;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * readygate against llama.cpp's {@code llama-server}, a real OpenAI-compatible engine nobody here wrote, serving small
 * random-weight models this suite writes ({@link GgufModel}). Each test starts its own llama-server on a fresh port and
 * its own readygate with the settings under test. The binary comes from {@link LlamaServer#binary()}; without one the
 * suite fails, saying where it looked ({@code ./mvnw verify -Pjava-only} leaves it out by its tag).
 */
@Tag("llama-server")
class LlamaServerIT {

    private static final Duration READY_WITHIN = Duration.ofSeconds(90);

    @TempDir
    static Path shared;

    static Path smallModel;

    @TempDir
    Path dir;

    private final List<AutoCloseable> running = new ArrayList<>();

    @BeforeAll
    static void writeModel() {
        smallModel = GgufModel.small(1).writeTo(shared.resolve("small-1.gguf"));
    }

    @AfterEach
    void stopEverything() throws Exception {
        for (AutoCloseable closeable : running.reversed()) {
            closeable.close();
        }
    }

    // --- the defects ---

    @Test
    void becomesReadyWithTheDefaultsWhenTheProbeFitsTheContext() {
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");
        WebTestClient client = readygate(engine.baseUrl());

        awaitReady(client, engine);
        JsonNode status = ReadygateClients.status(client);
        assertThat(status.at("/engine/dialect").asString()).isEqualTo("llama.cpp");
        // What readygate cannot see of a llama-server: its dialect's gaps (issue 29 item 6).
        assertThat(status.at("/engine/unseen").valueStream().map(JsonNode::asString))
                .containsExactlyElementsOf(dev.readygate.engine.EngineDialect.LLAMA_CPP.unseen());
        assertThat(status.at("/engine/maxModelLen").intValue()).isEqualTo(2048);
        assertThat(status.at("/engine/maxModelLenSource").asString()).contains("/props");
        JsonNode measured = status.at("/probes/representative/last/measurement");
        assertThat(measured.get("plannedPromptTokens").intValue()).isEqualTo(512);
        assertThat(measured.get("promptTokens").intValue()).isEqualTo(512);
        assertThat(measured.get("completionTokens").intValue()).isEqualTo(64);
        assertThat(status.at("/engine/endpoints/tokenize").asString()).startsWith("usable");
        assertThat(status.at("/probes/representative/last/detail").asString()).contains("exact");
    }

    @Test
    void shortRequestsBesideTheCanaryNeverTakeLlamaServerOut() {
        // Four slots of 2048 tokens, so that the trickle's requests share llama-server's batch with the canary; a
        // canary every 150 ms.
        LlamaServer engine = llama(smallModel, "-c", "8192", "--metrics", "-np", "4");
        ConfigurableApplicationContext readygate = readygateContext(
                engine.baseUrl(),
                dir.resolve("state"),
                "--readygate.probe.generation.interval=150ms",
                "--readygate.probe.generation.timeout=150ms",
                "--readygate.probe.generation.canary-every=1");
        WebTestClient client = ReadygateClients.client(readygate);
        awaitReady(client, engine);

        CanaryBesideTrickle seen = CanaryBesideTrickle.watch(readygate, engine.baseUrl(), "small", 300, READY_WITHIN);

        System.out.println("[llama-canary] " + seen.sent() + " requests; canary reports: " + seen.canaryDetails());
        assertThat(seen.outs())
                .as("readygate took the engine out under the trickle")
                .isEmpty();
        JsonNode canary = ReadygateClients.status(client).at("/probes/canary");
        assertThat(canary.get("lastFailure").isNull()).as(canary.toString()).isTrue();
    }

    @Test
    void probeLargerThanTheContextIsNotReadyAndTheReasonNamesTheContext() {
        LlamaServer engine = llama(smallModel, "-c", "256", "--metrics");
        WebTestClient client = readygate(engine.baseUrl());

        JsonNode status = awaitReason(client, "probe_exceeds_context");
        assertThat(status.get("ready").booleanValue()).isFalse();
        assertThat(status.get("detail").asString()).contains("256").contains("max_model_len");
    }

    @Test
    void silentlyTruncatedPromptIsNeverReadyWithoutTokenize() {
        // An OpenAI-compatible server without /tokenize (and without llama.cpp's /props): llama-server truncates the
        // 512-token prompt to fit its 256-token context and reports what it kept (its log: "input truncated").
        LlamaServer engine = llama(smallModel, "-c", "256", "--metrics");
        HidingProxy proxy = proxy(engine, "/tokenize", "/props");
        WebTestClient client = readygate(proxy.baseUrl());

        JsonNode status = awaitReason(client, "prompt_tokens_mismatch");
        assertThat(status.get("detail").asString()).contains("512");
        assertThat(engine.logged("input truncated")).isTrue();
        assertThat(neverReady(client, Duration.ofSeconds(3))).isTrue();
    }

    @Test
    void engineErrorEventReachesTheReason() {
        // --no-context-shift: llama-server ends the stream with an `error: {...}` event and `data: [DONE]`.
        LlamaServer engine = llama(smallModel, "-c", "256", "--no-context-shift");
        HidingProxy proxy = proxy(engine, "/props");
        WebTestClient client = readygate(proxy.baseUrl(), "--readygate.probe.representative.prompt-tokens=300");

        JsonNode status = awaitReason(client, "probe_exceeds_context");
        assertThat(status.get("detail").asString()).contains("the request exceeds the available context size");
    }

    @Test
    void maxModelLenSettingStandsInWhenTheEngineReportsNone() {
        LlamaServer engine = llama(smallModel, "-c", "1024");
        HidingProxy proxy = proxy(engine, "/props");
        WebTestClient client = readygate(
                proxy.baseUrl(),
                "--readygate.engine.max-model-len=1024",
                "--readygate.probe.representative.prompt-tokens=0.25");

        awaitReady(client, engine);
        JsonNode status = ReadygateClients.status(client);
        assertThat(status.at("/engine/maxModelLen").intValue()).isEqualTo(1024);
        assertThat(status.at("/engine/maxModelLenSource").asString()).contains("readygate.engine.max-model-len");
        assertThat(status.at("/probes/representative/last/measurement/plannedPromptTokens")
                        .intValue())
                .isEqualTo(256);
    }

    @Test
    void statusSaysWhatReadygateCanAndCannotSeeOfLlamaServer() throws IOException {
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");
        WebTestClient client = readygate(engine.baseUrl(), "--readygate.evidence.engine-log=" + engine.log());

        awaitReady(client, engine);
        JsonNode status = ReadygateClients.status(client);
        JsonNode endpoints = status.at("/engine/endpoints");
        assertThat(endpoints.get("version").asString())
                .doesNotStartWith("available")
                .contains("/version");
        assertThat(endpoints.get("metrics").asString())
                .contains("llamacpp:")
                .contains("no vllm:* series")
                .contains("process start");
        assertThat(status.at("/engine/version").asString()).isNotBlank();
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        ReadygateClients.status(client).at("/restarts/history").size() > 0);
        JsonNode start = ReadygateClients.status(client).at("/restarts/history/0");
        assertThat(start.get("path").asString()).isEqualTo("unknown");
        assertThat(start.get("evidence").valueStream().map(JsonNode::asString))
                .anySatisfy(line -> assertThat(line).contains("vLLM"));
        // The port answered (503 while loading, or already 200) no later than /health passed.
        Map<String, Double> phases = phases(start);
        assertThat(phases.get("port_listening")).isLessThanOrEqualTo(phases.get("health_ok"));
        assertThat(Files.readString(engine.log())).contains("server is listening");
    }

    // --- item 7's cases ---

    @Test
    void loadingPhaseIsListeningAndNeverReadyBeforeACompletionAnswers() {
        Path large = GgufModel.large(3).writeTo(dir.resolve("large.gguf"));
        // readygate first, then the engine: on a quiet machine the model loads before a readygate started after it
        // takes its first look, and the loading phase would go unseen.
        LlamaServer engine = LlamaServer.notStarted(
                LlamaServer.binary(), large, dir.resolve("llama-loading.log"), Map.of(), "-c", "1024", "--no-mmap");
        running.add(engine);
        WebTestClient client = readygate(engine.baseUrl(), "--readygate.probe.representative.prompt-tokens=64");
        engine.restart();

        // While llama-server answers 503 "Loading model", readygate says listening/engine_loading, never engine_dead.
        List<String> whileLoading = new ArrayList<>();
        await().atMost(READY_WITHIN).pollInterval(Duration.ofMillis(20)).until(() -> {
            int health = Loopback.status(engine.port(), "/health");
            if (health == 503) {
                JsonNode status = ReadygateClients.status(client);
                whileLoading.add(status.get("state").asString() + "/"
                        + status.get("reason").asString() + "/"
                        + status.get("ready").booleanValue());
            }
            return health == 200;
        });
        assertThat(whileLoading).isNotEmpty();
        assertThat(whileLoading).allSatisfy(seen -> assertThat(seen).doesNotEndWith("/true"));
        assertThat(whileLoading).noneSatisfy(seen -> assertThat(seen).contains("engine_dead"));
        assertThat(whileLoading).anySatisfy(seen -> assertThat(seen).isEqualTo("listening/engine_loading/false"));

        awaitReady(client, engine);
        await().atMost(Duration.ofSeconds(10)).until(() -> history(client).size() > 0);
        Map<String, Double> phases = phases(history(client).get(0));
        assertThat(phases.get("port_listening")).isLessThan(phases.get("health_ok"));
        assertThat(phases.get("health_ok")).isLessThanOrEqualTo(phases.get("representative_ok"));
        assertThat(phases.get("representative_ok")).isLessThanOrEqualTo(phases.get("ready"));
        assertThat(phases.get("canary_ok")).isLessThanOrEqualTo(phases.get("ready"));
    }

    @Test
    void killNineIsNotReadyFastAndTheNextStartIsRecorded() {
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");
        // llama-server gives no start time of its own: the start readygate first sees counts from readygate's first
        // look, and a restart seconds later is held loop-hold as a crash loop's second start (docs/readiness.md, state
        // held), 60 s of the 90 this test waits. The hold is not this test's subject.
        WebTestClient client = readygate(engine.baseUrl(), "--readygate.restart.loop-hold=0s");
        awaitReady(client, engine);

        engine.kill();
        await().atMost(Duration.ofSeconds(2)).until(() -> ReadygateClients.readyz(client) == 503);
        assertThat(ReadygateClients.status(client).get("reason").asString()).isEqualTo("engine_down");

        engine.restart();
        awaitReady(client, engine);
        await().atMost(Duration.ofSeconds(10)).until(() -> history(client).size() >= 2);
        JsonNode latest = history(client).get(0);
        assertThat(latest.get("outcome").asString()).isEqualTo("ready");
        assertThat(latest.get("firstSeen").booleanValue()).isFalse();
        // llama-server exports no process_start_time_seconds and logs no wall-clock time: readygate first saw the
        // refused port, so the latency is from when it saw the old engine go away, a bound kept out of the meters.
        assertThat(latest.get("engineStartSource").asString()).isEqualTo("observed_down");
        assertThat(latest.get("readinessLatencyBound").booleanValue()).isTrue();
        assertThat(latest.get("readinessLatencySeconds").doubleValue()).isPositive();
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(ReadygateClients.prometheus(client))
                        .containsPattern("readygate_engine_starts_total\\{[^}]*} 1\\.0"));
        assertThat(ReadygateClients.prometheus(client))
                .doesNotContainPattern("readygate_readiness_latency_seconds_count\\{[^}]*} [1-9]");
    }

    /**
     * readygate killed while llama-server restarts: the next readygate, started on the state directory as the kill left
     * it, records that start once, as an engine start (issue 24, item 10). llama-server gives no process start time and
     * no wall-clock log time, so nothing tells the start apart from a later one: it is taken as the same, dated by when
     * the killed readygate saw the old engine go away, and its latency is a bound.
     */
    @Test
    void aStartReadygateIsKilledDuringIsRecordedOnceByTheNextReadygate() throws IOException {
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");
        Path state = dir.resolve("state-killed");
        ConfigurableApplicationContext killed = readygateContext(engine.baseUrl(), state);
        WebTestClient before = ReadygateClients.client(killed);
        awaitReady(before, engine);
        engine.kill();
        await().atMost(Duration.ofSeconds(10)).until(() -> ReadygateClients.readyz(before) == 503);
        engine.restart();
        // readygate sees the new process answer, not verified yet: the engine is frozen there, mid-start.
        await().atMost(READY_WITHIN)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> !List.of("down", "ready")
                        .contains(ReadygateClients.status(before).path("state").asString()));
        engine.pause();
        try {
            await().atMost(Duration.ofMillis(500))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> Files.exists(state.resolve("starts-in-progress.json")));
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            // A readygate that keeps no journal: killed all the same.
        }
        Path atKill = KilledStateDir.copy(state, dir.resolve("state-at-kill"));
        killed.close();
        engine.resume();

        WebTestClient after = ReadygateClients.client(readygateContext(engine.baseUrl(), atKill));
        awaitReady(after, engine);
        await().atMost(Duration.ofSeconds(20)).until(() -> history(after).size() >= 2);
        JsonNode history = history(after);
        assertThat(history.size()).as("no start lost, none twice").isEqualTo(2);
        JsonNode restart = history.get(0);
        assertThat(restart.get("firstSeen").booleanValue())
                .as("the start the killed readygate saw begin is an engine start")
                .isFalse();
        assertThat(restart.get("outcome").asString()).isEqualTo("ready");
        assertThat(restart.get("engineStartSource").asString()).isEqualTo("observed_down");
        assertThat(restart.get("readinessLatencyBound").booleanValue()).isTrue();
        assertThat(restart.get("evidence").valueStream().map(JsonNode::asString))
                .anyMatch(line -> line.startsWith("journal: readygate was restarted during this start"));
        assertThat(history.get(1).get("firstSeen").booleanValue()).isTrue();
    }

    @Test
    void stoppedEngineIsNotReadyAndReadyAgainWhenContinued() {
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");
        WebTestClient client = readygate(engine.baseUrl());
        awaitReady(client, engine);

        engine.pause();
        await().atMost(Duration.ofSeconds(10)).until(() -> ReadygateClients.readyz(client) == 503);
        engine.resume();
        awaitReady(client, engine);
    }

    @Test
    void apiKeyFromAFile() throws IOException {
        String key = "file-key-5b0c1e7d";
        Path keyFile = Files.writeString(dir.resolve("api-key"), key + "\n");
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics", "--api-key-file", keyFile.toString());
        WebTestClient client = readygate(engine.baseUrl(), "--readygate.engine.api-key-file=" + keyFile);

        awaitReady(client, engine);
        assertThat(ReadygateClients.status(client).toString()).doesNotContain(key);
    }

    @Test
    void apiKeyFromAnEnvironmentVariable() throws IOException {
        String key = "env-key-9a4f2c31";
        LlamaServer engine = llama(smallModel, Map.of("LLAMA_API_KEY", key), "-c", "2048", "--metrics");
        int port = Loopback.freePort();
        // readygate as a process, with the key in its environment only (as the chart passes it from a Secret).
        ReadygateJar readygate = ReadygateJar.start(
                dir.resolve("readygate.log"),
                Map.of("ENGINE_API_KEY", key),
                List.of(
                        "--server.address=127.0.0.1",
                        "--server.port=" + port,
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.engine.api-key-env=ENGINE_API_KEY",
                        "--readygate.state-dir=" + dir.resolve("state")));
        running.add(readygate);

        try {
            await().atMost(READY_WITHIN)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> Loopback.status(port, "/readyz") == 200);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(
                    "not ready:\n" + readygate.logTail(30) + "\nllama-server:\n" + engine.logTail(20), e);
        }
        assertThat(Loopback.get(port, "/status").body()).doesNotContain(key);
        assertThat(Files.readString(dir.resolve("readygate.log"))).doesNotContain(key);
    }

    @Test
    void anotherSeedAtTheSamePathIsACanaryMismatch() {
        Path model = GgufModel.small(11).writeTo(dir.resolve("model.gguf"));
        LlamaServer engine = llama(model, "-c", "2048", "--metrics");
        WebTestClient client = readygate(engine.baseUrl());
        awaitReady(client, engine);

        engine.kill();
        await().atMost(Duration.ofSeconds(2)).until(() -> ReadygateClients.readyz(client) == 503);
        GgufModel.small(12).writeTo(model);
        engine.restart();

        JsonNode status = awaitReason(client, "canary_mismatch");
        assertThat(status.get("ready").booleanValue()).isFalse();
        assertThat(status.at("/probes/canary/last/canary/matches").booleanValue())
                .isFalse();
    }

    @Test
    void anotherModelCopiedOverThePathLearnsItsOwnBaselineAndTheSwapsAreNoRestartLoop() {
        // Issue 24 item 8: another model (another size, so another /v1/models meta) copied over the path llama-server
        // loads, then the first one back; a restart loop of two starts would hold each for five minutes.
        Path model = GgufModel.small(21).writeTo(dir.resolve("model.gguf"));
        LlamaServer engine = llama(model, "-c", "2048", "--metrics");
        WebTestClient client =
                readygate(engine.baseUrl(), "--readygate.restart.loop-starts=2", "--readygate.restart.loop-hold=5m");
        awaitReady(client, engine);

        for (GgufModel next : List.of(new GgufModel(128, 2, 4, 256, 2048, 22), GgufModel.small(21))) {
            engine.kill();
            await().atMost(Duration.ofSeconds(5)).until(() -> ReadygateClients.readyz(client) == 503);
            next.writeTo(model);
            engine.restart();
            awaitReady(client, engine);
        }

        JsonNode status = ReadygateClients.status(client);
        assertThat(status.at("/restarts/restartLoop").booleanValue()).isFalse();
        // The first model is back: held to the baseline it taught, not taught again.
        assertThat(status.at("/probes/canary/last/canary/expectedFrom").asString())
                .isEqualTo("learned_baseline");
    }

    @Test
    void otherWeightsTheOperatorAcceptsServeAndTheAuditSaysWho() throws IOException {
        // The same identity with other weights stays canary_mismatch, until readygate accept-model.
        Path model = GgufModel.small(31).writeTo(dir.resolve("model.gguf"));
        LlamaServer engine = llama(model, "-c", "2048", "--metrics");
        WebTestClient client = readygate(engine.baseUrl());
        awaitReady(client, engine);
        engine.kill();
        await().atMost(Duration.ofSeconds(5)).until(() -> ReadygateClients.readyz(client) == 503);
        GgufModel.small(32).writeTo(model);
        engine.restart();
        awaitReason(client, "canary_mismatch");

        java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        int exit = dev.readygate.check.AcceptLauncher.run(
                new String[] {
                    "--reason=fine-tuned weights, ticket 24",
                    "--by=operator",
                    "--wait=90s",
                    "--readygate.state-dir=" + dir.resolve("state")
                },
                new java.io.PrintStream(printed, true, java.nio.charset.StandardCharsets.UTF_8));

        String output = printed.toString(java.nio.charset.StandardCharsets.UTF_8);
        System.out.println("readygate accept-model:\n" + output);
        assertThat(exit).as(output).isZero();
        awaitReady(client, engine);
        assertThat(Files.readString(dir.resolve("state").resolve("canary-acceptances.jsonl")))
                .contains("\"by\":\"operator\"")
                .contains("\"reason\":\"fine-tuned weights, ticket 24\"")
                .contains("\"outcome\":\"accepted\"");
    }

    @Test
    void aChatOnlyServerIsVerifiedThroughChatCompletions() {
        // Issue 24 item 11: llama-server behind a proxy that hides /v1/completions, as a chat-only server.
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");
        HidingProxy proxy = proxy(engine, "/v1/completions", "/completions");
        WebTestClient client = readygate(proxy.baseUrl());

        awaitReady(client, engine);

        JsonNode status = ReadygateClients.status(client);
        assertThat(status.at("/engine/endpoints/completions").asString())
                .startsWith("missing: POST /v1/completions answered 404")
                .contains("the probes go through POST /v1/chat/completions");
        assertThat(status.at("/engine/capabilities/promptTokens").asString()).startsWith("proven by calibration");
        assertThat(status.at("/probes/representative/last/detail").asString()).contains("prompt count exact");
    }

    @Test
    void checkAgainstLlamaServerExitsZeroAndSaysWhatItSaw() {
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");

        ReadygateJar.Result check = check(engine, "--readygate.evidence.engine-log=" + engine.log());

        System.out.println("readygate check against llama-server:\n" + check.output());
        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output())
                .contains("dialect        llama.cpp (/v1/models owned_by llamacpp)")
                .contains("max_model_len  2048 (/props default_generation_settings.n_ctx)")
                .contains("prompt tokens  planned 512, sent 512, the engine counted 512")
                .contains("stable      yes:")
                .contains("no restart detection by process start")
                .contains("none of them vLLM's")
                .contains("verdict: readygate would gate this engine correctly (exit 0)");
    }

    @Test
    void checkOfALlamaServerThatWantsAnApiKeySaysSoNotSetMaxModelLen() {
        // llama-server answers /health and /v1/models without the key, /props and completions only with it.
        LlamaServer engine = llama(smallModel, "-c", "2048", "--api-key", "sk-llama-Ab12Cd34Ef56");
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        int exit = dev.readygate.check.CheckLauncher.run(
                new String[] {
                    "--readygate.engine.base-url=" + engine.baseUrl(),
                    "--readygate.state-dir=" + dir.resolve("check-state"),
                    "--readygate.check.wait-for-engine=30s"
                },
                new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8));
        String output = bytes.toString(java.nio.charset.StandardCharsets.UTF_8);

        System.out.println("readygate check against llama-server --api-key, without the key:\n" + output);
        assertThat(exit).as(output).isEqualTo(1);
        assertThat(output)
                .contains("it wants an API key: set readygate.engine.api-key-file")
                .doesNotContain("set readygate.engine.max-model-len");
        assertThat(dir.resolve("check-state")).as("the check writes nothing").doesNotExist();
    }

    @Test
    void checkAgainstLlamaServerWithTooSmallAContextExitsOne() {
        LlamaServer engine = llama(smallModel, "-c", "256");

        ReadygateJar.Result check = check(engine);

        System.out.println("readygate check against llama-server -c 256:\n" + check.output());
        assertThat(check.exitCode()).as(check.output()).isEqualTo(1);
        assertThat(check.output())
                .contains("probe_exceeds_context")
                .contains("max_model_len 256 (/props default_generation_settings.n_ctx)")
                .contains("no usable /metrics");
    }

    @Test
    void checkAgainstLlamaServerWithoutMetricsExitsThreeNamingTheLimit() {
        // Issue 24: it exited 0 with a warning, though 0 promises correct gating.
        LlamaServer engine = llama(smallModel, "-c", "2048");

        ReadygateJar.Result check = check(engine);

        System.out.println("readygate check against llama-server without --metrics:\n" + check.output());
        assertThat(check.exitCode()).as(check.output()).isEqualTo(3);
        assertThat(check.output())
                .contains("  - no usable /metrics")
                .contains("verdict: readygate would gate this engine, with the limits of the")
                .contains("(exit 3)")
                .doesNotContain("(exit 0)");
    }

    // --- issue 16: a ready engine ---

    @Test
    void aBusySlotIsNeverTakenForBrokenAndNoLightCheckWaitsForIt() throws Exception {
        // One slot (-np 1), taken by a long request: readygate stays ready, and sends no light check to wait for the
        // slot (llama-server adds to its token counters only when a request ends; llamacpp:requests_processing shows
        // the slot taken).
        LlamaServer engine = llama(smallModel, "-c", "32768", "-np", "1", "--metrics");
        WebTestClient client = readygate(engine.baseUrl());
        awaitReady(client, engine);
        List<String> states = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<String> deferred = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.time.Instant slotTaken;
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        // The long request is sent as a light check's verdict comes in, so that readygate's next scrape (every second)
        // sees the slot taken before the next light check is due (every 2 s). One sent in the second between the slot
        // taken and the scrape that shows it would wait for the slot: a race readygate cannot see, not what this test
        // is about (a CI run once lost it).
        String lastLight = lastLightCheck(client);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !lastLightCheck(client).equals(lastLight));
        java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>> longRequest = http.sendAsync(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(engine.baseUrl() + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                                "{\"prompt\":\"Once upon a time\",\"max_tokens\":32000,\"ignore_eos\":true}"))
                        .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        try {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> ReadygateClients.status(client)
                                    .at("/engine/metrics/requestsRunning")
                                    .asDouble(0)
                            > 0);
            slotTaken = java.time.Instant.now();
            // Long enough for several light checks (one every 2 s) if they were sent. The limit leaves room beyond the
            // 15 s: llama-server generating on every core slows each check of the condition (CI on 2 cores once took
            // more than 5 s over it with readygate ready throughout); the condition must still hold 15 s unbroken.
            await().during(Duration.ofSeconds(15))
                    .atMost(Duration.ofSeconds(45))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        JsonNode status = ReadygateClients.status(client);
                        states.add(status.path("state").asString() + "/"
                                + status.path("reason").asString(""));
                        // A light check sent now would wait in llama-server's queue: requests_deferred 1.
                        deferred.add(java.util.regex.Pattern.compile("(?m)^llamacpp:requests_deferred (\\S+)$")
                                .matcher(http.send(
                                                java.net.http.HttpRequest.newBuilder(
                                                                java.net.URI.create(engine.baseUrl() + "/metrics"))
                                                        .build(),
                                                java.net.http.HttpResponse.BodyHandlers.ofString())
                                        .body())
                                .results()
                                .map(match -> match.group(1))
                                .findFirst()
                                .orElse("absent"));
                        return ReadygateClients.readyz(client) == 200 && !longRequest.isDone();
                    });
        } finally {
            longRequest.cancel(true);
        }
        System.out.println("requests_deferred while the slot was taken: " + deferred + "; states: "
                + new java.util.LinkedHashSet<>(states));
        assertThat(states).as("busy is not broken").allMatch(state -> state.startsWith("ready/"));
        // Its only slot taken: a light check would wait for it holding one of llama-server's three HTTP threads
        // (until the slot frees, even once given up), so none is sent while the slot stays taken: nothing waited.
        assertThat(deferred).isNotEmpty().allMatch(value -> value.equals("0"));
        // Each one due is judged from llama-server's decode steps instead: they moved, busy.
        JsonNode generation = ReadygateClients.status(client).at("/probes/generation/last");
        assertThat(java.time.Instant.parse(generation.path("at").asString()))
                .as(generation.toString())
                .isAfter(slotTaken);
        assertThat(generation.path("outcome").asString())
                .as(generation.toString())
                .isEqualTo("busy");
        assertThat(generation.path("detail").asString())
                .as(generation.toString())
                .startsWith("light check put off, every slot taken (1 requests processing, 0 deferred): ")
                .containsPattern("[0-9]+ decode steps in [0-9]+ s");
    }

    /** When the latest light check was judged, as {@code /status} shows it ("" before the first). */
    private static String lastLightCheck(WebTestClient client) {
        return ReadygateClients.status(client).at("/probes/generation/last/at").asString("");
    }

    @Test
    void generationThatFailsOnAReadyEngineIsSeenByTheLightChecksWithinSeconds() {
        // llama-server keeps answering /health and /metrics; its completions start failing (404 through the proxy).
        LlamaServer engine = llama(smallModel, "-c", "2048", "--metrics");
        HidingProxy proxy = proxy(engine);
        WebTestClient client = readygate(proxy.baseUrl());
        awaitReady(client, engine);

        proxy.hide("/v1/completions");
        Instant broke = Instant.now();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> ReadygateClients.readyz(client) == 503);
        Duration seen = Duration.between(broke, Instant.now());
        JsonNode status = ReadygateClients.status(client);
        assertThat(status.get("reason").asString()).isEqualTo("generation_failed");
        assertThat(status.at("/probes/generation/lastFailure/detail").asString())
                .contains("404");
        // Five seconds is the goal; the bound here is loose (a shared machine): the benchmark measures it.
        assertThat(seen).isLessThan(Duration.ofSeconds(12));
        assertThat(Loopback.status(engine.port(), "/health")).isEqualTo(200);
    }

    // --- issue 24 ---

    @Test
    void anIdleSlowCpuEngineOnALoadedMachineIsNeverTakenOutByItsLightChecks() throws IOException {
        // A 1024-wide, 8-layer model (F32, 674 MB) on one thread: on a 2-core machine loaded by other work (this
        // suite's own, or a CI neighbour's) a light check takes seconds, not the 750 ms of generation.timeout (a GPU's
        // budget), and timed out at every check. Its budget now follows the speed the representative probe measured
        // on this start. The probe's size and heavy-timeout are what engines.md says a CPU engine needs. (On a quiet
        // machine the checks fit 750 ms anyway: the test loads the cores itself, from before the representative probe
        // measures the speed to the end. It passed in CI only while an earlier test's load had leaked into it.)
        Path model = new GgufModel(1024, 8, 16, 2816, 2048, 24).writeTo(dir.resolve("cpu.gguf"));
        // HTTP threads as engines.md says (-np + 3 at least): a slow stream holds one the whole time.
        LlamaServer engine = llama(model, "-c", "2048", "--metrics", "-np", "1", "--threads-http", "6");
        List<Process> load = loadTheCores(Runtime.getRuntime().availableProcessors());
        try {
            onALoadedMachine(engine);
        } finally {
            load.forEach(LlamaServerIT::stopLoad);
        }
    }

    private void onALoadedMachine(LlamaServer engine) {
        WebTestClient client = readygate(
                engine.baseUrl(),
                "--readygate.probe.heavy-timeout=60s",
                "--readygate.probe.representative.prompt-tokens=128",
                "--readygate.probe.representative.output-tokens=16");
        awaitReady(client, engine);
        Instant ready = Instant.now();

        List<String> states = new java.util.concurrent.CopyOnWriteArrayList<>();
        await().during(Duration.ofSeconds(20))
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    JsonNode status = ReadygateClients.status(client);
                    states.add(ReadygateClients.readyz(client) + " "
                            + status.path("state").asString() + "/"
                            + status.path("reason").asString(""));
                    return true;
                });

        // Never 503 (before the budget followed the speed: generation_timed_out "no event yet within 750 ms" at every
        // check, not_ready after three). A check a sudden spike of the machine's load delays past its budget may
        // degrade it for a check; failure-threshold is what keeps that from a 503.
        JsonNode generation = ReadygateClients.status(client).at("/probes/generation");
        assertThat(states).as(generation.toString()).isNotEmpty().allMatch(state -> state.startsWith("200 "));
        JsonNode last = generation.path("last");
        assertThat(Instant.parse(last.path("at").asString()))
                .as(last.toString())
                .isAfter(ready);
        assertThat(last.path("outcome").asString()).as(last.toString()).isEqualTo("passed");
        java.util.regex.Matcher budget = java.util.regex.Pattern.compile(
                        "within a budget of ([0-9]+) ms \\(the measured speed\\)$")
                .matcher(last.path("detail").asString());
        assertThat(budget.find()).as(last.toString()).isTrue();
        System.out.println(
                "slow CPU engine's light check: " + last.path("detail").asString());
        // The floor (750 ms) where the measured speed asks less, as a spike's end can leave it; never below.
        assertThat(Long.parseLong(budget.group(1))).isGreaterThanOrEqualTo(750);
    }

    @Test
    void anEndlessStreamWithoutMetricsIsOverlongAndNotReadyWithinSeconds() {
        // llama-server without --metrics behind a proxy that, once readygate serves, answers every completion with
        // token events without end (190 a second, as the engine: 5,629 events for a check that asked 2). Each
        // light check waited out heavy-timeout (30 s, no /metrics): 94 s to 503. Now each is cut at its 11th event.
        LlamaServer engine = llama(smallModel, "-c", "2048");
        HidingProxy proxy = proxy(engine);
        WebTestClient client = readygate(proxy.baseUrl());
        awaitReady(client, engine);

        proxy.streamForever("/v1/completions");
        Instant endless = Instant.now();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> ReadygateClients.readyz(client) == 503);
        Duration seen = Duration.between(endless, Instant.now());

        JsonNode status = ReadygateClients.status(client);
        assertThat(status.get("reason").asString()).as(status.toString()).isEqualTo("overlong_stream");
        assertThat(status.at("/probes/generation/lastFailure/detail").asString())
                .contains("ran past what was asked");
        System.out.println("endless stream without /metrics: 503 after " + seen.toMillis() + " ms, at most "
                + proxy.mostEventsWritten.get() + " events written to one stream");
        // Four seconds is what the schedule gives (readiness.md); the bound is loose (a shared machine), and far below
        // the 94 s of one heavy-timeout a check.
        assertThat(seen).isLessThan(Duration.ofSeconds(20));
        // Cut where it ran past, not at a size bound: a few events, and what the sockets had buffered.
        assertThat(proxy.mostEventsWritten.get()).isLessThan(2000);
    }

    // --- issue 24: a busy llama-server, a loaded machine ---

    @Test
    void aProgressingLlamaServerUnderCpuContentionIsNeverJudgedStalled() throws Exception {
        // Four slots, two client streams, the cores loaded by busy processes: a light check that timed out there saw a
        // few decode steps (each one batching both streams), and was taken for a stall because they were fewer than the
        // check's own prompt and output tokens. A model wide enough (512, 4 layers) for a step to take milliseconds,
        // and
        // light checks of 64 tokens: one that times out (750 ms) under this load sees fewer steps than its own tokens.
        Path model = new GgufModel(512, 4, 8, 1376, 2048, 5).writeTo(dir.resolve("medium.gguf"));
        // 8192 tokens of context a slot: the client streams outlast the 40 s window on a quiet machine too (1,500
        // tokens each ended within it on the quiet CI of this change).
        LlamaServer engine = llama(model, "-c", "32768", "-np", "4", "--metrics");
        WebTestClient client = readygate(
                engine.baseUrl(),
                "--readygate.probe.generation.output-tokens=64",
                "--readygate.probe.representative.prompt-tokens=64",
                "--readygate.probe.representative.output-tokens=8");
        awaitReady(client, engine);
        List<java.util.concurrent.CompletableFuture<?>> streams = List.of(stream(engine, 7500), stream(engine, 7500));
        List<Process> load = new ArrayList<>();
        List<String> notReady = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<String> verdicts = new java.util.concurrent.CopyOnWriteArrayList<>();
        try {
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> ReadygateClients.status(client)
                                    .at("/engine/metrics/requestsRunning")
                                    .asDouble(0)
                            >= 2);
            load.addAll(loadTheCores(Runtime.getRuntime().availableProcessors()));
            Instant loaded = Instant.now();
            sample(client, Duration.ofSeconds(40), notReady, verdicts, () -> {});
            assertThat(streams).as("the client streams ran throughout").noneMatch(java.util.concurrent.Future::isDone);
            JsonNode generation = ReadygateClients.status(client).at("/probes/generation/last");
            assertThat(Instant.parse(generation.path("at").asString()))
                    .as("a light check was judged under load: " + generation)
                    .isAfter(loaded);
        } finally {
            load.forEach(LlamaServerIT::stopLoad);
            streams.forEach(stream -> stream.cancel(true));
        }
        System.out.println("light checks under contention: " + verdicts);
        // No light check taken for a stall while both streams advanced, and 0 s at 503 (sampled every 100 ms).
        assertThat(verdicts).noneMatch(verdict -> verdict.contains("no progress of them"));
        assertThat(notReady)
                .as("never 503 while the engine progresses; light checks: " + verdicts)
                .isEmpty();
    }

    @Test
    void aBusyLlamaServerWithoutMetricsStaysReadyAndItsHealthAnswers() throws Exception {
        // One slot (-np 1), no --metrics, one client streaming: readygate's light checks must neither take the engine
        // out nor hold the server's few HTTP threads so that /health gets none. /slots shows the slot taken: no light
        // check is sent to wait for it (one sent just before the client took the slot waits, and is busy when /slots
        // read again shows the slot taken by a request that advances: seen here, "no event yet within 30000 ms while
        // waiting for a slot"). HTTP threads as engines.md says (-np + 3). Not under the extra CPU load: on a machine
        // at a load average of 20 to 90 (two cores), one of llama-server's /health answers took over 1 s near the end
        // of the window in two runs of two (readygate stayed ready throughout).
        busyWithOneSlotAndNoMetrics(false, "--slots", "--threads-http", "4");
    }

    @Test
    void aBusyLlamaServerWithNeitherMetricsNorSlotsStaysReadyAndItsHealthAnswers() throws Exception {
        // Nothing shows readygate the slot taken: a light check waits for it in llama-server's queue. Before, it timed
        // out at heavy-timeout, was given up (the server kept its thread) and another followed at once. Now the one
        // waiting is busy, and no other is sent beside it until it ends. HTTP threads as engines.md says (-np + 3). The
        // cores loaded by busy processes (two runs of two passed: /readyz 200 and /health within 1 s throughout).
        busyWithOneSlotAndNoMetrics(true, "--threads-http", "4");
    }

    /** llama-server -np 1 without --metrics, one client streaming, the cores busy if {@code loaded}. */
    private void busyWithOneSlotAndNoMetrics(boolean loaded, String... flags) throws Exception {
        List<String> arguments = new ArrayList<>(List.of("-c", "32768", "-np", "1"));
        arguments.addAll(List.of(flags));
        LlamaServer engine = llama(smallModel, arguments.toArray(String[]::new));
        WebTestClient client = readygate(engine.baseUrl());
        awaitReady(client, engine);
        java.util.concurrent.CompletableFuture<?> stream = stream(engine, 32000);
        List<Process> load = loaded ? loadTheCores(Runtime.getRuntime().availableProcessors()) : List.of();
        List<String> notReady = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<String> verdicts = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Integer> health = new java.util.concurrent.CopyOnWriteArrayList<>();
        try {
            // A kubelet's probe of the engine itself (1 s timeout) beside readygate's own.
            sample(client, Duration.ofSeconds(45), notReady, verdicts, () -> health.add(health(engine)));
            assertThat(stream).as("the client stream ran throughout").isNotDone();
        } finally {
            load.forEach(LlamaServerIT::stopLoad);
            stream.cancel(true);
        }
        System.out.println("light checks on a busy llama-server " + arguments + ": " + verdicts);
        assertThat(notReady)
                .as("never 503 while the engine serves; light checks: " + verdicts)
                .isEmpty();
        assertThat(health)
                .as("llama-server's /health answered within 1 s throughout")
                .isNotEmpty()
                .allMatch(code -> code == 200);
        assertThat(verdicts).as("no light check failed").noneMatch(verdict -> verdict.contains(" failed "));
    }

    /** llama-server's own {@code /health}, as a kubelet probes it (1 s): its status, or -1 without an answer. */
    private static int health(LlamaServer engine) {
        try (java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(1))
                .build()) {
            return http.send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(engine.baseUrl() + "/health"))
                                    .timeout(Duration.ofSeconds(1))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** A streamed completion of {@code tokens} tokens (no end of sequence), read as it comes. */
    private static java.util.concurrent.CompletableFuture<?> stream(LlamaServer engine, int tokens) {
        return java.net.http.HttpClient.newHttpClient()
                .sendAsync(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(engine.baseUrl() + "/v1/completions"))
                                .header("Content-Type", "application/json")
                                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"prompt\":\"Once upon a"
                                        + " time\",\"max_tokens\":" + tokens + ",\"ignore_eos\":true,\"stream\":true}"))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Stops one busy process and its shell: killing only {@code timeout} (SIGKILL cannot be forwarded) left its busy
     * shell running for good, and the rest of the suite ran on a loaded machine.
     */
    private static void stopLoad(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /** {@code count} busy processes, each ending by itself within a minute (and stopped by the caller before). */
    private static List<Process> loadTheCores(int count) throws IOException {
        List<Process> load = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            load.add(new ProcessBuilder("timeout", "60", "sh", "-c", "while :; do :; done")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start());
        }
        return load;
    }

    /**
     * {@code /readyz} every 100 ms for {@code window}: each 503 with its reason goes to {@code notReady}; each light
     * check judged meanwhile (its outcome and detail) to {@code verdicts}; {@code alsoEach} runs at every sample.
     */
    private static void sample(
            WebTestClient client, Duration window, List<String> notReady, List<String> verdicts, Runnable alsoEach) {
        Instant until = Instant.now().plus(window);
        await().atMost(window.plusSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    alsoEach.run();
                    int code = ReadygateClients.readyz(client);
                    JsonNode status = ReadygateClients.status(client);
                    if (code != 200) {
                        notReady.add(Instant.now() + " " + code + " "
                                + status.path("state").asString() + "/"
                                + status.path("reason").asString("") + ": "
                                + status.path("detail").asString(""));
                    }
                    JsonNode last = status.at("/probes/generation/last");
                    String verdict = last.path("at").asString("") + " "
                            + last.path("outcome").asString("") + " "
                            + last.path("detail").asString("");
                    if (!last.isMissingNode()
                            && (verdicts.isEmpty() || !verdicts.getLast().equals(verdict))) {
                        verdicts.add(verdict);
                    }
                    return Instant.now().isAfter(until);
                });
    }

    // --- fixtures ---

    /** {@code java -jar target/readygate.jar check} against {@code engine}. */
    private ReadygateJar.Result check(LlamaServer engine, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "check",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + dir.resolve("state")));
        args.addAll(List.of(extra));
        return ReadygateJar.run(dir.resolve("check.log"), Map.of(), Duration.ofMinutes(3), args);
    }

    private LlamaServer llama(Path model, String... flags) {
        return llama(model, Map.of(), flags);
    }

    private LlamaServer llama(Path model, Map<String, String> environment, String... flags) {
        Path binary = LlamaServer.binary();
        LlamaServer engine =
                LlamaServer.start(binary, model, dir.resolve("llama-" + running.size() + ".log"), environment, flags);
        running.add(engine);
        return engine;
    }

    private HidingProxy proxy(LlamaServer engine, String... hidden) {
        HidingProxy proxy = HidingProxy.hiding(engine.baseUrl(), hidden);
        running.add(proxy);
        return proxy;
    }

    private WebTestClient readygate(String baseUrl, String... extra) {
        return ReadygateClients.client(readygateContext(baseUrl, dir.resolve("state"), extra));
    }

    private ConfigurableApplicationContext readygateContext(String baseUrl, Path state, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--server.address=127.0.0.1",
                "--server.port=0",
                "--readygate.engine.base-url=" + baseUrl,
                "--readygate.state-dir=" + state));
        args.addAll(List.of(extra));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
        running.add(context::close);
        return context;
    }

    private static void awaitReady(WebTestClient client, LlamaServer engine) {
        try {
            // A slow answer (a loaded machine) is asked again.
            await().atMost(READY_WITHIN)
                    .pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions()
                    .until(() -> ReadygateClients.readyz(client) == 200);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(
                    "not ready: " + ReadygateClients.status(client) + "\nllama-server's log:\n" + engine.logTail(30),
                    e);
        }
    }

    private static JsonNode awaitReason(WebTestClient client, String reason) {
        try {
            await().atMost(READY_WITHIN)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> reason.equals(
                            ReadygateClients.status(client).path("reason").asString()));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("never " + reason + ": " + ReadygateClients.status(client), e);
        }
        return ReadygateClients.status(client);
    }

    /** Whether {@code /readyz} stays 503 for {@code window} (sampled every 100 ms). */
    private static boolean neverReady(WebTestClient client, Duration window) {
        AtomicBoolean ready = new AtomicBoolean();
        Instant until = Instant.now().plus(window);
        await().atMost(window.plusSeconds(5))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    if (ReadygateClients.readyz(client) == 200) {
                        ready.set(true);
                    }
                    return Instant.now().isAfter(until);
                });
        return !ready.get();
    }

    /** The recorded starts, newest first. */
    private static JsonNode history(WebTestClient client) {
        return ReadygateClients.status(client).at("/restarts/history");
    }

    /** A recorded start's phases, in seconds after the engine started. */
    private static Map<String, Double> phases(JsonNode start) {
        Map<String, Double> phases = new java.util.HashMap<>();
        start.get("phaseOffsetsSeconds")
                .properties()
                .forEach(e -> phases.put(e.getKey(), e.getValue().doubleValue()));
        return phases;
    }
}
