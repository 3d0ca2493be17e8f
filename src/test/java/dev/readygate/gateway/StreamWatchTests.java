package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link StreamWatch} fed the bytes vLLM and llama-server write, in chunks of every size. */
class StreamWatchTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    static final String KEY = "sk-client-key-0123456789";

    /** A vLLM chat stream: the role chunk (no token), two content chunks, the finish, the usage, [DONE]. */
    static final String CHAT = """
            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"SECRET-COMPLETION"},"finish_reason":null}]}

            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" text"},"finish_reason":null}]}

            data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}

            data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}

            data: [DONE]

            """;

    static StreamWatch watch(StreamWatch.Body body) {
        return new StreamWatch(body, StreamWatch.DEFAULT_MAX_EVENT_BYTES, List.of(KEY));
    }

    /**
     * Feeds {@code text} in chunks of {@code size} bytes, the n-th chunk passing at T0 + n seconds, in heap and direct
     * buffers in turn, each behind bytes already read ({@link #chunk}); checks that every chunk is left as it was.
     */
    static StreamWatch.Seen fed(StreamWatch watch, String text, int size) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int n = 0;
        for (int i = 0; i < bytes.length; i += size) {
            feed(watch, bytes, i, Math.min(size, bytes.length - i), n % 2 == 1, T0.plusSeconds(n++));
        }
        return watch.finish(T0.plusSeconds(n));
    }

    /** Feeds {@code bytes[from, from + length)} as one chunk and checks that the chunk was left as it was. */
    static void feed(StreamWatch watch, byte[] bytes, int from, int length, boolean direct, Instant at) {
        ByteBuf chunk = chunk(bytes, from, length, direct);
        int reader = chunk.readerIndex();
        int writer = chunk.writerIndex();
        try {
            watch.feed(chunk, at);
            assertThat(chunk.readerIndex()).as("reader index").isEqualTo(reader);
            assertThat(chunk.writerIndex()).as("writer index").isEqualTo(writer);
            assertThat(chunk.refCnt()).as("reference count").isEqualTo(1);
        } finally {
            chunk.release();
        }
    }

    /**
     * A buffer whose readable bytes are {@code bytes[from, from + length)}, behind three line ends already read (a
     * reader that ignored the reader index would end a line or an event early).
     */
    static ByteBuf chunk(byte[] bytes, int from, int length, boolean direct) {
        ByteBuf buffer = direct ? Unpooled.directBuffer(length + 3) : Unpooled.buffer(length + 3);
        buffer.writeBytes(new byte[] {'\n', '\r', '\n'})
                .writeBytes(bytes, from, length)
                .readerIndex(3);
        return buffer;
    }

    /** Feeds {@code text} in two chunks split at {@code at}. */
    static StreamWatch.Seen split(StreamWatch watch, String text, int at) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        feed(watch, bytes, 0, at, false, T0);
        feed(watch, bytes, at, bytes.length - at, true, T0);
        return watch.finish(T0);
    }

    static StreamWatch.Seen streamed(String text) {
        return fed(watch(StreamWatch.Body.EVENT_STREAM), text, 7);
    }

    @Test
    void finishWhenChatStreamEndsWithDoneCountsEventsTokensUsageAndDone() {
        StreamWatch.Seen seen = streamed(CHAT);
        assertThat(seen.events()).isEqualTo(6);
        assertThat(seen.tokenEvents()).isEqualTo(2);
        assertThat(seen.completionTokens()).isEqualTo(2);
        assertThat(seen.done()).isTrue();
        assertThat(seen.error()).isNull();
        assertThat(seen.unreadable()).isNull();
        assertThat(seen.bytes()).isEqualTo(CHAT.getBytes(StandardCharsets.UTF_8).length);
    }

    @Test
    void finishWhenBytesArriveOneByOneSeesTheSameAsWhole() {
        StreamWatch.Seen whole = fed(watch(StreamWatch.Body.EVENT_STREAM), CHAT, Integer.MAX_VALUE);
        StreamWatch.Seen byBytes = fed(watch(StreamWatch.Body.EVENT_STREAM), CHAT, 1);
        assertThat(byBytes)
                .usingRecursiveComparison()
                .ignoringFields("firstTokenAt", "lastEventAt")
                .isEqualTo(whole);
    }

    /** A vLLM error event with CRLF line ends, [DONE] after it, and an answer the watch reads as a JSON body. */
    static final String ERROR_STREAM = "data: {\"choices\":[{\"index\":0,\"text\":\"Hi\"}]}\r\n\r\n"
            + "data: {\"error\": {\"message\": \"EngineCore died\", \"code\": 500}}\r\n\r\ndata: [DONE]\r\n\r\n";

    static final String JSON_BODY = "{\"id\":\"c\",\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":16},"
            + "\"error\":{\"message\":\"late\",\"code\":503}}";

    @Test
    void finishWhenTheBodyIsSplitInTwoAtEveryByteSeesTheSameAsWhole() {
        for (StreamWatch.Body body : List.of(StreamWatch.Body.EVENT_STREAM, StreamWatch.Body.JSON)) {
            for (String text : body == StreamWatch.Body.JSON ? List.of(JSON_BODY) : List.of(CHAT, ERROR_STREAM)) {
                StreamWatch.Seen whole = fed(watch(body), text, Integer.MAX_VALUE);
                int length = text.getBytes(StandardCharsets.UTF_8).length;
                for (int at = 0; at <= length; at++) {
                    assertThat(split(watch(body), text, at))
                            .as("split at byte %d", at)
                            .usingRecursiveComparison()
                            .ignoringFields("firstTokenAt", "lastEventAt")
                            .isEqualTo(whole);
                }
            }
        }
    }

    @Test
    void finishWhenTheWholeBodyIsOneBufferReadsEveryEventOfIt() {
        assertThat(fed(watch(StreamWatch.Body.EVENT_STREAM), ERROR_STREAM, Integer.MAX_VALUE))
                .satisfies(seen -> {
                    assertThat(seen.events()).isEqualTo(3);
                    assertThat(seen.tokenEvents()).isEqualTo(1);
                    assertThat(seen.error()).isEqualTo("EngineCore died");
                    assertThat(seen.done()).isTrue();
                });
        assertThat(fed(watch(StreamWatch.Body.JSON), JSON_BODY, Integer.MAX_VALUE))
                .satisfies(seen -> {
                    assertThat(seen.completionTokens()).isEqualTo(16);
                    assertThat(seen.error()).isEqualTo("late");
                    assertThat(seen.errorCode()).isEqualTo(503);
                });
    }

    @Test
    void feedWhenFirstTokenEventPassesNotesItsTimeNotTheRoleChunks() {
        StreamWatch watch = watch(StreamWatch.Body.EVENT_STREAM);
        String[] events = CHAT.split("\n\n");
        // The role chunk at T0, the first content chunk at T0 + 3 s.
        byte[] role = (events[0] + "\n\n").getBytes(StandardCharsets.UTF_8);
        byte[] content = (events[1] + "\n\n").getBytes(StandardCharsets.UTF_8);
        feed(watch, role, 0, role.length, true, T0);
        feed(watch, content, 0, content.length, false, T0.plusSeconds(3));
        assertThat(watch.seen().firstTokenAt()).isEqualTo(T0.plusSeconds(3));
        assertThat(watch.seen().lastEventAt()).isEqualTo(T0.plusSeconds(3));
        assertThat(watch.seen().done()).isFalse();
    }

    @Test
    void seenNeverHoldsTheCompletionText() {
        assertThat(streamed(CHAT).toString()).doesNotContain("SECRET-COMPLETION");
        assertThat(fed(watch(StreamWatch.Body.JSON), """
                        {"choices":[{"message":{"content":"SECRET-COMPLETION"}}],"usage":{"completion_tokens":3}}""", 5).toString()).doesNotContain("SECRET-COMPLETION");
    }

    @Test
    void finishWhenVllmWritesAnErrorEventInsideA200StreamRecordsItsMessageAndCode() {
        // vLLM 0.31 after the engine core died: the error event, then [DONE].
        StreamWatch.Seen seen = streamed("""
                data: {"choices":[{"index":0,"text":"Hello"}]}

                data: {"error": {"message": "EngineCore encountered an issue. See stack trace (above) for the root cause.", "type": "InternalServerError", "param": null, "code": 500}}

                data: [DONE]

                """);
        assertThat(seen.error())
                .isEqualTo("EngineCore encountered an issue. See stack trace (above) for the root cause.");
        assertThat(seen.errorCode()).isEqualTo(500);
        assertThat(seen.done()).isTrue();
        assertThat(seen.tokenEvents()).isEqualTo(1);
    }

    @Test
    void finishWhenOlderVllmWritesTheFlatErrorShapeRecordsIt() {
        StreamWatch.Seen seen = streamed("""
                data: {"object": "error", "message": "Insufficient KV cache blocks", "type": "InternalServerError", "code": 500}

                """);
        assertThat(seen.error()).isEqualTo("Insufficient KV cache blocks");
        assertThat(seen.errorCode()).isEqualTo(500);
    }

    @Test
    void finishWhenLlamaServerWritesAnErrorLineRecordsIt() {
        StreamWatch.Seen seen = streamed("""
                error: {"code":500,"message":"slot crashed","type":"server_error"}

                """);
        assertThat(seen.error()).isEqualTo("slot crashed");
        assertThat(seen.errorCode()).isEqualTo(500);
    }

    @Test
    void finishWhenErrorMessageCarriesTheClientsKeyOrEchoedInputRedactsThem() {
        StreamWatch.Seen seen = streamed("data: {\"error\": {\"message\": \"bad key " + KEY
                + " [type=x, input_value='the prompt', input_type=str]\", \"code\": 400}}\n\n");
        assertThat(seen.error())
                .doesNotContain(KEY)
                .doesNotContain("the prompt")
                .contains("<redacted>");
        assertThat(seen.errorCode()).isEqualTo(400);
    }

    @Test
    void finishWhenTwoErrorsPassKeepsTheFirst() {
        StreamWatch.Seen seen = streamed("""
                data: {"error": {"message": "first", "code": 500}}

                data: {"error": {"message": "second", "code": 400}}

                """);
        assertThat(seen.error()).isEqualTo("first");
        assertThat(seen.errorCode()).isEqualTo(500);
    }

    @Test
    void finishWhenTokenFieldsAppearOnlyDeeperInAnEventDoesNotCountThem() {
        StreamWatch.Seen seen = streamed("""
                data: {"choices":[{"index":0,"text":"","logprobs":{"text":"x","tokens":["x"]},"delta":{"extra":{"content":"y"}}}]}

                data: {"usage":{"detail":{"completion_tokens":99}},"choices":[{"delta":{"tool_calls":[]}}]}

                data: {"choices":[{"delta":{"tool_calls":[[],{"a":[1]}]}}],"usage":{"completion_tokens":7}}

                """);
        assertThat(seen.tokenEvents()).isEqualTo(1);
        assertThat(seen.completionTokens()).isEqualTo(7);
        assertThat(seen.error()).isNull();
        assertThat(seen.unreadable()).isNull();
    }

    @Test
    void finishWhenTheNestedErrorIsNullReadsTheFlatOneAndTrailingTextIsMalformed() {
        assertThat(streamed("""
                        data: {"error": null, "object": "error", "message": "flat", "code": 503}

                        """)).satisfies(seen -> {
            assertThat(seen.error()).isEqualTo("flat");
            assertThat(seen.errorCode()).isEqualTo(503);
        });
        assertThat(streamed("data: {\"choices\":[]} trailing\n\n").unreadable())
                .isEqualTo(StreamWatch.Unreadable.MALFORMED);
        assertThat(streamed("data: [1, 2]\n\n").unreadable()).isEqualTo(StreamWatch.Unreadable.MALFORMED);
    }

    @Test
    void finishWhenAnEventIsNotJsonIsMalformedAndStopsReading() {
        StreamWatch.Seen seen = streamed("""
                data: {"choices":[{"text":

                data: [DONE]

                """);
        assertThat(seen.unreadable()).isEqualTo(StreamWatch.Unreadable.MALFORMED);
        assertThat(seen.done()).isFalse();
    }

    @Test
    void finishWhenAnEventIsLargerThanTheWatchReadsIsTooLargeYetCountsTheBytes() {
        StreamWatch watch = new StreamWatch(StreamWatch.Body.EVENT_STREAM, 64, List.of());
        String big = "data: {\"choices\":[{\"text\":\"" + "x".repeat(100) + "\"}]}\n\ndata: [DONE]\n\n";
        StreamWatch.Seen seen = fed(watch, big, 10);
        assertThat(seen.unreadable()).isEqualTo(StreamWatch.Unreadable.TOO_LARGE);
        assertThat(seen.done()).isFalse();
        assertThat(seen.bytes()).isEqualTo(big.length());
    }

    @Test
    void finishWhenCompletionsStreamCarriesTokenIdsOrTextCountsThem() {
        StreamWatch.Seen seen = streamed("""
                data: {"choices":[{"index":0,"text":"","token_ids":[17]}]}

                data: {"choices":[{"index":0,"text":"a"}]}

                data: {"choices":[{"index":0,"text":"","finish_reason":"length"}]}

                """);
        assertThat(seen.tokenEvents()).isEqualTo(2);
        assertThat(seen.done()).isFalse();
    }

    @Test
    void finishWhenChatDeltaCarriesReasoningOrToolCallsCountsThemAsTokens() {
        StreamWatch.Seen seen = streamed("""
                data: {"choices":[{"delta":{"reasoning_content":"hm"}}]}

                data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}

                """);
        assertThat(seen.tokenEvents()).isEqualTo(2);
    }

    @Test
    void finishWhenJsonBodyCarriesNestedErrorRecordsMessageAndCode() {
        StreamWatch.Seen seen = fed(watch(StreamWatch.Body.JSON), """
                {"error": {"message": "The model `x` does not exist.", "type": "NotFoundError", "param": "model", "code": 404}}""", 3);
        assertThat(seen.error()).isEqualTo("The model `x` does not exist.");
        assertThat(seen.errorCode()).isEqualTo(404);
        assertThat(seen.events()).isZero();
    }

    @Test
    void finishWhenJsonBodyCarriesFlatErrorOrPlainErrorStringRecordsIt() {
        assertThat(fed(watch(StreamWatch.Body.JSON), """
                        {"object": "error", "message": "flat", "type": "BadRequestError", "code": 400}""", 4).error()).isEqualTo("flat");
        assertThat(fed(watch(StreamWatch.Body.JSON), "{\"error\": \"plain\"}", 4)
                        .error())
                .isEqualTo("plain");
        assertThat(fed(watch(StreamWatch.Body.JSON), "{\"error\": {\"code\": 500}}", 4)
                        .error())
                .isEqualTo("an error without a message");
    }

    @Test
    void finishWhenJsonBodyIsACompletionReadsItsUsageAndNoError() {
        StreamWatch.Seen seen = fed(watch(StreamWatch.Body.JSON), """
                {"id":"c","object":"text_completion","choices":[{"text":"error","message":"not an error",\
                "finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":16,"total_tokens":20}}""", 2);
        assertThat(seen.error()).isNull();
        assertThat(seen.completionTokens()).isEqualTo(16);
        assertThat(seen.unreadable()).isNull();
    }

    @Test
    void finishWhenJsonBodyIsCutOrNotJsonIsMalformed() {
        assertThat(fed(watch(StreamWatch.Body.JSON), "{\"choices\":[{\"text\":\"a", 4)
                        .unreadable())
                .isEqualTo(StreamWatch.Unreadable.MALFORMED);
        assertThat(fed(watch(StreamWatch.Body.JSON), "Internal Server Error", 4).unreadable())
                .isEqualTo(StreamWatch.Unreadable.MALFORMED);
    }

    @Test
    void finishWhenBodyIsNeitherStreamNorJsonOnlyCountsBytes() {
        StreamWatch.Seen seen = fed(watch(StreamWatch.Body.OTHER), "# HELP x\nx 1\n", 4);
        assertThat(seen)
                .isEqualTo(new StreamWatch.Seen(
                        StreamWatch.Body.OTHER, 13, 0, 0, null, null, null, null, null, false, null));
    }
}
