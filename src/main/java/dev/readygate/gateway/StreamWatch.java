package dev.readygate.gateway;

import dev.readygate.engine.SafeDetail;
import dev.readygate.engine.ServerSentEvents;
import io.netty.buffer.ByteBuf;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Reads a proxied answer's bytes as they pass to the client, in chunks of any size: for an event stream, its events
 * ({@link ServerSentEvents}), those that carry tokens, the first token's time, an error event (vLLM's
 * {@code data: {"error": {...}}} inside a 200 stream, the flat {@code {"object": "error"}} of older versions,
 * llama.cpp's {@code error:} line) and {@code [DONE]}; for a JSON body, an {@code error} object and the usage
 * ({@link JsonBodyScan}). It keeps counts, times and the first error's message (made safe as readygate makes engine
 * text safe: {@link SafeDetail}), never prompt or completion text. What the watch saw is judged by
 * {@link TrafficJudge}. Each chunk is read where it lies, its reader index untouched: the same buffer then goes to the
 * client. One instance per answer; not thread-safe (the proxy delivers chunks serially).
 */
public final class StreamWatch {

    /** The largest event read by default: far above one token's chunk, with room for an echoed prompt. */
    public static final long DEFAULT_MAX_EVENT_BYTES = 1L << 20;

    private static final String DONE = "[DONE]";

    /** What kind of body the answer has, from its {@code Content-Type}. */
    public enum Body {
        /** {@code text/event-stream}: read event by event. */
        EVENT_STREAM,
        /** {@code application/json}: scanned for an error object and the usage. */
        JSON,
        /** Anything else: counted, not read. */
        OTHER
    }

    /** Why the watch stopped reading the answer (it still passes to the client, byte for byte). */
    public enum Unreadable {
        /** An event that is not JSON, SSE framing or a JSON body that does not parse: the engine wrote garbage. */
        MALFORMED,
        /**
         * An event larger than the watch reads: what followed is not known (nor are the events completed earlier in
         * the same chunk, which the parser gives up with it).
         */
        TOO_LARGE
    }

    /**
     * What the watch saw of one answer.
     *
     * @param body the kind of body
     * @param bytes the body's bytes passed
     * @param events the stream's events (0 for a body that is not a stream)
     * @param tokenEvents the events that carried generated output (text, a chat delta's content, reasoning or tool
     *     call, token ids): the gateway's own count of what the client received, one token or more each
     * @param completionTokens {@code usage.completion_tokens}, when the answer carried a usage
     * @param firstTokenAt when the first token-carrying event passed
     * @param lastEventAt when the last event passed
     * @param error the first error's message, safe to log and show, or null when the answer carried no error
     * @param errorCode the first error's {@code code}, when it was a number (vLLM writes the HTTP status it means)
     * @param done whether {@code data: [DONE]} passed
     * @param unreadable why the watch stopped reading, or null
     */
    public record Seen(
            Body body,
            long bytes,
            int events,
            int tokenEvents,
            @Nullable Integer completionTokens,
            @Nullable Instant firstTokenAt,
            @Nullable Instant lastEventAt,
            @Nullable String error,
            @Nullable Integer errorCode,
            boolean done,
            @Nullable Unreadable unreadable) {

        /** Nothing seen yet. */
        public static Seen nothing(Body body) {
            return new Seen(body, 0, 0, 0, null, null, null, null, null, false, null);
        }
    }

    private final Body body;
    private final Collection<String> secrets;
    private final @Nullable ServerSentEvents events;
    private final @Nullable JsonBodyScan scan;
    private final EventScan eventScan = new EventScan();

    private long bytes;
    private int eventCount;
    private int tokenEvents;
    private @Nullable Integer completionTokens;
    private @Nullable Instant firstTokenAt;
    private @Nullable Instant lastEventAt;
    private @Nullable String error;
    private @Nullable Integer errorCode;
    private boolean done;
    private @Nullable Unreadable unreadable;

    /** The time of the chunk being read, for the events it completes. */
    private Instant chunkAt = Instant.EPOCH;

