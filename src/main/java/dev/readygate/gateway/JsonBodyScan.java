package dev.readygate.gateway;

import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.async.ByteBufferFeeder;
import tools.jackson.core.json.JsonFactory;

/**
 * Scans a JSON body token by token as its chunks pass, holding none of it: only an error's message and code (vLLM's
 * {@code {"error": {"message", "code"}}}, the flat {@code {"object": "error", "message", "code"}} of older versions,
 * or {@code {"error": "text"}}) and {@code usage.completion_tokens}. Every other value, the completion text among
 * them, is skipped unread. Reads each chunk where it lies (a view of the buffer, its reader index untouched). Not
 * thread-safe.
 */
final class JsonBodyScan {

    private static final JsonFactory FACTORY = new JsonFactory();

    private final JsonParser parser = FACTORY.createNonBlockingByteBufferParser(ObjectReadContext.empty());
    private final ByteBufferFeeder feeder = (ByteBufferFeeder) parser.nonBlockingInputFeeder();

    /** Nesting: 1 inside the root object. */
    private int depth;
    /** The root's field whose object or array the parser is in (at depth 2 and deeper), or null. */
    private @Nullable String container;

    private @Nullable String field;
    private boolean flatError;
    private @Nullable String nestedMessage;
    private @Nullable Integer nestedCode;
    private @Nullable String flatMessage;
    private @Nullable Integer flatCode;
    private @Nullable Integer completionTokens;
    private boolean failed;

    /** Takes the next chunk (its readable bytes, read through a view: the chunk is left as it was); false once the body
     * is not JSON. */
    boolean feed(ByteBuf chunk) {
        if (failed) {
            return false;
        }
        try {
            // Drained before returning: the parser holds nothing of the view once this returns.
            feeder.feedInput(chunk.nioBuffer(chunk.readerIndex(), chunk.readableBytes()));
            drain();
        } catch (JacksonException ex) {
            failed = true;
        }
        return !failed;
    }

    /** The body ended: false when it was not one whole JSON value. */
    boolean end() {
        if (failed) {
            return false;
        }
        try {
            feeder.endOfInput();
            drain();
        } catch (JacksonException ex) {
            failed = true;
        }
        return !failed && depth == 0;
    }

    @Nullable
    String errorMessage() {
        return nestedMessage != null ? nestedMessage : flatError ? flatMessage : null;
    }

    @Nullable
    Integer errorCode() {
        return nestedMessage != null || nestedCode != null ? nestedCode : flatError ? flatCode : null;
    }

    @Nullable
    Integer completionTokens() {
        return completionTokens;
    }

    private void drain() {
        JsonToken token;
        while ((token = parser.nextToken()) != null && token != JsonToken.NOT_AVAILABLE) {
            switch (token) {
                case START_OBJECT, START_ARRAY -> {
                    if (depth == 1) {
                        container = field;
                        if ("error".equals(field) && token == JsonToken.START_OBJECT) {
                            // An error object, even one without a message, is an error.
                            nestedMessage = nestedMessage == null ? "" : nestedMessage;
                        }
                    }
                    depth++;
                }
                case END_OBJECT, END_ARRAY -> {
                    depth--;
                    if (depth <= 1) {
                        container = null;
                    }
                }
                case PROPERTY_NAME -> field = parser.currentName();
                case VALUE_STRING -> string();
                case VALUE_NUMBER_INT -> integer();
                default -> {}
            }
        }
    }

    private void string() {
        if (depth == 1 && "error".equals(field)) {
            nestedMessage = parser.getString();
        } else if (depth == 1 && "object".equals(field)) {
            flatError = "error".equals(parser.getString());
        } else if (depth == 1 && "message".equals(field)) {
            flatMessage = parser.getString();
        } else if (depth == 2 && "error".equals(container) && "message".equals(field)) {
            nestedMessage = parser.getString();
        }
    }

    private void integer() {
        if (parser.getNumberType() != JsonParser.NumberType.INT) {
            return;
        }
        if (depth == 1 && "code".equals(field)) {
            flatCode = parser.getIntValue();
        } else if (depth == 2 && "error".equals(container) && "code".equals(field)) {
            nestedCode = parser.getIntValue();
        } else if (depth == 2 && "usage".equals(container) && "completion_tokens".equals(field)) {
            completionTokens = parser.getIntValue();
        }
    }
}
