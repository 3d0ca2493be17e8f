package dev.readygate.engine;

import static dev.readygate.engine.EngineCalls.call;
import static dev.readygate.engine.EngineCalls.client;
import static dev.readygate.engine.EngineCalls.failure;
import static dev.readygate.engine.EngineCalls.success;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.Fault;
import dev.readygate.simulator.SimulatedTokenizer;
import dev.readygate.simulator.SimulatorFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link WebClientEngineClient} against the vLLM 0.31 simulator over real HTTP, healthy and under each fault. */
class WebClientEngineClientTests {

    static final String CANARY_PROMPT = "The capital of France is";

    @TempDir
    static Path workDir;

    static SimulatorFixture simulator;

    static WebClientEngineClient client;

    @BeforeAll
    static void start() {
        simulator = SimulatorFixture.serving(workDir, "preload.enabled=false", "faults.stall-after-tokens=2");
        client = client(simulator.engineUrl(), Duration.ofMillis(800), EngineApiKey.none());
    }

    @AfterAll
    static void stop() {
        client.close();
        simulator.close();
    }

    @AfterEach
    void clearFaults() {
        simulator.clearFaults();
    }

    CompletionRequest representative() {
        // 200 prompt tokens as ids (any in-vocabulary ids will do), exactly 16 output tokens.
        List<Integer> prompt =
                IntStream.range(0, 200).map(i -> 300 + i % 100).boxed().toList();
        return new CompletionRequest(simulator.servedModelName(), null, prompt, 16, 16, true, 0.0, null, null, true);
    }

    CompletionRequest canary() {
        return new CompletionRequest(simulator.servedModelName(), CANARY_PROMPT, null, 1, 1, false, 0.0, 0L, 0, true);
    }

    @Test
    void healthWhenEngineServesReturnsSuccess() {
        EngineCall<Void> call = call(client.health());

        assertThat(call).isInstanceOf(EngineCall.Success.class);
        assertThat(call.elapsed()).isPositive();
    }

