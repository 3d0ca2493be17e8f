package dev.readygate.simulator;

import tools.jackson.databind.JsonNode;

/** Qwen's ChatML template: {@code <|im_start|>role\ncontent<|im_end|>\n} per message, then the assistant's turn. */
final class ChatTemplate {

    private ChatTemplate() {}

    static String render(JsonNode messages) {
        StringBuilder out = new StringBuilder();
        for (JsonNode message : messages) {
            JsonNode role = message.get("role");
            if (role == null || !role.isString()) {
                throw EngineError.badRequest("Each message needs a string role", "messages");
            }
            out.append("<|im_start|>").append(role.asString()).append('\n');
            out.append(content(message.get("content"))).append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }

    private static String content(JsonNode content) {
        if (content == null || content.isNull()) {
            return "";
        }
        if (content.isString()) {
            return content.asString();
        }
        if (content.isArray()) {
            StringBuilder text = new StringBuilder();
            for (JsonNode part : content) {
                JsonNode value = part.get("text");
                if (!"text".equals(part.path("type").asString("")) || value == null || !value.isString()) {
                    throw EngineError.badRequest("The simulator models text content parts only", "messages");
                }
                text.append(value.asString());
            }
            return text.toString();
        }
        throw EngineError.badRequest("Message content must be a string or a list of parts", "messages");
    }
}
