package dev.readygate.gateway;

import io.netty.buffer.ByteBuf;

/**
 * Counts server-sent events in a stream read buffer by buffer: an event ends at a blank line ({@code \n\n}, or with
 * {@code \r\n} line ends), wherever the buffers split it. Reads the buffer without moving its indexes; keeps no byte.
 */
final class EventCounter {

    private boolean afterLineEnd;
    private long events;

    void count(ByteBuf buffer) {
        buffer.forEachByte(b -> {
            if (b == '\n') {
                if (afterLineEnd) {
                    events++;
                    afterLineEnd = false;
                } else {
                    afterLineEnd = true;
                }
            } else if (b != '\r') {
                afterLineEnd = false;
            }
            return true;
        });
    }

    long events() {
        return events;
    }
}
