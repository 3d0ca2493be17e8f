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

    /**
     * {@code /tokenize} as {@code dialect} reads it: {@code {"content", "add_special"}} (llama.cpp), {@code {"inputs"}}
     * (TGI), else vLLM's {@code {"model", "prompt"}} (vLLM adds special tokens by default; the others are asked to).
     */
    byte[] tokenizeRequest(EngineDialect dialect, String model, String text) {
        ObjectNode body = json.createObjectNode();
        switch (dialect) {
            case LLAMA_CPP -> {
                body.put("content", text);
                body.put("add_special", true);
            }
            case TGI -> body.put("inputs", text);
            case VLLM, SGLANG, OPENAI -> {
                body.put("model", model);
                body.put("prompt", text);
            }
        }
        return json.writeValueAsBytes(body);
    }

    /** {@code /detokenize}: {@code {"tokens"}}, with the model for the vLLM-shaped servers. */
    byte[] detokenizeRequest(EngineDialect dialect, String model, List<Integer> tokens) {
        ObjectNode body = json.createObjectNode();
        if (dialect == EngineDialect.VLLM || dialect == EngineDialect.SGLANG || dialect == EngineDialect.OPENAI) {
            body.put("model", model);
        }
        ArrayNode ids = body.putArray("tokens");
        tokens.forEach(id -> ids.add(id.intValue()));
        return json.writeValueAsBytes(body);
    }

    byte[] completionRequest(CompletionRequest request) {
        ObjectNode body = json.createObjectNode();
        body.put("model", request.model());
        String promptText = request.promptText();
        List<Integer> promptTokenIds = request.promptTokenIds();
        if (request.chat()) {
            ObjectNode message = body.putArray("messages").addObject();
            message.put("role", "user");
            message.put("content", promptText);
        } else if (promptText != null) {
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
        if (logprobs != null && request.chat()) {
            // Chat's form: the sampled token's logprob comes with its top alternatives (llama.cpp gives none with 0).
            body.put("logprobs", true);
            body.put("top_logprobs", Math.max(1, logprobs));
        } else if (logprobs != null) {
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
                id,
                string(card, "root", "/v1/models data[0]"),
                integer(card, "max_model_len", "/v1/models data[0]"),
                card.path("owned_by").isString() ? card.get("owned_by").asString() : null,
                identity(card.get("meta")));
    }

    /** The fields of llama.cpp's {@code meta} that tell one model from another, in a fixed order. */
    private static final List<String> IDENTITY_FIELDS =
            List.of("vocab_type", "n_vocab", "n_ctx_train", "n_embd", "n_params", "size");

    /**
     * The model's identity from a card's {@code meta} object (llama.cpp): its scalar fields readygate knows, as
     * {@code name=value} pairs; null when there is no such object or it has none of them.
     */
    private static @Nullable String identity(@Nullable JsonNode meta) {
        if (meta == null || !meta.isObject()) {
            return null;
        }
        StringBuilder out = new StringBuilder();
        for (String field : IDENTITY_FIELDS) {
            JsonNode value = meta.get(field);
            if (value != null && (value.isNumber() || value.isString())) {
                out.append(out.isEmpty() ? "" : ",").append(field).append('=').append(value.asString());
            }
        }
        return out.isEmpty() ? null : out.toString();
    }

    String version(byte[] body) {
        String version = string(object(body, "/version"), "version", "/version");
        if (version == null) {
            throw malformed("/version: no version");
        }
        return version;
    }

    /**
     * What {@code /tokenize} gave, in any of the shapes servers use: {@code {"count", "tokens": [ids],
     * "max_model_len"}} (vLLM, SGLang), {@code {"tokens": [ids]}} or {@code {"tokens": [{"id", "piece"}]}} (llama.cpp),
     * {@code [{"id", "text", ...}]} (TGI). The count is {@code count} when given, else the number of ids; a body with
     * neither is malformed.
     */
    TokenCount tokenCount(byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (JacksonException ex) {
            throw malformed("/tokenize: body is not JSON" + CompletionStream.where(ex.getLocation()));
        }
        JsonNode tokens = root == null ? null : root.isArray() ? root : root.get("tokens");
        if (root == null || !(root.isObject() || root.isArray())) {
            throw malformed("/tokenize: body is neither a JSON object nor an array");
        }
        List<Integer> ids = tokens != null && tokens.isArray()
                ? tokens.valueStream()
                        .map(token -> token.isObject() ? token.get("id") : token)
                        .filter(id -> id != null && id.isIntegralNumber() && id.canConvertToInt())
                        .map(JsonNode::intValue)
                        .toList()
                : List.of();
        Integer count = root.isObject() ? integer(root, "count", "/tokenize") : null;
        if (count == null && (tokens == null || !tokens.isArray())) {
            throw malformed("/tokenize: no count and no tokens");
        }
        Integer maxModelLen = root.isObject() ? integer(root, "max_model_len", "/tokenize") : null;
        return new TokenCount(count != null ? count : ids.size(), maxModelLen, ids);
    }

    /** The text of a {@code /detokenize} answer: {@code prompt} (vLLM), {@code content} (llama.cpp) or {@code text}. */
    String detokenized(byte[] body) {
        JsonNode root = object(body, "/detokenize");
        for (String field : List.of("prompt", "content", "text")) {
            String text = string(root, field, "/detokenize");
            if (text != null) {
                return text;
            }
        }
        throw malformed("/detokenize: no prompt, content or text");
    }

    /**
     * What {@code dialect}'s server-information endpoint says: llama.cpp's {@code /props}
     * ({@code default_generation_settings.n_ctx}: the context of one slot, {@code total_slots}, {@code build_info}),
     * TGI's {@code /info} ({@code max_total_tokens}, {@code max_input_tokens} or the older {@code max_input_length},
     * {@code version}), SGLang's {@code /get_server_info} ({@code context_length}, {@code version}).
     */
    ServerInfo serverInfo(EngineDialect dialect, String path, byte[] body) {
        JsonNode root = object(body, path);
        return switch (dialect) {
            case LLAMA_CPP -> {
                JsonNode settings = root.path("default_generation_settings");
                Integer context = settings.isObject() ? integer(settings, "n_ctx", path) : null;
                if (context == null) {
                    throw malformed(path + ": no default_generation_settings.n_ctx");
                }
                yield new ServerInfo(
                        path,
                        context,
                        path + " default_generation_settings.n_ctx",
                        null,
                        string(root, "build_info", path),
                        integer(root, "total_slots", path));
            }
            case TGI -> {
                Integer total = integer(root, "max_total_tokens", path);
                if (total == null) {
                    throw malformed(path + ": no max_total_tokens");
                }
                Integer input = integer(root, "max_input_tokens", path);
                yield new ServerInfo(
                        path,
                        total,
                        path + " max_total_tokens",
                        input != null ? input : integer(root, "max_input_length", path),
                        string(root, "version", path),
                        null);
            }
            case SGLANG -> {
                Integer context = integer(root, "context_length", path);
                yield new ServerInfo(
                        path,
                        context,
                        context == null ? "" : path + " context_length",
                        null,
                        string(root, "version", path),
                        null);
            }
            case VLLM, OPENAI -> throw malformed(path + ": no server information for " + dialect.value());
        };
    }

    /**
     * The message of an error body, in any of the shapes engines and their HTTP stacks use: {@code {"error":
     * {"message": ...}}} (recent vLLM, llama.cpp, SGLang), {@code {"object": "error", "message": ...}} (older vLLM),
     * {@code {"error": "..."}} (vLLM's API key middleware, TGI), {@code {"message": ...}} and {@code {"detail": "..."}}
     * (FastAPI, e.g. an unknown route); null when the body is none of them (plain text is read elsewhere).
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
            return new ErrorBody(error.get("message").asString());
        }
        if (error != null && error.isString()) {
            return new ErrorBody(error.asString());
        }
        if (root.path("object").isString()
                && root.get("object").asString().equals("error")
                && root.path("message").isString()) {
            return new ErrorBody(root.get("message").asString());
        }
        if (root.path("message").isString()) {
            return new ErrorBody(root.get("message").asString());
        }
        JsonNode detail = root.get("detail");
        if (detail != null && detail.isString()) {
            return new ErrorBody(detail.asString());
        }
        return null;
    }

    /**
     * An error body's message.
     *
     * @param message the message, raw (not yet made safe)
     */
    record ErrorBody(String message) {

        /**
         * A body that is none of the JSON shapes: plain text (an engine's or a proxy's 502 page) is the message, with
         * HTML tags dropped; bytes that are not text (a NUL) are no message.
         */
        static ErrorBody plainText(byte[] bytes, boolean html) {
            String text = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
            if (text.indexOf('\0') >= 0) {
                return new ErrorBody("");
            }
            if (html) {
                text = text.replaceAll("(?is)<(script|style)\\b.*?</\\1>", " ").replaceAll("<[^>]*>", " ");
            }
            return new ErrorBody(text);
        }
    }

    /**
     * llama-server's {@code /slots}: an array of slots, each with {@code id}, {@code id_task}, {@code is_processing} and
     * {@code next_token.n_decoded} ({@code next_token} an object, or an array of them in newer servers). Nothing else
     * is read: the slots' prompts are in the same answer.
     */
    SlotsSample slots(byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (JacksonException ex) {
            throw malformed("/slots: body is not JSON" + CompletionStream.where(ex.getLocation()));
        }
        if (root == null || !root.isArray()) {
            throw malformed("/slots: body is not a JSON array");
        }
        List<SlotsSample.Slot> slots = new java.util.ArrayList<>();
        for (JsonNode slot : root) {
            JsonNode next = slot.path("next_token");
            JsonNode decoded = (next.isArray() ? next.path(0) : next).path("n_decoded");
            if (!slot.path("id").isIntegralNumber()
                    || !slot.path("is_processing").isBoolean()
                    || !decoded.isIntegralNumber()) {
                throw malformed("/slots: a slot without id, is_processing or next_token.n_decoded");
            }
            slots.add(new SlotsSample.Slot(
                    slot.path("id").intValue(),
                    slot.path("id_task").asLong(-1),
                    slot.path("is_processing").booleanValue(),
                    decoded.longValue()));
        }
        return new SlotsSample(slots);
    }

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
