package dev.readygate.gateway;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

/**
 * Reads one stream event's JSON token by token, building nothing of it: whether it is an error (vLLM's
 * {@code {"error": {...}}}, {@code {"error": "text"}}, the flat {@code {"object": "error", "message", "code"}} of older
 * versions) with its message and code, whether it carries generated output (a choice's non-empty {@code text} or
 * {@code token_ids}, a delta's non-empty {@code content}, {@code reasoning_content}, {@code reasoning} or
 * {@code tool_calls}) and {@code usage.completion_tokens}. Every other value, the completion text among them, is skipped
 * unread. One instance reused for every event of a stream; not thread-safe.
 */
final class EventScan {

    private static final JsonFactory FACTORY = new JsonFactory();

    /** Whether the event had an {@code error} member that is not null. */
    boolean nestedError;

    /** The nested error's message: its {@code message} string, or the error itself when it is a string. */
    @Nullable
    String nestedMessage;

    @Nullable
    Integer nestedCode;

    /** Whether the event's {@code object} is {@code "error"}. */
    boolean flatError;

    /** The event's own {@code message} and {@code code}. */
    @Nullable
    String flatMessage;

    @Nullable
    Integer flatCode;

    boolean carriesTokens;

    @Nullable
    Integer completionTokens;

    /** One member of an object: its name, and the parser at its value's first token. */
    @FunctionalInterface
    private interface Member {
        void read(JsonParser parser, String field, JsonToken value);
    }

    // Each made once: nothing is allocated per event but what the parser needs.
    private final Member root = this::root;
    private final Member nested = this::nested;
    private final Member usage = this::usage;
    private final Member choice = this::choice;
    private final Member delta = this::delta;

    /** Reads {@code data}: false when it is not one JSON object (what was read is then not to be used). */
    boolean read(String data) {
        nestedError = false;
        nestedMessage = null;
        nestedCode = null;
        flatError = false;
        flatMessage = null;
        flatCode = null;
        carriesTokens = false;
        completionTokens = null;
        try (JsonParser parser = FACTORY.createParser(ObjectReadContext.empty(), data)) {
            JsonToken first = parser.nextToken();
            if (first != JsonToken.START_OBJECT) {
                return false;
            }
            members(parser, first, root);
            return parser.currentToken() == JsonToken.END_OBJECT && parser.nextToken() == null;
        } catch (JacksonException ex) {
            return false;
        }
    }

    /** Reads the members of the object {@code value} opens, each by {@code member}; skips any other value. */
    private static void members(JsonParser parser, JsonToken value, Member member) {
        if (value != JsonToken.START_OBJECT) {
            parser.skipChildren();
            return;
        }
        while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
            String field = parser.currentName();
            member.read(parser, field, parser.nextToken());
        }
    }

    private void root(JsonParser parser, String field, JsonToken value) {
        switch (field) {
            case "error" -> error(parser, value);
            case "object" -> flatError = value == JsonToken.VALUE_STRING && "error".equals(parser.getString());
            case "message" -> flatMessage = value == JsonToken.VALUE_STRING ? parser.getString() : null;
            case "code" -> flatCode = integer(parser, value);
            case "usage" -> members(parser, value, usage);
            case "choices" -> choices(parser, value);
            default -> parser.skipChildren();
        }
    }

    private void error(JsonParser parser, JsonToken value) {
        if (value == JsonToken.VALUE_NULL) {
            return;
        }
        nestedError = true;
        if (value == JsonToken.VALUE_STRING) {
            nestedMessage = parser.getString();
        } else {
            members(parser, value, nested);
        }
    }

    private void nested(JsonParser parser, String field, JsonToken value) {
        switch (field) {
            case "message" -> nestedMessage = value == JsonToken.VALUE_STRING ? parser.getString() : null;
            case "code" -> nestedCode = integer(parser, value);
            default -> parser.skipChildren();
        }
    }

    private void usage(JsonParser parser, String field, JsonToken value) {
        if (field.equals("completion_tokens")) {
            completionTokens = integer(parser, value);
        } else {
            parser.skipChildren();
        }
    }

    private void choices(JsonParser parser, JsonToken value) {
        if (value != JsonToken.START_ARRAY) {
            parser.skipChildren();
            return;
        }
        JsonToken element;
        while ((element = parser.nextToken()) != JsonToken.END_ARRAY && element != null) {
            members(parser, element, choice);
        }
    }

    private void choice(JsonParser parser, String field, JsonToken value) {
        switch (field) {
            case "text" -> carriesTokens |= nonEmptyText(parser, value);
            case "token_ids" -> carriesTokens |= nonEmptyArray(parser, value);
            case "delta" -> members(parser, value, delta);
            default -> parser.skipChildren();
        }
    }

    private void delta(JsonParser parser, String field, JsonToken value) {
        switch (field) {
            case "content", "reasoning_content", "reasoning" -> carriesTokens |= nonEmptyText(parser, value);
            case "tool_calls" -> carriesTokens |= nonEmptyArray(parser, value);
            default -> parser.skipChildren();
        }
    }

    private static boolean nonEmptyText(JsonParser parser, JsonToken value) {
        // The text's length only: its characters are not made into a string.
        return value == JsonToken.VALUE_STRING && parser.getStringLength() > 0;
    }

    /** Whether the array {@code value} opens has an element; leaves the parser at its end. */
    private static boolean nonEmptyArray(JsonParser parser, JsonToken value) {
        if (value != JsonToken.START_ARRAY) {
            parser.skipChildren();
            return false;
        }
        JsonToken first = parser.nextToken();
        if (first == JsonToken.END_ARRAY) {
            return false;
        }
        parser.skipChildren();
        JsonToken next;
        while ((next = parser.nextToken()) != JsonToken.END_ARRAY && next != null) {
            parser.skipChildren();
        }
        return true;
    }

    private static @Nullable Integer integer(JsonParser parser, JsonToken value) {
        if (value != JsonToken.VALUE_NUMBER_INT) {
            parser.skipChildren();
            return null;
        }
        return parser.getNumberType() == JsonParser.NumberType.INT ? parser.getIntValue() : null;
    }
}
