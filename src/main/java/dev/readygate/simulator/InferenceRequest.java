package dev.readygate.simulator;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A parsed {@code /v1/completions} or {@code /v1/chat/completions} body, validated the way vLLM's pydantic
 * models validate it: anything malformed becomes an {@link EngineError} with HTTP 400.
 *
 * @param chat whether this is a chat completion
 * @param model the requested model, or null for the served one
 * @param promptTokenIds the prompt, tokenized (for chat, the rendered template)
 * @param maxTokens {@code max_tokens}, or null to fill the context
 * @param logprobs number of top logprobs ({@code logprobs} for completions, {@code top_logprobs} for chat), or
 *     null when none were asked
 */
record InferenceRequest(
        boolean chat,
        @Nullable String model,
        List<Integer> promptTokenIds,
        @Nullable Integer maxTokens,
        int minTokens,
        boolean ignoreEos,
        double temperature,
        @Nullable Long seed,
        @Nullable Integer logprobs,
        boolean returnTokenIds,
        boolean stream,
        boolean includeUsage,
        boolean continuousUsage) {

    static InferenceRequest parse(String body, boolean chat, SimulatedTokenizer tokenizer, JsonMapper json) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (JacksonException ex) {
            throw EngineError.badRequest("JSON decode error: " + ex.getOriginalMessage(), null);
        }
        if (root == null || !root.isObject()) {
            throw EngineError.badRequest("Input should be a valid dictionary or object to extract fields from", null);
        }
        String type = chat ? "ChatCompletionRequest" : "CompletionRequest";
        List<Integer> prompt = chat ? chatPrompt(root, tokenizer, type) : completionPrompt(root, tokenizer, type);
        Integer maxTokens = optionalInt(
                root, chat && root.has("max_completion_tokens") ? "max_completion_tokens" : "max_tokens", type);
        if (maxTokens != null && maxTokens < 1) {
            throw EngineError.badRequest("max_tokens must be at least 1, got " + maxTokens + ".", "max_tokens");
        }
        Integer minTokens = optionalInt(root, "min_tokens", type);
        int min = minTokens == null ? 0 : minTokens;
        if (min < 0) {
            throw EngineError.badRequest(
                    "min_tokens must be greater than or equal to 0, got " + min + ".", "min_tokens");
        }
        if (maxTokens != null && min > maxTokens) {
            throw EngineError.badRequest(
                    "min_tokens must be less than or equal to max_tokens=" + maxTokens + ", got " + min + ".",
                    "min_tokens");
        }
        double temperature = optionalDouble(root, "temperature", 1.0, type);
        if (temperature < 0) {
            throw EngineError.badRequest("temperature must be non-negative, got " + temperature + ".", "temperature");
        }
        Integer n = optionalInt(root, "n", type);
        if (n != null && n != 1) {
            throw EngineError.badRequest("The simulator serves n=1 only, got n=" + n + ".", "n");
        }
        Integer logprobs = chat ? chatLogprobs(root, type) : optionalInt(root, "logprobs", type);
        if (logprobs != null && (logprobs < 0 || logprobs > 20)) {
            throw EngineError.badRequest("logprobs must be between 0 and 20, got " + logprobs + ".", "logprobs");
        }
        JsonNode seed = root.get("seed");
        if (seed != null && !seed.isNull() && !seed.isIntegralNumber()) {
            throw invalidType(type, "seed", "integer");
        }
        boolean stream = optionalBoolean(root, "stream", type);
        JsonNode streamOptions = root.get("stream_options");
        boolean includeUsage = false;
        boolean continuousUsage = false;
        if (streamOptions != null && !streamOptions.isNull()) {
            if (!stream) {
                throw EngineError.badRequest(
                        "Stream options can only be defined when `stream=True`.", "stream_options");
            }
            includeUsage = optionalBoolean(streamOptions, "include_usage", type, true);
            continuousUsage = optionalBoolean(streamOptions, "continuous_usage_stats", type);
        }
        JsonNode model = root.get("model");
        return new InferenceRequest(
                chat,
                model == null || model.isNull() ? null : model.asString(),
                prompt,
                maxTokens,
                min,
                optionalBoolean(root, "ignore_eos", type),
                temperature,
                seed == null || seed.isNull() ? null : seed.longValue(),
                logprobs,
                optionalBoolean(root, "return_token_ids", type),
                stream,
                includeUsage,
                continuousUsage);
    }

    private static List<Integer> completionPrompt(JsonNode root, SimulatedTokenizer tokenizer, String type) {
        JsonNode prompt = root.get("prompt");
        if (prompt == null || prompt.isNull()) {
            throw missing(type, "prompt");
        }
        if (prompt.isString()) {
            return tokenizer.encode(prompt.asString(), false);
        }
        if (prompt.isArray() && prompt.size() == 1 && prompt.get(0).isString()) {
            return tokenizer.encode(prompt.get(0).asString(), false);
        }
        if (prompt.isArray() && prompt.size() == 1 && prompt.get(0).isArray()) {
            return tokenIds(prompt.get(0), tokenizer);
        }
        if (prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isIntegralNumber()) {
            return tokenIds(prompt, tokenizer);
        }
        if (prompt.isArray() && prompt.size() > 1) {
            throw EngineError.badRequest(
                    "The simulator serves one prompt per request; batched prompts are not " + "modelled.", "prompt");
        }
        throw EngineError.badRequest("Either prompt or prompt_embeds must be provided and non-empty.", "prompt");
    }

    private static List<Integer> tokenIds(JsonNode array, SimulatedTokenizer tokenizer) {
        List<Integer> ids = new ArrayList<>(array.size());
        for (JsonNode id : array) {
            if (!id.isIntegralNumber() || !tokenizer.isValid(id.intValue())) {
                throw EngineError.badRequest("Token id " + id + " is out of vocabulary", "prompt");
            }
            ids.add(id.intValue());
        }
        return ids;
    }

    private static List<Integer> chatPrompt(JsonNode root, SimulatedTokenizer tokenizer, String type) {
        JsonNode messages = root.get("messages");
        if (messages == null || messages.isNull()) {
            throw missing(type, "messages");
        }
        if (!messages.isArray() || messages.isEmpty()) {
            throw EngineError.badRequest("messages must be a non-empty list", "messages");
        }
        return tokenizer.encode(ChatTemplate.render(messages), true);
    }

    private static @Nullable Integer chatLogprobs(JsonNode root, String type) {
        if (!optionalBoolean(root, "logprobs", type)) {
            return null;
        }
        Integer top = optionalInt(root, "top_logprobs", type);
        return top == null ? 0 : top;
    }

    private static @Nullable Integer optionalInt(JsonNode node, String field, String type) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt()) {
            throw invalidType(type, field, "integer");
        }
        return value.intValue();
    }

    private static double optionalDouble(JsonNode node, String field, double fallback, String type) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isNumber()) {
            throw invalidType(type, field, "number");
        }
        return value.doubleValue();
    }

    private static boolean optionalBoolean(JsonNode node, String field, String type) {
        return optionalBoolean(node, field, type, false);
    }

    private static boolean optionalBoolean(JsonNode node, String field, String type, boolean fallback) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isBoolean()) {
            throw invalidType(type, field, "boolean");
        }
        return value.booleanValue();
    }

    private static EngineError missing(String type, String field) {
        return EngineError.badRequest("1 validation error for " + type + "\n" + field + "\n  Field required", field);
    }

    private static EngineError invalidType(String type, String field, String expected) {
        return EngineError.badRequest(
                "1 validation error for " + type + "\n" + field + "\n  Input should be a valid " + expected, field);
    }
}
