package dev.readygate.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What one streamed {@code /v1/completions} (or {@code /v1/chat/completions}) answer has delivered so far, fed event by
 * event: text (a chat chunk's {@code delta.content}), token ids,
 * logprobs, finish reason, usage, an error event, and the timing of token-carrying events. One instance per call;
 * events arrive serially, while {@link #progress(Duration)} may be read from the timeout's thread.
 */
final class CompletionStream {

    static final String DONE = "[DONE]";

    /**
     * The events a stream may carry beyond one a token: a role, a finish without a token, the usage, {@code [DONE]},
     * an error, with room to spare. An engine sends at most one event a token (vLLM, SGLang, TGI and llama-server do,
     * or fewer), so a stream past {@code max_tokens} and these has ignored the request's bound.
     */
    static final int EVENTS_WITHOUT_A_TOKEN = 8;

    private final JsonMapper json;
    private final LongSupplier ticker;
    private final Collection<String> secrets;
    private final long startNanos;
    private final int maxEvents;

    private volatile int events;
    private volatile long lastEventNanos;

    private int textChunks;
    private final StringBuilder text = new StringBuilder();
    private final List<Integer> tokenIds = new ArrayList<>();
    private final List<Double> tokenLogprobs = new ArrayList<>();
    private @Nullable String finishReason;
    private @Nullable Integer promptTokens;
    private @Nullable Integer completionTokens;
    private @Nullable String errorEvent;
    private long firstTokenNanos = -1;
    private long lastTokenNanos;
    private long maxGapNanos;
    private long gapSumNanos;
    private int gaps;
    private long doneNanos = -1;

    /**
     * @param json parses the events
     * @param ticker the nanosecond time source
     * @param secrets redacted from an error event's message (the prompt, the API key)
     * @param maxTokens the request's {@code max_tokens}: a stream of more events than these and
     *     {@value #EVENTS_WITHOUT_A_TOKEN} is {@code OVERLONG_STREAM}
     */
    CompletionStream(JsonMapper json, LongSupplier ticker, Collection<String> secrets, int maxTokens) {
        this.json = json;
        this.ticker = ticker;
        this.secrets = secrets;
        this.startNanos = ticker.getAsLong();
        this.maxEvents = (int) Math.min(Integer.MAX_VALUE, (long) maxTokens + EVENTS_WITHOUT_A_TOKEN);
    }

    long startNanos() {
        return startNanos;
    }

    /**
     * Takes the next event: an error event (llama.cpp's {@code error:} line, or {@code event: error}) records the
     * engine's message; any other is a completion chunk, an error chunk or {@code [DONE]}.
     *
     * @return true at {@code [DONE]}, the end of the answer
     * @throws EngineCallException {@code MALFORMED_BODY} when a data event is not a completion chunk or an error,
     *     {@code OVERLONG_STREAM} when the stream runs past what was asked
     */
    boolean accept(ServerSentEvents.Event event) {
        if (!event.isError()) {
            return accept(event.data());
        }
        counted(ticker.getAsLong());
        recordErrorEvent(event.data());
        return false;
    }

    /**
     * Takes the data of the next (unnamed) event.
     *
     * @return true at {@code [DONE]}, the end of the answer
     * @throws EngineCallException {@code MALFORMED_BODY} when the event is not a completion chunk or an error,
     *     {@code OVERLONG_STREAM} when the stream runs past what was asked
     */
    boolean accept(String data) {
        long now = ticker.getAsLong();
        int number = counted(now);
        String payload = data.strip();
        if (payload.isEmpty()) {
            return false;
        }
        if (payload.equals(DONE)) {
            doneNanos = now;
            return true;
        }
        JsonNode root = parse(payload, number);
        JsonNode error = root.get("error");
        if (error != null && !error.isNull()) {
            recordError(error);
            return false;
        }
        if ("error".equals(text(root, "object", number))) {
            // The flat error shape of older vLLM versions: {"object": "error", "message": ...}.
            recordError(root);
            return false;
        }
        JsonNode choices = root.get("choices");
        if (choices == null || !choices.isArray()) {
            throw malformed("stream event " + number + " has no choices array");
        }
        JsonNode usage = root.get("usage");
        if (usage != null && !usage.isNull()) {
            if (!usage.isObject()) {
                throw malformed("stream event " + number + " has a usage that is not an object");
            }
            promptTokens = integer(usage, "prompt_tokens", number);
            completionTokens = integer(usage, "completion_tokens", number);
        }
        if (!choices.isEmpty()) {
            choice(choices.get(0), number, now);
        }
        return false;
    }

    /**
     * Counts one more event, of any kind: an engine that streams past its {@code max_tokens} is cut here, however
     * the events look, before the call's timeout or the stream's size bound.
     *
     * @return the event's number, from 1
     */
    private int counted(long now) {
        int number = events + 1;
        if (number > maxEvents) {
            throw EngineCallException.of(
                    EngineFailure.Kind.OVERLONG_STREAM,
                    "the stream ran past what was asked: " + number + " events for max_tokens "
                            + (maxEvents - EVENTS_WITHOUT_A_TOKEN) + " (at most " + maxEvents
                            + " with those that carry no token); cut");
        }
        events = number;
        lastEventNanos = now;
        return number;
    }

    private void choice(JsonNode choice, int number, long now) {
        if (!choice.isObject()) {
            throw malformed("stream event " + number + " has a choice that is not an object");
        }
        textChunks++;
        boolean carriesTokens = false;
        // A chat chunk carries its text in delta.content (the first one only the role).
        JsonNode delta = choice.get("delta");
        if (delta != null && !delta.isNull() && !delta.isObject()) {
            throw malformed("stream event " + number + " has a delta that is not an object");
        }
        String chunkText =
                delta != null && delta.isObject() ? text(delta, "content", number) : text(choice, "text", number);
        if (chunkText != null && !chunkText.isEmpty()) {
            text.append(chunkText);
            carriesTokens = true;
        }
        JsonNode ids = choice.get("token_ids");
        if (ids != null && !ids.isNull()) {
            if (!ids.isArray()) {
                throw malformed("stream event " + number + " has token_ids that are not an array");
            }
            for (JsonNode id : ids) {
                if (!id.isIntegralNumber() || !id.canConvertToInt()) {
                    throw malformed("stream event " + number + " has a token id that is not an integer");
                }
                tokenIds.add(id.intValue());
                carriesTokens = true;
            }
        }
        JsonNode logprobs = choice.get("logprobs");
        if (logprobs != null && logprobs.isObject() && logprobs.path("content").isArray()) {
            // Chat's form: {"content": [{"token", "logprob", ...}]}.
            for (JsonNode token : logprobs.get("content")) {
                JsonNode value = token.get("logprob");
                if (value != null && !value.isNull() && !value.isNumber()) {
                    throw malformed("stream event " + number + " has a token logprob that is not a number");
                }
                tokenLogprobs.add(value == null || value.isNull() ? Double.NaN : value.doubleValue());
            }
        } else if (logprobs != null && !logprobs.isNull()) {
            JsonNode values = logprobs.get("token_logprobs");
            if (!logprobs.isObject() || (values != null && !values.isNull() && !values.isArray())) {
                throw malformed("stream event " + number + " has logprobs without a token_logprobs array");
            }
            if (values != null) {
                for (JsonNode value : values) {
                    if (!value.isNull() && !value.isNumber()) {
                        throw malformed("stream event " + number + " has a token logprob that is not a number");
                    }
                    // vLLM writes null for a position without a logprob; NaN keeps the positions aligned.
                    tokenLogprobs.add(value.isNull() ? Double.NaN : value.doubleValue());
                }
            }
        }
        String finish = text(choice, "finish_reason", number);
        if (finish != null) {
            finishReason = finish;
        }
        if (carriesTokens) {
            tokenArrived(now);
        }
    }

    private void tokenArrived(long now) {
        if (firstTokenNanos < 0) {
            firstTokenNanos = now;
        } else {
            long gap = now - lastTokenNanos;
            maxGapNanos = Math.max(maxGapNanos, gap);
            gapSumNanos += gap;
            gaps++;
        }
        lastTokenNanos = now;
    }

    /**
     * An error event's data: llama.cpp's {@code {"code", "message", "type"}}, an OpenAI {@code {"error": ...}}, or
     * plain text.
     */
    private void recordErrorEvent(String data) {
        String payload = data.strip();
        JsonNode root = null;
        try {
            root = json.readTree(payload);
        } catch (JacksonException ex) {
            // Plain text: the message itself.
        }
        if (root != null && root.isObject()) {
            JsonNode error = root.get("error");
            recordError(error != null && !error.isNull() ? error : root);
        } else if (errorEvent == null) {
            errorEvent = payload.isEmpty() ? "error event without a message" : SafeDetail.of(payload, secrets);
        }
    }

    private void recordError(JsonNode error) {
        if (errorEvent != null) {
            return;
        }
        JsonNode message = error.isObject() ? error.get("message") : error;
        errorEvent = message != null && message.isString()
                ? SafeDetail.of(message.asString(), secrets)
                : "error event without a message";
    }

    /**
     * The answer, once {@code [DONE]} has arrived.
     *
     * @throws EngineCallException {@code TRUNCATED_STREAM} when it has not
     */
    StreamedCompletion result() {
        if (doneNanos < 0) {
            throw EngineCallException.of(
                    EngineFailure.Kind.TRUNCATED_STREAM, "stream ended after " + describeEvents() + " without [DONE]");
        }
        return new StreamedCompletion(
                textChunks,
                text.toString(),
                tokenIds,
                tokenLogprobs,
                finishReason,
                promptTokens,
                completionTokens,
                errorEvent,
                firstTokenNanos < 0 ? Duration.ZERO : Duration.ofNanos(firstTokenNanos - startNanos),
                Duration.ofNanos(maxGapNanos),
                gaps == 0 ? Duration.ZERO : Duration.ofNanos(gapSumNanos / gaps),
                Duration.ofNanos(doneNanos - startNanos));
    }

    /** The connection failed after the response began: the stream is cut, whatever the transport said. */
    EngineCallException interrupted(Throwable cause) {
        return EngineCallException.of(
                EngineFailure.Kind.TRUNCATED_STREAM,
                "connection " + TransportFailures.endedHow(cause) + " after " + describeEvents() + ", before [DONE]");
    }

    /**
     * How a timeout's detail starts when the stream had begun and then went quiet for at least half the call's
     * timeout: the failure is then {@code STALLED}.
     */
    static final String STALLED = "stalled after ";

    /**
     * Where the stream stood when its call timed out after {@code timeout}, for the timeout's detail: stalled when it
     * had begun and then sent nothing for at least half of {@code timeout}, otherwise still under way (too slow, not
     * stopped).
     */
    String progress(Duration timeout) {
        int seen = events;
        if (seen == 0) {
            return "no event yet";
        }
        long quiet = ticker.getAsLong() - lastEventNanos;
        String since =
                describeEvents() + ", the last " + Duration.ofNanos(quiet).toMillis() + " ms before";
        return quiet * 2 >= timeout.toNanos() ? STALLED + since : "still streaming: " + since;
    }

    private String describeEvents() {
        int seen = events;
        return seen == 1 ? "1 event" : seen + " events";
    }

    private JsonNode parse(String payload, int number) {
        JsonNode root;
        try {
            root = json.readTree(payload);
        } catch (JacksonException ex) {
            // Never Jackson's message: it quotes the offending token, which may be completion text.
            throw malformed("stream event " + number + " is not JSON" + where(ex.getLocation()));
        }
        if (root == null || !root.isObject()) {
            throw malformed("stream event " + number + " is not a JSON object");
        }
        return root;
    }

    static String where(@Nullable TokenStreamLocation location) {
        if (location == null || location.getLineNr() < 0) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    private static @Nullable String text(JsonNode node, String field, int number) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isString()) {
            throw malformed("stream event " + number + " has a " + field + " that is not a string");
        }
        return value.asString();
    }

    private static Integer integer(JsonNode node, String field, int number) {
        JsonNode value = node.get(field);
        if (value == null || !value.isIntegralNumber() || !value.canConvertToInt()) {
            throw malformed("stream event " + number + " has usage without an integer " + field);
        }
        return value.intValue();
    }

    private static EngineCallException malformed(String detail) {
        return EngineCallException.of(EngineFailure.Kind.MALFORMED_BODY, detail);
    }
}
