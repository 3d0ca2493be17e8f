package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

/** The engine's HTTP surface over real HTTP, shaped as vLLM 0.31 answers (reference §1.3, §2). */
class EngineApiContractTests {

    @TempDir
    static Path workDir;

    static RunningSimulator running;

    @BeforeAll
    static void start() {
        running = RunningSimulator.serving(workDir, "model.eos-every=3", "preload.enabled=false");
    }

    @AfterAll
    static void stop() {
        running.close();
    }

    static JsonNode postJson(String path, Object body) {
        return running.postJson(path, body);
    }

    static String postForString(String path, Object body) {
        return postForString(running, path, body);
    }

    /** POSTs JSON to {@code engine}, expects 200 and returns the body as text. */
    static String postForString(RunningSimulator engine, String path, Object body) {
        return engine.engine()
                .post()
                .uri(path)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    static JsonNode postExpectingError(String path, String body, HttpStatus status) {
        byte[] response = running.engine()
                .post()
                .uri(path)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isEqualTo(status)
                .expectBody()
                .returnResult()
                .getResponseBody();
        return Sse.JSON.readTree(response);
    }

    @Test
    void healthAnswers200WithEmptyBody() {
        running.engine()
                .get()
                .uri("/health")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .isEmpty();
    }

    @Test
    void pingAnswersLikeHealthOnGetAndPost() {
        running.engine().get().uri("/ping").exchange().expectStatus().isOk();
        running.engine().post().uri("/ping").exchange().expectStatus().isOk();
    }

    @Test
    void versionReportsTheConfiguredVllmVersion() {
        running.engine()
                .get()
                .uri("/version")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .json("{\"version\":\"0.31.0\"}", org.springframework.test.json.JsonCompareMode.STRICT);
    }

    @Test
    void modelsListsOneModelCardWithRootAndMaxModelLen() {
        running.engine()
                .get()
                .uri("/v1/models")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.object")
                .isEqualTo("list")
                .jsonPath("$.data.length()")
                .isEqualTo(1)
                .jsonPath("$.data[0].id")
                .isEqualTo("Qwen/Qwen3-0.6B")
                .jsonPath("$.data[0].object")
                .isEqualTo("model")
                .jsonPath("$.data[0].owned_by")
                .isEqualTo("vllm")
                .jsonPath("$.data[0].root")
                .isEqualTo("Qwen/Qwen3-0.6B")
                .jsonPath("$.data[0].parent")
                .isEmpty()
                .jsonPath("$.data[0].max_model_len")
                .isEqualTo(4096)
                .jsonPath("$.data[0].created")
                .isNumber()
                .jsonPath("$.data[0].permission[0].object")
                .isEqualTo("model_permission")
                .jsonPath("$.data[0].permission[0].allow_logprobs")
                .isEqualTo(true);
    }

    @Test
    void tokenizeCountsTokensAndDetokenizeGivesTheTextBack() {
        String text = "The capital of France is Paris. Über-long words fall back to bytes: naïve 42!";
        JsonNode tokenized = postJson("/tokenize", Map.of("prompt", text, "return_token_strs", true));
        assertThat(tokenized.get("count").intValue())
                .isEqualTo(tokenized.get("tokens").size())
                .isGreaterThan(10);
        assertThat(tokenized.get("max_model_len").intValue()).isEqualTo(4096);
        assertThat(tokenized.get("token_strs").size())
                .isEqualTo(tokenized.get("count").intValue());
        List<Integer> ids =
                tokenized.get("tokens").valueStream().map(JsonNode::intValue).toList();
        JsonNode detokenized = postJson("/detokenize", Map.of("tokens", ids));
        assertThat(detokenized.get("prompt").asString()).isEqualTo(text);
    }

    @Test
    void tokenizeWithoutPromptIs400() {
        JsonNode error = postExpectingError("/tokenize", "{}", HttpStatus.BAD_REQUEST);
        assertThat(error.at("/error/code").intValue()).isEqualTo(400);
        assertThat(error.at("/error/message").asString()).contains("prompt");
    }

    @Test
    void completionHasVllmShapeAndExactUsage() {
        JsonNode body = postJson(
                "/v1/completions",
                Map.of(
                        "model",
                        "Qwen/Qwen3-0.6B",
                        "prompt",
                        "The capital of France is",
                        "max_tokens",
                        12,
                        "min_tokens",
                        12,
                        "ignore_eos",
                        true,
                        "temperature",
                        0));
        assertThat(body.get("id").asString()).startsWith("cmpl-");
        assertThat(body.get("object").asString()).isEqualTo("text_completion");
        assertThat(body.get("model").asString()).isEqualTo("Qwen/Qwen3-0.6B");
        JsonNode choice = body.get("choices").get(0);
        assertThat(choice.get("finish_reason").asString()).isEqualTo("length");
        assertThat(choice.get("text").asString()).isNotBlank();
        assertThat(choice.get("logprobs").isNull()).isTrue();
        assertThat(body.at("/usage/prompt_tokens").intValue()).isEqualTo(5);
        assertThat(body.at("/usage/completion_tokens").intValue()).isEqualTo(12);
        assertThat(body.at("/usage/total_tokens").intValue()).isEqualTo(17);
        assertThat(body.at("/usage/prompt_tokens_details").isNull()).isTrue();
        assertThat(body.has("kv_transfer_params")).isTrue();
    }

    @Test
    void canaryRequestReturnsTokenIdsTextAndOneLogprob() {
        JsonNode body = postJson("/v1/completions", canary());
        JsonNode choice = body.get("choices").get(0);
        assertThat(choice.get("token_ids").size()).isEqualTo(1);
        assertThat(choice.get("prompt_token_ids").size()).isEqualTo(5);
        assertThat(choice.at("/logprobs/token_logprobs").size()).isEqualTo(1);
        assertThat(choice.at("/logprobs/token_logprobs/0").doubleValue()).isNegative();
        assertThat(choice.at("/logprobs/tokens/0").asString())
                .isEqualTo(choice.get("text").asString());
        assertThat(choice.at("/logprobs/top_logprobs/0").size()).isEqualTo(1);
    }

    static Map<String, Object> canary() {
        return Map.of(
                "model",
                "Qwen/Qwen3-0.6B",
                "prompt",
                SnapshotArtifacts.ORACLE_PROMPT,
                "min_tokens",
                1,
                "max_tokens",
                1,
                "temperature",
                0,
                "seed",
                0,
                "logprobs",
                0,
                "return_token_ids",
                true);
    }

    @Test
    void sameDeterministicRequestGivesTheSameAnswerEveryTime() {
        Map<String, Object> request = Map.of(
                "prompt",
                "Once upon a time",
                "max_tokens",
                16,
                "temperature",
                0,
                "logprobs",
                2,
                "return_token_ids",
                true);
        JsonNode first = postJson("/v1/completions", request).get("choices").get(0);
        JsonNode second = postJson("/v1/completions", request).get("choices").get(0);
        assertThat(second.get("token_ids")).isEqualTo(first.get("token_ids"));
        assertThat(second.get("text")).isEqualTo(first.get("text"));
        assertThat(second.get("logprobs")).isEqualTo(first.get("logprobs"));
        assertThat(first.at("/logprobs/top_logprobs/0").size()).isEqualTo(3);
    }

    @Test
    void seededSamplingRepeatsAndUnseededSamplingVaries() {
        Map<String, Object> seeded = Map.of(
                "prompt",
                "Once upon a time",
                "max_tokens",
                24,
                "temperature",
                0.8,
                "seed",
                7,
                "ignore_eos",
                true,
                "return_token_ids",
                true);
        JsonNode a = postJson("/v1/completions", seeded).at("/choices/0/token_ids");
        JsonNode b = postJson("/v1/completions", seeded).at("/choices/0/token_ids");
        assertThat(b).isEqualTo(a);
        Map<String, Object> unseeded = Map.of(
                "prompt",
                "Once upon a time",
                "max_tokens",
                24,
                "temperature",
                0.8,
                "ignore_eos",
                true,
                "return_token_ids",
                true);
        JsonNode c = postJson("/v1/completions", unseeded).at("/choices/0/token_ids");
        JsonNode d = postJson("/v1/completions", unseeded).at("/choices/0/token_ids");
        assertThat(c).isNotEqualTo(d);
    }

    @Test
    void promptAsTokenIdsIsServedLikeTheSameText() {
        JsonNode tokenized = postJson("/tokenize", Map.of("prompt", "The capital of France is"));
        List<Integer> ids =
                tokenized.get("tokens").valueStream().map(JsonNode::intValue).toList();
        Map<String, Object> byText = Map.of(
                "prompt",
                "The capital of France is",
                "max_tokens",
                4,
                "temperature",
                0,
                "return_token_ids",
                true,
                "ignore_eos",
                true);
        Map<String, Object> byIds =
                Map.of("prompt", ids, "max_tokens", 4, "temperature", 0, "return_token_ids", true, "ignore_eos", true);
        JsonNode text = postJson("/v1/completions", byText);
        JsonNode tokens = postJson("/v1/completions", byIds);
        assertThat(tokens.at("/usage/prompt_tokens")).isEqualTo(text.at("/usage/prompt_tokens"));
        assertThat(tokens.at("/choices/0/token_ids")).isEqualTo(text.at("/choices/0/token_ids"));
    }

    @Test
    void withoutIgnoreEosGenerationStopsEarlyWithFinishReasonStop() {
        JsonNode body =
                postJson("/v1/completions", Map.of("prompt", "Tell me a story", "max_tokens", 60, "temperature", 0));
        assertThat(body.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
        assertThat(body.at("/usage/completion_tokens").intValue()).isLessThan(60);
    }

    @Test
    void minTokensHoldsBackEndOfSequence() {
        JsonNode body = postJson(
                "/v1/completions",
                Map.of("prompt", "Tell me a story", "max_tokens", 30, "min_tokens", 30, "temperature", 0));
        assertThat(body.at("/choices/0/finish_reason").asString()).isEqualTo("length");
        assertThat(body.at("/usage/completion_tokens").intValue()).isEqualTo(30);
    }

    @Test
    void streamedCompletionSendsOneChunkPerTokenThenUsageThenDone() {
        String body = postForString(
                "/v1/completions",
                Map.of(
                        "prompt",
                        "The capital of France is",
                        "max_tokens",
                        6,
                        "min_tokens",
                        6,
                        "ignore_eos",
                        true,
                        "stream",
                        true,
                        "stream_options",
                        Map.of("include_usage", true),
                        "return_token_ids",
                        true));
        List<JsonNode> events = Sse.jsonEvents(body);
        assertThat(events).hasSize(7);
        List<JsonNode> tokens = events.subList(0, 6);
        assertThat(tokens).allSatisfy(chunk -> {
            assertThat(chunk.get("object").asString()).isEqualTo("text_completion");
            assertThat(chunk.at("/choices/0/token_ids").size()).isEqualTo(1);
            assertThat(chunk.get("usage").isNull()).isTrue();
        });
        assertThat(tokens.get(0).at("/choices/0/prompt_token_ids").size()).isEqualTo(5);
        assertThat(tokens.get(1).at("/choices/0").has("prompt_token_ids")).isFalse();
        assertThat(tokens.subList(0, 5))
                .allSatisfy(
                        chunk -> assertThat(chunk.at("/choices/0/finish_reason").isNull())
                                .isTrue());
        assertThat(tokens.get(5).at("/choices/0/finish_reason").asString()).isEqualTo("length");
        JsonNode usage = events.get(6);
        assertThat(usage.get("choices").isEmpty()).isTrue();
        assertThat(usage.at("/usage/prompt_tokens").intValue()).isEqualTo(5);
        assertThat(usage.at("/usage/completion_tokens").intValue()).isEqualTo(6);
        // vLLM 0.31's final usage chunk leaves out the unset prompt_tokens_details.
        assertThat(usage.get("usage").has("prompt_tokens_details")).isFalse();
        assertThat(tokens.stream().map(chunk -> chunk.get("id").asString()).distinct())
                .containsExactly(usage.get("id").asString());
    }

    @Test
    void streamedCompletionWithoutIncludeUsageHasNoUsageChunk() {
        String body = postForString(
                "/v1/completions", Map.of("prompt", "Hi", "max_tokens", 3, "ignore_eos", true, "stream", true));
        List<JsonNode> events = Sse.jsonEvents(body);
        assertThat(events)
                .hasSize(3)
                .allSatisfy(chunk -> assertThat(chunk.get("choices").size()).isEqualTo(1));
    }

    @Test
    void continuousUsageStatsPutUsageOnEveryChunk() {
        String body = postForString(
                "/v1/completions",
                Map.of(
                        "prompt",
                        "Hi",
                        "max_tokens",
                        3,
                        "ignore_eos",
                        true,
                        "stream",
                        true,
                        "stream_options",
                        Map.of("include_usage", true, "continuous_usage_stats", true)));
        List<JsonNode> events = Sse.jsonEvents(body);
        assertThat(IntStream.range(0, 3)
                        .map(i -> events.get(i).at("/usage/completion_tokens").intValue()))
                .containsExactly(1, 2, 3);
    }

    @Test
    void streamedAndNonStreamedAnswersAgree() {
        Map<String, Object> request =
                Map.of("prompt", "The capital of France is", "max_tokens", 8, "temperature", 0, "ignore_eos", true);
        String text = postJson("/v1/completions", request).at("/choices/0/text").asString();
        Map<String, Object> streamed = new java.util.HashMap<>(request);
        streamed.put("stream", true);
        String joined = String.join(
                "",
                Sse.jsonEvents(postForString("/v1/completions", streamed)).stream()
                        .map(chunk -> chunk.at("/choices/0/text").asString())
                        .toList());
        assertThat(joined).isEqualTo(text);
    }

    @Test
    void chatCompletionAnswersAsTheAssistant() {
        Map<String, Object> request = Map.of(
                "messages",
                List.of(Map.of("role", "user", "content", "What is the capital of France?")),
                "max_completion_tokens",
                5,
                "ignore_eos",
                true,
                "logprobs",
                true,
                "top_logprobs",
                1);
        JsonNode body = postJson("/v1/chat/completions", request);
        assertThat(body.get("id").asString()).startsWith("chatcmpl-");
        assertThat(body.get("object").asString()).isEqualTo("chat.completion");
        assertThat(body.at("/choices/0/message/role").asString()).isEqualTo("assistant");
        assertThat(body.at("/choices/0/message/content").asString()).isNotBlank();
        assertThat(body.at("/choices/0/logprobs/content").size()).isEqualTo(5);
        assertThat(body.at("/choices/0/logprobs/content/0/top_logprobs").size()).isEqualTo(1);
        assertThat(body.at("/usage/completion_tokens").intValue()).isEqualTo(5);
        JsonNode tokenized = postJson("/tokenize", Map.of("messages", request.get("messages")));
        assertThat(body.at("/usage/prompt_tokens").intValue())
                .isEqualTo(tokenized.get("count").intValue());
    }

    @Test
    void streamedChatStartsWithTheRoleAndEndsWithUsageAndDone() {
        String body = postForString(
                "/v1/chat/completions",
                Map.of(
                        "messages",
                        List.of(Map.of("role", "user", "content", "Hello")),
                        "max_tokens",
                        3,
                        "ignore_eos",
                        true,
                        "stream",
                        true,
                        "stream_options",
                        Map.of("include_usage", true)));
        List<JsonNode> events = Sse.jsonEvents(body);
        assertThat(events).hasSize(5);
        assertThat(events.get(0).at("/choices/0/delta/role").asString()).isEqualTo("assistant");
        assertThat(events.get(1).get("object").asString()).isEqualTo("chat.completion.chunk");
        assertThat(events.get(1).at("/choices/0/delta").has("content")).isTrue();
        assertThat(events.get(3).at("/choices/0/finish_reason").asString()).isEqualTo("length");
        assertThat(events.get(4).at("/usage/completion_tokens").intValue()).isEqualTo(3);
    }

    @Test
    void promptPlusMaxTokensBeyondMaxModelLenIs400WithVllmsMessage() {
        String prompt = " the".repeat(4000);
        JsonNode error = postExpectingError(
                "/v1/completions", "{\"prompt\":\"" + prompt + "\",\"max_tokens\":200}", HttpStatus.BAD_REQUEST);
        assertThat(error.at("/error/message").asString())
                .isEqualTo("This model's maximum context length is 4096 tokens. However, you requested 200 output "
                        + "tokens and your prompt contains at least 3897 input tokens, for a total of at least 4097 "
                        + "tokens. Please reduce the length of the input prompt or the number of requested output "
                        + "tokens. (parameter=input_tokens, value=3897)");
        assertThat(error.at("/error/type").asString()).isEqualTo("BadRequestError");
        assertThat(error.at("/error/code").intValue()).isEqualTo(400);
    }

    @Test
    void promptThatFitsExactlyIsServed() {
        String prompt = " the".repeat(4090);
        JsonNode body = postJson("/v1/completions", Map.of("prompt", prompt, "max_tokens", 6, "ignore_eos", true));
        assertThat(body.at("/usage/total_tokens").intValue()).isEqualTo(4096);
    }

    @Test
    void malformedJsonIs400() {
        JsonNode error = postExpectingError("/v1/completions", "{\"prompt\": ", HttpStatus.BAD_REQUEST);
        assertThat(error.at("/error/message").asString()).contains("JSON decode error");
    }

    @Test
    void missingPromptIs400NamingTheField() {
        JsonNode error = postExpectingError("/v1/completions", "{\"max_tokens\": 3}", HttpStatus.BAD_REQUEST);
        assertThat(error.at("/error/message").asString()).contains("prompt").contains("Field required");
    }

    @Test
    void minTokensAboveMaxTokensIs400() {
        JsonNode error = postExpectingError(
                "/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":2,\"min_tokens\":3}", HttpStatus.BAD_REQUEST);
        assertThat(error.at("/error/param").asString()).isEqualTo("min_tokens");
    }

    @Test
    void wrongTypeIs400() {
        JsonNode error = postExpectingError(
                "/v1/completions", "{\"prompt\":\"hi\",\"max_tokens\":\"many\"}", HttpStatus.BAD_REQUEST);
        assertThat(error.at("/error/message").asString()).contains("max_tokens").contains("integer");
    }

    @Test
    void unknownModelIs404() {
        JsonNode error =
                postExpectingError("/v1/completions", "{\"model\":\"gpt-5\",\"prompt\":\"hi\"}", HttpStatus.NOT_FOUND);
        assertThat(error.at("/error/message").asString()).isEqualTo("The model `gpt-5` does not exist.");
    }

    @Test
    void unknownPathIs404() {
        running.engine().get().uri("/v2/nothing").exchange().expectStatus().isNotFound();
    }

    @Test
    void metricsExposeTheVllmSeriesInPrometheusText() {
        postJson("/v1/completions", Map.of("prompt", "hello world", "max_tokens", 4, "ignore_eos", true));
        String metrics = running.engine()
                .get()
                .uri("/metrics")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(metrics)
                .contains("# TYPE vllm:num_requests_running gauge")
                .contains("# TYPE vllm:prompt_tokens counter")
                .contains("# TYPE vllm:time_to_first_token_seconds histogram")
                // As prometheus_client writes it: 1.759672931123e+09.
                .containsPattern("(?m)^process_start_time_seconds \\d\\.\\d+e\\+09$")
                .containsPattern("(?m)^vllm:prompt_tokens_created\\{.*} \\d\\.\\d+e\\+09$")
                .containsPattern("(?m)^vllm:cache_config_info\\{.*kv_cache_size_tokens=\"65536\".*} 1\\.0$")
                .containsPattern("(?m)^vllm:cache_config_info\\{.*kv_cache_max_concurrency=\"16.00\".*}")
                .containsPattern(
                        "(?m)^vllm:generation_tokens_total\\{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} " + "[1-9]")
                .containsPattern("(?m)^vllm:request_success_total\\{.*finished_reason=\"length\"} [1-9]")
                .containsPattern("(?m)^vllm:e2e_request_latency_seconds_bucket\\{.*le=\"\\+Inf\"} [1-9]");
        for (String name : List.of(
                "vllm:num_requests_waiting",
                "vllm:kv_cache_usage_perc",
                "vllm:prefix_cache_queries_total",
                "vllm:prefix_cache_hits_total",
                "vllm:num_preemptions_total",
                "vllm:iteration_tokens_total_bucket",
                "vllm:request_prompt_tokens_bucket",
                "vllm:request_generation_tokens_bucket",
                "vllm:request_params_n_bucket",
                "vllm:request_params_max_tokens_bucket",
                "vllm:inter_token_latency_seconds_bucket",
                "vllm:request_queue_time_seconds_bucket",
                "vllm:request_inference_time_seconds_bucket",
                "vllm:request_prefill_time_seconds_bucket",
                "vllm:request_decode_time_seconds_bucket")) {
            assertThat(metrics).as(name).containsPattern("(?m)^" + java.util.regex.Pattern.quote(name) + "[{ ]");
        }
    }

    @Test
    void repeatedPromptIsServedFromThePrefixCache() {
        String prompt = " the capital of France is".repeat(20);
        double before = metric("vllm:prefix_cache_hits_total");
        postJson("/v1/completions", Map.of("prompt", prompt, "max_tokens", 1));
        postJson("/v1/completions", Map.of("prompt", prompt, "max_tokens", 1));
        assertThat(metric("vllm:prefix_cache_hits_total") - before).isGreaterThanOrEqualTo(96);
    }

    static double metric(String name) {
        return Metrics.value(running.metricsText(), name);
    }
}
