package dev.readygate.engine;

import java.util.List;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON side of vLLM's OpenAI-compatible API as readygate uses it: request bodies, and the parsing of model
 * cards, versions, token counts and error bodies, with {@code MALFORMED_BODY} for anything that does not fit.
 */
final class EngineJson {

    private final JsonMapper json = JsonMapper.builder().build();

    JsonMapper mapper() {
        return json;
    }

    byte[] tokenizeRequest(String model, String prompt) {
        ObjectNode body = json.createObjectNode();
        body.put("model", model);
        body.put("prompt", prompt);
        return json.writeValueAsBytes(body);
    }

    byte[] completionRequest(CompletionRequest request) {
        ObjectNode body = json.createObjectNode();
        body.put("model", request.model());
        String promptText = request.promptText();
        List<Integer> promptTokenIds = request.promptTokenIds();
        if (promptText != null) {
            body.put("prompt", promptText);
        } else if (promptTokenIds != null) {
            ArrayNode ids = body.putArray("prompt");
            promptTokenIds.forEach(id -> ids.add(id.intValue()));
        }
        body.put("max_tokens", request.maxTokens());
        body.put("min_tokens", request.minTokens());
        body.put("ignore_eos", request.ignoreEos());
        body.put("temperature", request.temperature());
        Long seed = request.seed();
        if (seed != null) {
            body.put("seed", seed.longValue());
        }
        Integer logprobs = request.logprobs();
        if (logprobs != null) {
            body.put("logprobs", logprobs.intValue());
        }
        body.put("return_token_ids", request.returnTokenIds());
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        return json.writeValueAsBytes(body);
    }

    /** {@code data[0]} of {@code /v1/models}: {@code id} required, {@code root} and {@code max_model_len} optional. */
    ModelCard modelCard(byte[] body) {
        JsonNode root = object(body, "/v1/models");
        JsonNode data = root.get("data");
        if (data == null || !data.isArray()) {
            throw malformed("/v1/models: no data array");
        }
        if (data.isEmpty()) {
            throw malformed("/v1/models: data is empty (no model served)");
        }
        JsonNode card = data.get(0);
        if (!card.isObject()) {
            throw malformed("/v1/models: data[0] is not an object");
        }
        String id = string(card, "id", "/v1/models data[0]");
        if (id == null || id.isEmpty()) {
            throw malformed("/v1/models: data[0] has no id");
        }
        return new ModelCard(
                id, string(card, "root", "/v1/models data[0]"), integer(card, "max_model_len", "/v1/models data[0]"));
    }

    String version(byte[] body) {
        String version = string(object(body, "/version"), "version", "/version");
        if (version == null) {
            throw malformed("/version: no version");
        }
        return version;
    }

    TokenCount tokenCount(byte[] body) {
        JsonNode root = object(body, "/tokenize");
        Integer count = integer(root, "count", "/tokenize");
        if (count == null) {
            throw malformed("/tokenize: no count");
        }
        JsonNode tokens = root.get("tokens");
        List<Integer> ids = tokens != null && tokens.isArray()
                ? tokens.valueStream()
                        .filter(JsonNode::isIntegralNumber)
                        .map(JsonNode::intValue)
                        .toList()
                : List.of();
        return new TokenCount(count, integer(root, "max_model_len", "/tokenize"), ids);
    }

    /**
     * The message of an error body, in any of the shapes vLLM and its HTTP stack use: {@code {"error": {"message":
     * ...}}} (recent vLLM), {@code {"object": "error", "message": ...}} (older vLLM), {@code {"error": "..."}} (the API
     * key middleware) and {@code {"detail": "..."}} (FastAPI, e.g. an unknown route); null when the body is none of
     * them.
     */
    @Nullable
    ErrorBody errorBody(byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (JacksonException ex) {
            return null;
        }
        if (root == null || !root.isObject()) {
            return null;
        }
        JsonNode error = root.get("error");
        if (error != null && error.isObject() && error.path("message").isString()) {
            return new ErrorBody(error.get("message").asString(), true);
        }
        if (error != null && error.isString()) {
            return new ErrorBody(error.asString(), true);
        }
        if (root.path("object").isString()
                && root.get("object").asString().equals("error")
                && root.path("message").isString()) {
            return new ErrorBody(root.get("message").asString(), true);
        }
        JsonNode detail = root.get("detail");
        if (detail != null && detail.isString()) {
            return new ErrorBody(detail.asString(), false);
        }
        return null;
    }

    /**
     * An error body's message.
     *
     * @param message the message, raw (not yet made safe)
     * @param fromEngine whether it is vLLM's own error shape, as opposed to the HTTP stack's (e.g. FastAPI's 404 for
     *     a route that does not exist)
     */
    record ErrorBody(String message, boolean fromEngine) {}

    private JsonNode object(byte[] body, String what) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (JacksonException ex) {
            // Never Jackson's message: it quotes the body.
            throw malformed(what + ": body is not JSON" + CompletionStream.where(ex.getLocation()));
        }
        if (root == null || !root.isObject()) {
            throw malformed(what + ": body is not a JSON object");
        }
        return root;
    }

    private static @Nullable String string(JsonNode node, String field, String where) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isString()) {
            throw malformed(where + ": " + field + " is not a string");
        }
        return value.asString();
    }

    private static @Nullable Integer integer(JsonNode node, String field, String where) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt()) {
            throw malformed(where + ": " + field + " is not an integer");
        }
        return value.intValue();
    }

    private static EngineCallException malformed(String detail) {
        return EngineCallException.of(EngineFailure.Kind.MALFORMED_BODY, detail);
    }
}