    /** Takes each event of the chunk being read; created once per answer. */
    private final Consumer<ServerSentEvents.Event> eventReader = event -> accept(event, chunkAt);

    /**
     * @param body the answer's kind of body
     * @param maxEventBytes the largest event read ({@link #DEFAULT_MAX_EVENT_BYTES}); a larger one stops the reading
     * @param secrets redacted from an error's message (the client's API key)
     */
    public StreamWatch(Body body, long maxEventBytes, Collection<String> secrets) {
        this.body = body;
        this.secrets = List.copyOf(secrets);
        this.events = body == Body.EVENT_STREAM
                ? new ServerSentEvents(maxEventBytes, Long.MAX_VALUE, maxEventBytes + " bytes")
                : null;
        this.scan = body == Body.JSON ? new JsonBodyScan() : null;
    }

    /**
     * Takes the next chunk of the body (its readable bytes), which passed to the client at {@code at}; the chunk's
     * reader index and reference count are left as they were.
     */
    public void feed(ByteBuf chunk, Instant at) {
        bytes += chunk.readableBytes();
        if (unreadable != null) {
            return;
        }
        if (events != null) {
            chunkAt = at;
            if (!events.read(chunk, eventReader)) {
                unreadable = Unreadable.TOO_LARGE;
            }
        } else if (scan != null && !scan.feed(chunk)) {
            unreadable = Unreadable.MALFORMED;
        }
    }

    /** The body ended (cleanly or not) at {@code at}: a last event without its blank line still counts. */
    public Seen finish(Instant at) {
        if (unreadable == null && events != null) {
            events.finish().forEach(event -> accept(event, at));
        } else if (unreadable == null && scan != null) {
            if (!scan.end()) {
                unreadable = Unreadable.MALFORMED;
            } else {
                completionTokens = scan.completionTokens();
                String message = scan.errorMessage();
                if (message != null || scan.errorCode() != null) {
                    recordError(message, scan.errorCode());
                }
            }
        }
        return seen();
    }

    /** What the watch has seen so far. */
    public Seen seen() {
        return new Seen(
                body,
                bytes,
                eventCount,
                tokenEvents,
                completionTokens,
                firstTokenAt,
                lastEventAt,
                error,
                errorCode,
                done,
                unreadable);
    }

    private void accept(ServerSentEvents.Event event, Instant at) {
        if (unreadable != null) {
            return;
        }
        eventCount++;
        lastEventAt = at;
        String data = event.data().strip();
        if (event.isError()) {
            errorEvent(data);
            return;
        }
        if (data.isEmpty()) {
            return;
        }
        if (data.equals(DONE)) {
            done = true;
            return;
        }
        if (!eventScan.read(data)) {
            unreadable = Unreadable.MALFORMED;
            return;
        }
        if (eventScan.nestedError) {
            recordError(eventScan.nestedMessage, eventScan.nestedCode);
        } else if (eventScan.flatError) {
            recordError(eventScan.flatMessage, eventScan.flatCode);
        } else {
            chunk(at);
        }
    }

    private void chunk(Instant at) {
        if (eventScan.completionTokens != null) {
            completionTokens = eventScan.completionTokens;
        }
        if (eventScan.carriesTokens) {
            tokenEvents++;
            if (firstTokenAt == null) {
                firstTokenAt = at;
            }
        }
    }

    /** llama.cpp's {@code error:} line: {@code {"code", "message"}}, an OpenAI {@code {"error": ...}}, or text. */
    private void errorEvent(String data) {
        if (!eventScan.read(data)) {
            recordError(data, null);
        } else if (eventScan.nestedError) {
            recordError(eventScan.nestedMessage, eventScan.nestedCode);
        } else {
            recordError(eventScan.flatMessage, eventScan.flatCode);
        }
    }

    private void recordError(@Nullable String message, @Nullable Integer code) {
        if (error != null) {
            return;
        }
        error = message == null || message.isBlank() ? "an error without a message" : SafeDetail.of(message, secrets);
        errorCode = code;
    }
}