    @Test
    void healthWhenEngineIsDeadReturnsHttpStatus503() {
        simulator.fault(Fault.ENGINE_DEAD);

        EngineFailure failure = failure(client.health());

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.HTTP_STATUS);
        assertThat(failure.httpStatus()).isEqualTo(503);
    }

    @Test
    void healthWhenEngineIsStoppedReturnsRefused(@TempDir Path ownWorkDir) {
        try (SimulatorFixture stopped = SimulatorFixture.serving(ownWorkDir, "preload.enabled=false");
                WebClientEngineClient stoppedClient = client(stopped.engineUrl())) {
            assertThat(call(stoppedClient.health())).isInstanceOf(EngineCall.Success.class);

            stopped.stopEngine();

            assertThat(failure(stoppedClient.health()).kind()).isEqualTo(EngineFailure.Kind.REFUSED);
            assertThat(failure(stoppedClient.streamCompletion(canary(), Duration.ofSeconds(2)))
                            .kind())
                    .isEqualTo(EngineFailure.Kind.REFUSED);
        }
    }

    @Test
    void modelWhenEngineServesReturnsTheServedModelCard() {
        ModelCard card = success(client.model());

        assertThat(card).isEqualTo(new ModelCard("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B", 4096, "vllm"));
    }

    @Test
    void versionWhenEngineServesReturnsTheVllmVersion() {
        assertThat(success(client.version())).isEqualTo("0.31.0");
    }

    @Test
    void tokenizeWhenEngineServesReturnsItsTokenCountAndMaxModelLen() {
        String prompt = "The capital of France is Paris, and the capital of Japan is Tokyo.";

        TokenCount count = success(client.tokenize(EngineDialect.VLLM, simulator.servedModelName(), prompt));

        assertThat(count.count())
                .isEqualTo(SimulatedTokenizer.instance().encode(prompt, false).size());
        assertThat(count.maxModelLen()).isEqualTo(4096);
    }

    @Test
    void metricsWhenEngineServesParsesTheSeriesAndTheCountersRiseAfterACompletion() {
        EngineMetricsSample before = success(client.metrics());

        assertThat(before.kvCacheSizeTokens()).isEqualTo(65536L);
        assertThat(before.processStartTimeSeconds()).isNotNull().isPositive();
        assertThat(before.requestsRunning()).isZero();
        assertThat(before.requestsWaiting()).isZero();
        assertThat(before.generationTokens()).isNotNull();
        assertThat(before.promptTokens()).isNotNull();
        assertThat(before.requestSuccess()).isNotNull();

        success(client.streamCompletion(representative(), Duration.ofSeconds(10)));

        EngineMetricsSample after = success(client.metrics());
        assertThat(after.generationTokens()).isEqualTo(before.generationTokens() + 16);
        assertThat(after.promptTokens()).isEqualTo(before.promptTokens() + 200);
        assertThat(after.processStartTimeSeconds()).isEqualTo(before.processStartTimeSeconds());
        // The engine counts a success once the request is finished, which can be a moment after [DONE] is sent.
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() ->
                        assertThat(success(client.metrics()).requestSuccess()).isEqualTo(before.requestSuccess() + 1));
    }

    @Test
    void streamCompletionWhenRepresentativeRequestReportsUsageTokensAndTiming() {
        StreamedCompletion completion = success(client.streamCompletion(representative(), Duration.ofSeconds(10)));

        assertThat(completion.promptTokens()).isEqualTo(200);
        assertThat(completion.completionTokens()).isEqualTo(16);
        assertThat(completion.finishReason()).isEqualTo("length");
        assertThat(completion.tokenIds()).hasSize(16);
        assertThat(completion.textChunks()).isEqualTo(16);
        assertThat(completion.text()).isNotEmpty();
        assertThat(completion.errorEvent()).isNull();
        assertThat(completion.timeToFirstToken()).isPositive();
        assertThat(completion.maxInterTokenLatency()).isPositive();
        assertThat(completion.meanInterTokenLatency())
                .isPositive()
                .isLessThanOrEqualTo(completion.maxInterTokenLatency());
        assertThat(completion.total()).isGreaterThan(completion.timeToFirstToken());
        assertThat(completion.toString()).doesNotContain(completion.text());
    }

    @Test
    void streamCompletionWhenCanaryIsRepeatedReturnsTheSameTokenAndLogprob() {
        StreamedCompletion first = success(client.streamCompletion(canary(), Duration.ofSeconds(5)));
        StreamedCompletion second = success(client.streamCompletion(canary(), Duration.ofSeconds(5)));

        assertThat(first.tokenIds()).hasSize(1);
        assertThat(first.tokenLogprobs()).hasSize(1);
        assertThat(first.tokenLogprobs().getFirst()).isFinite().isNotPositive();
        assertThat(second.tokenIds()).isEqualTo(first.tokenIds());
        assertThat(second.tokenLogprobs()).isEqualTo(first.tokenLogprobs());
        assertThat(second.text()).isEqualTo(first.text());
    }

    @Test
    void streamCompletionWhenPromptIsTooLongReturnsHttpStatus400WithTheEnginesMessage() {
        CompletionRequest tooLong = new CompletionRequest(
                simulator.servedModelName(), CANARY_PROMPT, null, 5000, 1, true, 0.0, null, null, false);

        EngineFailure failure = failure(client.streamCompletion(tooLong, Duration.ofSeconds(5)));

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.HTTP_STATUS);
        assertThat(failure.httpStatus()).isEqualTo(400);
        assertThat(failure.detail())
                .contains("maximum context length is 4096 tokens")
                .doesNotContain(CANARY_PROMPT);
        assertThat(failure.detail().length()).isLessThanOrEqualTo(250);
    }

    @Test
    void streamCompletionWhenEngineHangsReturnsTimedOut() {
        simulator.fault(Fault.HANG);

        EngineCall<StreamedCompletion> call = call(client.streamCompletion(canary(), Duration.ofMillis(300)));

        assertThat(call).isInstanceOf(EngineCall.Failure.class);
        EngineFailure failure = ((EngineCall.Failure<StreamedCompletion>) call).failure();
        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.TIMED_OUT);
        assertThat(failure.detail()).contains("no event yet within 300 ms");
        assertThat(call.elapsed()).isBetween(Duration.ofMillis(300), Duration.ofSeconds(5));
    }

    @Test
    void healthWhenEngineHangsEverywhereReturnsTimedOutAfterTheRequestTimeout() {
        simulator.faultEverywhere(Fault.HANG);

        EngineCall<Void> call = call(client.health());

        assertThat(call).isInstanceOf(EngineCall.Failure.class);
        assertThat(((EngineCall.Failure<Void>) call).failure().kind()).isEqualTo(EngineFailure.Kind.TIMED_OUT);
        assertThat(call.elapsed()).isBetween(Duration.ofMillis(800), Duration.ofSeconds(5));
    }

    @Test
    void streamCompletionWhenStreamStallsReturnsStalled() {
        simulator.fault(Fault.STALL_STREAM);

        EngineFailure failure = failure(client.streamCompletion(representative(), Duration.ofMillis(500)));

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.STALLED);
        assertThat(failure.detail()).contains("stalled after 2 events");
    }

    @Test
    void streamCompletionWhenEngineFailsReturnsHttpStatus500WithTheEnginesMessage() {
        simulator.fault(Fault.ERROR_5XX);

        EngineFailure failure = failure(client.streamCompletion(canary(), Duration.ofSeconds(5)));

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.HTTP_STATUS);
        assertThat(failure.httpStatus()).isEqualTo(500);
        assertThat(failure.detail()).isEqualTo("POST /v1/completions answered 500: Internal server error");
    }

    @Test
    void streamCompletionWhenEngineIsBusyReturnsHttpStatus429() {
        simulator.fault(Fault.BUSY_429);

        EngineFailure failure = failure(client.streamCompletion(canary(), Duration.ofSeconds(5)));

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.HTTP_STATUS);
        assertThat(failure.httpStatus()).isEqualTo(429);
        assertThat(failure.detail()).contains("overloaded");
    }

    @Test
    void modelWhenBodyIsMalformedReturnsMalformedBody() {
        simulator.faultEverywhere(Fault.MALFORMED_JSON);

        EngineFailure failure = failure(client.model());

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.MALFORMED_BODY);
        assertThat(failure.detail()).startsWith("/v1/models: body is not JSON");
    }

    @Test
    void streamCompletionWhenStreamIsMalformedReturnsMalformedBody() {
        simulator.fault(Fault.MALFORMED_JSON);

        EngineFailure failure = failure(client.streamCompletion(representative(), Duration.ofSeconds(5)));

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.MALFORMED_BODY);
        assertThat(failure.detail()).startsWith("stream event 1 is not JSON");
    }

    @Test
    void streamCompletionWhenStreamIsCutReturnsTruncatedStream() {
        simulator.fault(Fault.TRUNCATED_SSE);

        EngineFailure failure = failure(client.streamCompletion(representative(), Duration.ofSeconds(5)));

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.TRUNCATED_STREAM);
        assertThat(failure.detail()).contains("after 2 events");
    }

    @Test
    void streamCompletionWhenConnectionIsResetReturnsReset() {
        simulator.fault(Fault.RESET);

        EngineFailure failure = failure(client.streamCompletion(canary(), Duration.ofSeconds(5)));

        assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.RESET);
    }

    @Test
    void healthWhenConnectionIsResetEverywhereReturnsReset() {
        simulator.faultEverywhere(Fault.RESET);

        assertThat(failure(client.health()).kind()).isEqualTo(EngineFailure.Kind.RESET);
    }

    @Test
    void streamCompletionWhenGenerationFailsReturnsTheErrorEvent() {
        simulator.fault(Fault.GENERATION_FAILS);

        StreamedCompletion completion = success(client.streamCompletion(representative(), Duration.ofSeconds(5)));

        assertThat(completion.errorEvent()).startsWith("EngineCore encountered an issue");
        assertThat(completion.tokenIds()).isEmpty();
        assertThat(completion.finishReason()).isNull();
        assertThat(completion.completionTokens()).isZero();
    }

    @Test
    void callsWhenEngineWantsAnApiKeySendTheKeyAndNeverShowIt(@TempDir Path ownWorkDir) {
        String key = "sk-readygate-test-0123456789";
        try (SimulatorFixture guarded =
                        SimulatorFixture.serving(ownWorkDir, "preload.enabled=false", "api-key=" + key);
                WebClientEngineClient withoutKey = client(guarded.engineUrl());
                WebClientEngineClient wrongKey =
                        client(guarded.engineUrl(), Duration.ofSeconds(5), EngineApiKey.of("sk-wrong-key-000"));
                WebClientEngineClient withKey =
                        client(guarded.engineUrl(), Duration.ofSeconds(5), EngineApiKey.of(key))) {
            EngineFailure missing = failure(withoutKey.model());
            assertThat(missing.kind()).isEqualTo(EngineFailure.Kind.HTTP_STATUS);
            assertThat(missing.httpStatus()).isEqualTo(401);
            assertThat(missing.detail()).contains("readygate has none");

            EngineFailure refused = failure(wrongKey.model());
            assertThat(refused.httpStatus()).isEqualTo(401);
            assertThat(refused.detail()).contains("refused readygate's API key").doesNotContain("sk-wrong-key-000");

            assertThat(success(withKey.model()).id()).isEqualTo("Qwen/Qwen3-0.6B");
            assertThat(success(withKey.streamCompletion(canary(), Duration.ofSeconds(5)))
                            .tokenIds())
                    .hasSize(1);
        }
    }
}
