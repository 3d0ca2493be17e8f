package dev.readygate.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * Splits a {@code text/event-stream} body into its events as the bytes arrive, with a bound on each event and on the
 * whole stream. Follows the WHATWG framing rules readygate meets in practice: LF, CRLF or CR line ends, {@code data:}
 * with or without the space, comment lines starting with {@code :}, multi-line data joined with LF, {@code event:}
 * naming the event, other fields ignored; except {@code error:}, which llama.cpp's llama-server writes instead of
 * {@code data:} for an error ({@code error: {"code":400,"message":...}}): its value is the data of an event named
 * {@code error}. One instance per stream; not thread-safe (Reactor delivers buffers serially). Public for the gateway,
 * which reads the streams it passes on through {@link #read(byte[])}.
 */
public final class ServerSentEvents {

    /**
     * One event.
     *
     * @param name the {@code event:} field, {@value #MESSAGE} when there was none, {@value #ERROR} for llama.cpp's
     *     {@code error:} lines
     * @param data the data
     */
    public record Event(String name, String data) {

        static final String MESSAGE = "message";
        static final String ERROR = "error";

        static Event message(String data) {
            return new Event(MESSAGE, data);
        }

        public boolean isError() {
            return name.equals(ERROR);
        }
    }

    private final long maxEventBytes;
    private final long maxTotalBytes;
    private final String limitText;

    private boolean abandoned;
    private long totalBytes;
    private byte[] line = new byte[512];
    private int lineLength;
    private boolean lastWasCr;
    private long eventBytes;
    private final StringBuilder data = new StringBuilder();
    private boolean hasData;
    private String name = Event.MESSAGE;

    /**
     * @param maxEventBytes the largest event, field names and line ends included
     * @param maxTotalBytes the largest stream
     * @param limitText the configured limit as the operator wrote it, for failure details
     */
    public ServerSentEvents(long maxEventBytes, long maxTotalBytes, String limitText) {
        this.maxEventBytes = maxEventBytes;
        this.maxTotalBytes = maxTotalBytes;
        this.limitText = limitText;
    }

    /**
     * Consumes and releases one buffer; returns the data of the events it completed, in order. A buffer's bytes are
     * copied once (at most {@code maxTotalBytes} over the stream) and the buffer is released before returning.
     *
     * @throws EngineCallException {@code BODY_TOO_LARGE} as soon as a bound is crossed
     */
    List<Event> feed(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            return feed(bytes);
        } finally {
            DataBufferUtils.release(buffer);
        }
    }

    /**
     * {@link #feed(byte[])} for a reader outside the package: null instead of the exception once a bound is crossed,
     * and for every call after it (the stream is abandoned).
     */
    public @Nullable List<Event> read(byte[] bytes) {
        if (abandoned) {
            return null;
        }
        try {
            return feed(bytes);
        } catch (EngineCallException ex) {
            abandoned = true;
            return null;
        }
    }

    List<Event> feed(byte[] bytes) {
        List<Event> events = new ArrayList<>(2);
        // Events first: when one event is the culprit, say so (the stream bound would trip on the same bytes).
        for (byte b : bytes) {
            if (b == '\n') {
                if (lastWasCr) {
                    lastWasCr = false;
                } else {
                    endLine(events);
                }
            } else if (b == '\r') {
                endLine(events);
                lastWasCr = true;
            } else {
                lastWasCr = false;
                append(b);
            }
        }
        totalBytes += bytes.length;
        if (totalBytes > maxTotalBytes) {
            throw EngineCallException.of(
                    EngineFailure.Kind.BODY_TOO_LARGE,
                    "event stream larger than readygate.engine.max-body-size (" + limitText + "); abandoned");
        }
        return events;
    }

    /**
     * The stream ended cleanly: returns the pending event when its last line was complete (a missing final blank
     * line is forgiven) and nothing for a partial line, which is a cut-off event.
     */
    public List<Event> finish() {
        if (!abandoned && lineLength == 0 && hasData) {
            List<Event> events = new ArrayList<>(1);
            dispatch(events);
            return events;
        }
        return List.of();
    }

    private void append(byte b) {
        if (eventBytes + lineLength >= maxEventBytes) {
            throw EngineCallException.of(
                    EngineFailure.Kind.BODY_TOO_LARGE,
                    "stream event larger than readygate.engine.max-body-size (" + limitText + "); abandoned");
        }
        if (lineLength == line.length) {
            line = Arrays.copyOf(line, Math.toIntExact(Math.min((long) line.length * 2, maxEventBytes)));
        }
        line[lineLength++] = b;
    }

    private void endLine(List<Event> events) {
        eventBytes += lineLength + 1;
        if (lineLength == 0) {
            dispatch(events);
            return;
        }
        try {
            if (line[0] == ':') {
                return;
            }
            int colon = indexOf(':');
            String field = new String(line, 0, colon < 0 ? lineLength : colon, StandardCharsets.UTF_8);
            if (!field.equals("data") && !field.equals("event") && !field.equals(Event.ERROR)) {
                return;
            }
            int start = colon < 0 ? lineLength : colon + 1;
            if (start < lineLength && line[start] == ' ') {
                start++;
            }
            if (field.equals("event")) {
                name = new String(line, start, lineLength - start, StandardCharsets.UTF_8);
                return;
            }
            if (field.equals(Event.ERROR)) {
                name = Event.ERROR;
            }
            if (hasData) {
                data.append('\n');
            }
            data.append(new String(line, start, lineLength - start, StandardCharsets.UTF_8));
            hasData = true;
        } finally {
            lineLength = 0;
        }
    }

    private void dispatch(List<Event> events) {
        if (hasData) {
            events.add(new Event(name.isEmpty() ? Event.MESSAGE : name, data.toString()));
        }
        data.setLength(0);
        hasData = false;
        name = Event.MESSAGE;
        eventBytes = 0;
    }

    private int indexOf(char c) {
        for (int i = 0; i < lineLength; i++) {
            if (line[i] == c) {
                return i;
            }
        }
        return -1;
    }
}
