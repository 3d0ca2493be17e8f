package dev.readygate.engine;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * Splits a {@code text/event-stream} body into its events as the bytes arrive, with a bound on each event and on the
 * whole stream. Follows the WHATWG framing rules readygate meets in practice: LF, CRLF or CR line ends, {@code data:}
 * with or without the space, comment lines starting with {@code :}, multi-line data joined with LF, {@code event:}
 * naming the event, other fields ignored; except {@code error:}, which llama.cpp's llama-server writes instead of
 * {@code data:} for an error ({@code error: {"code":400,"message":...}}): its value is the data of an event named
 * {@code error}. One instance per stream; not thread-safe (Reactor delivers buffers serially). Public for the gateway,
 * which reads the streams it passes on in place, through {@link #read(ByteBuf, Consumer)}.
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

    private static final byte LF = '\n';
    private static final byte CR = '\r';
    private static final byte[] DATA = "data".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = "event".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR_FIELD = Event.ERROR.getBytes(StandardCharsets.US_ASCII);

    private final long maxEventBytes;
    private final long maxTotalBytes;
    private final String limitText;

    private boolean abandoned;
    private long totalBytes;
    /** The line being read, without its line end. */
    private byte[] line = new byte[512];

    private int lineLength;
    private boolean lastWasCr;
    private long eventBytes;
    /** The event's data lines, joined with LF; decoded once, when the event is dispatched. */
    private byte[] data = new byte[512];

    private int dataLength;
    private boolean hasData;
    private String name = Event.MESSAGE;

    /** The events the buffer being read completed: handed on only once the whole buffer was read within bounds. */
    private final List<Event> completed = new ArrayList<>(4);

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
     * Reads {@code buffer}'s readable bytes where they lie, leaving its reader index and reference count as they were
     * (the gateway passes the same buffer on to its client), and hands each event they completed to {@code each}, in
     * order. False instead of the exception once a bound is crossed, and for every call after it (the stream is
     * abandoned; the events completed earlier in the same buffer are given up with it). Allocates nothing but the
     * events, while the events fit the buffers it keeps.
     */
    public boolean read(ByteBuf buffer, Consumer<Event> each) {
        if (abandoned) {
            return false;
        }
        completed.clear();
        try {
            scan(buffer, completed);
        } catch (EngineCallException ex) {
            abandoned = true;
            completed.clear();
            return false;
        }
        for (int i = 0; i < completed.size(); i++) {
            each.accept(completed.get(i));
        }
        completed.clear();
        return true;
    }

    List<Event> feed(byte[] bytes) {
        List<Event> events = new ArrayList<>(2);
        scan(Unpooled.wrappedBuffer(bytes), events);
        return events;
    }

    /**
     * Splits the buffer's readable bytes into lines where they lie: each line end is found by Netty's search (a word at
     * a time), and a line's bytes are copied in one go into the line being read; the buffer's indexes are not moved.
     */
    private void scan(ByteBuf buffer, List<Event> events) {
        int from = buffer.readerIndex();
        int end = buffer.writerIndex();
        // Events first: when one event is the culprit, say so (the stream bound would trip on the same bytes).
        while (from < end) {
            if (lastWasCr) {
                // CRLF is one line end: its LF may begin the next buffer.
                lastWasCr = false;
                if (buffer.getByte(from) == LF) {
                    from++;
                    continue;
                }
            }
            int lf = buffer.indexOf(from, end, LF);
            int stop = lf < 0 ? end : lf;
            int cr = stop > from ? buffer.indexOf(from, stop, CR) : -1;
            if (cr >= 0) {
                stop = cr;
            }
            append(buffer, from, stop - from);
            if (stop == end) {
                break;
            }
            endLine(events);
            lastWasCr = stop == cr;
            from = stop + 1;
        }
        counted(end - buffer.readerIndex());
    }

    private void counted(int length) {
        totalBytes += length;
        if (totalBytes > maxTotalBytes) {
            throw EngineCallException.of(
                    EngineFailure.Kind.BODY_TOO_LARGE,
                    "event stream larger than readygate.engine.max-body-size (" + limitText + "); abandoned");
        }
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

    /** Appends {@code length} bytes of {@code buffer} at {@code index} to the line being read. */
    private void append(ByteBuf buffer, int index, int length) {
        if (length == 0) {
            return;
        }
        if (eventBytes + lineLength + length > maxEventBytes) {
            throw EngineCallException.of(
                    EngineFailure.Kind.BODY_TOO_LARGE,
                    "stream event larger than readygate.engine.max-body-size (" + limitText + "); abandoned");
        }
        line = room(line, lineLength + length);
        buffer.getBytes(index, line, lineLength, length);
        lineLength += length;
    }

    /** {@code bytes}, or a larger copy that holds {@code needed} (never more than an event may hold). */
    private byte[] room(byte[] bytes, int needed) {
        if (needed <= bytes.length) {
            return bytes;
        }
        long grown = Math.min(Math.max((long) bytes.length * 2, needed), Math.max(maxEventBytes, needed));
        return Arrays.copyOf(bytes, Math.toIntExact(grown));
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
            int field = colon < 0 ? lineLength : colon;
            boolean isData = named(DATA, field);
            boolean isError = !isData && named(ERROR_FIELD, field);
            boolean isEvent = !isData && !isError && named(EVENT, field);
            if (!isData && !isError && !isEvent) {
                return;
            }
            int start = colon < 0 ? lineLength : colon + 1;
            if (start < lineLength && line[start] == ' ') {
                start++;
            }
            if (isEvent) {
                name = new String(line, start, lineLength - start, StandardCharsets.UTF_8);
                return;
            }
            if (isError) {
                name = Event.ERROR;
            }
            int length = lineLength - start;
            data = room(data, dataLength + length + 1);
            if (hasData) {
                data[dataLength++] = LF;
            }
            System.arraycopy(line, start, data, dataLength, length);
            dataLength += length;
            hasData = true;
        } finally {
            lineLength = 0;
        }
    }

    /** Whether the line's field name, its first {@code length} bytes, is {@code field}. */
    private boolean named(byte[] field, int length) {
        return length == field.length && Arrays.equals(line, 0, length, field, 0, length);
    }

    private void dispatch(List<Event> events) {
        if (hasData) {
            events.add(new Event(
                    name.isEmpty() ? Event.MESSAGE : name, new String(data, 0, dataLength, StandardCharsets.UTF_8)));
        }
        dataLength = 0;
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
