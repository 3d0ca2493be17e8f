package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.NettyDataBufferFactory;

/** Framing and bounds of {@link ServerSentEvents}, fed bytes directly. */
class ServerSentEventsTests {

    static List<String> events(ServerSentEvents parser, String text) {
        return data(parser.feed(text.getBytes(StandardCharsets.UTF_8)));
    }

    static List<String> data(List<ServerSentEvents.Event> events) {
        return events.stream().map(ServerSentEvents.Event::data).toList();
    }

    static ServerSentEvents parser() {
        return new ServerSentEvents(1024, 4096, "1KB");
    }

    @Test
    void feedWhenLinesEndWithLfCrlfOrCrReturnsEachEventsData() {
        assertThat(events(parser(), "data: one\n\ndata: two\r\n\r\ndata: three\r\rdata: four\n\n"))
                .containsExactly("one", "two", "three", "four");
    }

    @Test
    void feedWhenBytesArriveOneByOneReturnsEachEventOnceComplete() {
        ServerSentEvents parser = parser();
        List<String> out = new ArrayList<>();
        for (byte b : "data: {\"a\":\"é\"}\r\n\r\ndata: [DONE]\r\n\r\n".getBytes(StandardCharsets.UTF_8)) {
            out.addAll(data(parser.feed(new byte[] {b})));
        }

        assertThat(out).containsExactly("{\"a\":\"é\"}", "[DONE]");
    }

    @Test
    void feedWhenDataHasNoSpaceOrSpansLinesJoinsTheLinesWithLf() {
        assertThat(events(parser(), "data:one\ndata:  two\ndata\n\n")).containsExactly("one\n two\n");
    }

    @Test
    void feedWhenLinesAreCommentsOtherFieldsOrBlankIgnoresThem() {
        assertThat(events(parser(), ": ping\n\nevent: message\nid: 7\nretry: 10\ndata: x\n\n\n\n"))
                .containsExactly("x");
    }

    @Test
    void feedWhenLlamaServerWritesAnErrorLineReturnsAnErrorEvent() {
        // llama-server's stream for a request that does not fit (--no-context-shift), byte for byte.
        String stream = "error: {\"code\":400,\"message\":\"the request exceeds the available context size. try"
                + " increasing the context size or enable context shift\",\"type\":\"invalid_request_error\"}\n\n"
                + "data: [DONE]\n\n";

        List<ServerSentEvents.Event> events = parser().feed(stream.getBytes(StandardCharsets.UTF_8));

        assertThat(events).hasSize(2);
        assertThat(events.get(0).isError()).isTrue();
        assertThat(events.get(0).data()).startsWith("{\"code\":400,");
        assertThat(events.get(1)).isEqualTo(ServerSentEvents.Event.message("[DONE]"));
    }

    @Test
    void feedWhenAnEventIsNamedKeepsTheName() {
        List<ServerSentEvents.Event> events = parser().feed(
                        "event: error\ndata: {\"error\":\"boom\"}\n\ndata: x\n\n".getBytes(StandardCharsets.UTF_8));

        assertThat(events)
                .containsExactly(
                        new ServerSentEvents.Event("error", "{\"error\":\"boom\"}"),
                        ServerSentEvents.Event.message("x"));
    }

    @Test
    void finishWhenTheLastEventLacksItsBlankLineReturnsIt() {
        ServerSentEvents parser = parser();

        assertThat(events(parser, "data: [DONE]\n")).isEmpty();
        assertThat(data(parser.finish())).containsExactly("[DONE]");
    }

    @Test
    void finishWhenTheLastLineIsCutReturnsNothing() {
        ServerSentEvents parser = parser();

        assertThat(events(parser, "data: {\"id\":\"cmpl-1\",\"ch")).isEmpty();
        assertThat(parser.finish()).isEmpty();
    }

    @Test
    void feedWhenAnEventExceedsTheBoundThrowsBodyTooLarge() {
        ServerSentEvents parser = parser();

        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> events(parser, "data: " + "x".repeat(600) + "\ndata: " + "x".repeat(600)))
                .satisfies(ex -> {
                    assertThat(ex.failure().kind()).isEqualTo(EngineFailure.Kind.BODY_TOO_LARGE);
                    assertThat(ex.failure().detail())
                            .isEqualTo("stream event larger than readygate.engine.max-body-size (1KB); abandoned");
                });
    }

    @Test
    void feedWhenTheStreamExceedsTheBoundThrowsBodyTooLarge() {
        ServerSentEvents parser = parser();
        String event = "data: " + "x".repeat(500) + "\n\n";
        for (int i = 0; i < 8; i++) {
            events(parser, event);
        }

        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> events(parser, event))
                .satisfies(ex -> assertThat(ex.failure().detail()).startsWith("event stream larger than"));
    }

    @Test
    void feedWhenABoundIsCrossedStillReleasesTheBuffer() {
        NettyDataBufferFactory factory = new NettyDataBufferFactory(UnpooledByteBufAllocator.DEFAULT);
        ByteBuf fine = Unpooled.copiedBuffer("data: x\n\n", StandardCharsets.UTF_8);
        ByteBuf huge = Unpooled.copiedBuffer("data: " + "x".repeat(5000), StandardCharsets.UTF_8);
        ServerSentEvents parser = parser();

        assertThat(data(parser.feed(factory.wrap(fine)))).containsExactly("x");
        assertThatExceptionOfType(EngineCallException.class).isThrownBy(() -> parser.feed(factory.wrap(huge)));
        assertThat(fine.refCnt()).isZero();
        assertThat(huge.refCnt()).isZero();
    }

    @Test
    void readWhenABoundIsCrossedReturnsFalseThenAndEverAfter() {
        ServerSentEvents parser = parser();
        List<ServerSentEvents.Event> read = new ArrayList<>();
        assertThat(parser.read(Unpooled.copiedBuffer("data: one\n\n", StandardCharsets.UTF_8), read::add))
                .isTrue();
        assertThat(parser.read(Unpooled.copiedBuffer("data: " + "x".repeat(2000), StandardCharsets.UTF_8), read::add))
                .isFalse();
        assertThat(parser.read(Unpooled.copiedBuffer("\n\ndata: two\n\n", StandardCharsets.UTF_8), read::add))
                .isFalse();
        assertThat(data(read)).containsExactly("one");
        assertThat(parser.finish()).isEmpty();
    }

    @Test
    void readWhenABufferCompletesEventsAfterBytesAlreadyReadHandsOnlyThoseOnAndLeavesItAsItWas() {
        ServerSentEvents parser = parser();
        ByteBuf buffer = Unpooled.directBuffer();
        buffer.writeCharSequence("data: gone\n\ndata: one\n\nevent: e\ndata: two\n\ndata: th", StandardCharsets.UTF_8);
        buffer.readerIndex("data: gone\n\n".length());
        int writer = buffer.writerIndex();
        List<ServerSentEvents.Event> read = new ArrayList<>();

        assertThat(parser.read(buffer, read::add)).isTrue();

        assertThat(read)
                .containsExactly(new ServerSentEvents.Event("message", "one"), new ServerSentEvents.Event("e", "two"));
        assertThat(buffer.readerIndex()).isEqualTo("data: gone\n\n".length());
        assertThat(buffer.writerIndex()).isEqualTo(writer);
        assertThat(buffer.refCnt()).isEqualTo(1);
        buffer.release();
        assertThat(parser.read(Unpooled.copiedBuffer("ree\n\n", StandardCharsets.UTF_8), read::add))
                .isTrue();
        assertThat(data(read)).containsExactly("one", "two", "three");
    }
}
