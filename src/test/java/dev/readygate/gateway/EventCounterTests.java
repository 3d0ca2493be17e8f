package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EventCounterTests {

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = ';',
            value = {
                "one event in one buffer ; data: a\\n\\n ; 1",
                "two events ; data: a\\n\\ndata: b\\n\\n ; 2",
                "a blank line split across buffers ; data: a\\n|\\ndata: b\\n|\\n ; 2",
                "CRLF line ends ; data: a\\r\\n\\r\\n ; 1",
                "an event not ended yet ; data: a\\ndata: b\\n ; 0",
                "a multi-line event ; event: x\\ndata: a\\ndata: b\\n\\n ; 1"
            })
    void countCountsEventsWhereverBuffersSplitThem(String name, String buffers, long events) {
        EventCounter counter = new EventCounter();
        for (String buffer : buffers.strip().split("\\|", -1)) {
            String text = buffer.replace("\\n", "\n").replace("\\r", "\r");
            counter.count(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
        }
        assertThat(counter.events()).isEqualTo(events);
    }
}
