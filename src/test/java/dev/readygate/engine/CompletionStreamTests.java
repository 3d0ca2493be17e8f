package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** {@link CompletionStream}: what it keeps from each event, and its timing on a ticker the test moves. */
class CompletionStreamTests {

    final AtomicLong nanos = new AtomicLong();

    final CompletionStream stream =
            new CompletionStream(JsonMapper.builder().build(), nanos::get, List.of("a secret prompt"), 3);

    void at(long millis, String data) {
        nanos.set(Duration.ofMillis(millis).toNanos());
        stream.accept(data);
    }

    static String token(String text, int id, double logprob, String finish) {
        return "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"" + text
                + "\",\"token_ids\":[" + id + "],\"logprobs\":{\"token_logprobs\":[" + logprob + "]},"
                + "\"finish_reason\":" + (finish == null ? "null" : "\"" + finish + "\"") + "}],\"usage\":null}";
    }

    @Test
    void resultWhenTokensArriveMeasuresTimeToFirstTokenAndTheGapsBetweenThem() {
        // t=0 request sent; an empty first chunk carries no token; then tokens at 150, 170 and 230 ms.
        at(100, "{\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":null}]}");
        at(150, token(" Paris", 12095, -0.42, null));
        at(170, token(",", 11, -1.0, null));
        at(230, token(" France", 9822, -2.0, "length"));
        at(240, "{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8}}");
        at(250, "[DONE]");

        StreamedCompletion result = stream.result();

        assertThat(result.timeToFirstToken()).isEqualTo(Duration.ofMillis(150));
        assertThat(result.maxInterTokenLatency()).isEqualTo(Duration.ofMillis(60));
        assertThat(result.meanInterTokenLatency()).isEqualTo(Duration.ofMillis(40));
        assertThat(result.total()).isEqualTo(Duration.ofMillis(250));
        assertThat(result.text()).isEqualTo(" Paris, France");
        assertThat(result.tokenIds()).containsExactly(12095, 11, 9822);
        assertThat(result.tokenLogprobs()).containsExactly(-0.42, -1.0, -2.0);
        assertThat(result.finishReason()).isEqualTo("length");
        assertThat(result.textChunks()).isEqualTo(4);
        assertThat(result.promptTokens()).isEqualTo(5);
        assertThat(result.completionTokens()).isEqualTo(3);
    }

    @Test
    void acceptWhenAnErrorEventArrivesRecordsItsMessageAndReadsOnToDone() {
        at(
                10,
                "{\"error\":{\"message\":\"EngineCore failed on a secret prompt\",\"type\":\"InternalServerError\","
                        + "\"code\":500}}");
        at(20, "{\"object\":\"error\",\"message\":\"a second error\"}");
        at(30, "{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":0}}");
        at(40, "[DONE]");

        StreamedCompletion result = stream.result();

        assertThat(result.errorEvent()).isEqualTo("EngineCore failed on <redacted>");
        assertThat(result.timeToFirstToken()).isZero();
        assertThat(result.tokenIds()).isEmpty();
        assertThat(result.completionTokens()).isZero();
    }

    @Test
    void acceptWhenAnEventIsNotJsonThrowsMalformedBodyWithoutQuotingIt() {
        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> at(10, "{\"choices\":[{\"text\": Paris}]}"))
                .satisfies(ex -> {
                    assertThat(ex.failure().kind()).isEqualTo(EngineFailure.Kind.MALFORMED_BODY);
                    assertThat(ex.failure().detail()).startsWith("stream event 1 is not JSON (line 1, column");
                    assertThat(ex.failure().detail()).doesNotContain("Paris");
                });
    }

    @Test
    void acceptWhenAChunkHasNoChoicesThrowsMalformedBody() {
        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> at(10, "{\"id\":\"cmpl-1\"}"))
                .satisfies(ex -> assertThat(ex.failure().detail()).isEqualTo("stream event 1 has no choices array"));
    }

    @Test
    void resultWhenDoneIsMissingThrowsTruncatedStream() {
        at(10, token("Hi", 5, -0.1, null));

        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(stream::result)
                .satisfies(ex -> {
                    assertThat(ex.failure().kind()).isEqualTo(EngineFailure.Kind.TRUNCATED_STREAM);
                    assertThat(ex.failure().detail()).isEqualTo("stream ended after 1 event without [DONE]");
                });
    }

    @Test
    void progressWhenTheStreamIsQuietSaysForHowLong() {
        Duration timeout = Duration.ofMillis(900);
        assertThat(stream.progress(timeout)).isEqualTo("no event yet");

        at(100, token("Hi", 5, -0.1, null));
        at(120, token(" there", 6, -0.1, null));
        nanos.set(Duration.ofMillis(900).toNanos());

        assertThat(stream.progress(timeout)).isEqualTo("stalled after 2 events, the last 780 ms before");
    }

    @Test
    void aStreamThatBeganLateAndIsStillUnderWayIsSlowNotStalled() {
        // The first token after 800 ms of a 900 ms budget: the stream did not stop, it is late.
        at(800, token("Hi", 5, -0.1, null));
        nanos.set(Duration.ofMillis(900).toNanos());

        assertThat(stream.progress(Duration.ofMillis(900)))
                .isEqualTo("still streaming: 1 event, the last 100 ms before");
        // Quiet for half the budget is a stall.
        assertThat(stream.progress(Duration.ofMillis(200))).isEqualTo("stalled after 1 event, the last 100 ms before");
    }

    @Test
    void resultWhenLlamaServerEndsWithAnErrorLineKeepsItsMessage() {
        // --no-context-shift and a prompt that does not fit: llama-server writes `error: {...}` and then [DONE].
        stream.accept(new ServerSentEvents.Event(
                ServerSentEvents.Event.ERROR,
                "{\"code\":400,\"message\":\"the request exceeds the available context size. try increasing the"
                        + " context size or enable context shift\",\"type\":\"invalid_request_error\"}"));
        stream.accept("[DONE]");

        StreamedCompletion result = stream.result();

        assertThat(result.errorEvent())
                .isEqualTo("the request exceeds the available context size. try increasing the context size or enable"
                        + " context shift");
        assertThat(result.promptTokens()).isNull();
    }

    @Test
    void resultWhenAnErrorEventIsPlainTextKeepsItRedacted() {
        stream.accept(new ServerSentEvents.Event("error", "engine crashed while reading a secret prompt"));
        stream.accept("[DONE]");

        assertThat(stream.result().errorEvent()).isEqualTo("engine crashed while reading <redacted>");
    }

    @Test
    void resultOfLlamaServersStreamReadsItsFinalChunkWithUsageAndTimings() {
        // As llama-server c392e509 writes /v1/completions with stream: true (usage comes with the last choice).
        at(
                10,
                "{\"choices\":[{\"text\":\" writers\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}],"
                        + "\"created\":1796115603,\"model\":\"m\",\"system_fingerprint\":\"b0-unknown\",\"object\":"
                        + "\"text_completion\",\"id\":\"chatcmpl-1\"}");
        at(
                20,
                "{\"choices\":[{\"text\":\"\",\"index\":0,\"logprobs\":null,\"finish_reason\":\"length\"}],"
                        + "\"created\":1796115603,\"model\":\"m\",\"system_fingerprint\":\"b0-unknown\",\"object\":"
                        + "\"text_completion\",\"usage\":{\"completion_tokens\":1,\"prompt_tokens\":6,\"total_tokens\":7},"
                        + "\"id\":\"chatcmpl-1\",\"timings\":{\"prompt_n\":6,\"prompt_ms\":3.7,\"predicted_n\":1}}");
        at(21, "[DONE]");

        StreamedCompletion result = stream.result();

        assertThat(result.text()).isEqualTo(" writers");
        assertThat(result.promptTokens()).isEqualTo(6);
        assertThat(result.completionTokens()).isEqualTo(1);
        assertThat(result.finishReason()).isEqualTo("length");
        assertThat(result.tokenIds()).isEmpty();
        assertThat(result.errorEvent()).isNull();
    }

    @Test
    void acceptWhenTheStreamRunsPastMaxTokensThrowsOverlongStreamAtTheFirstEventBeyondIt() {
        // max_tokens 3: three token events, and eight without a token (a finish, the usage, [DONE], ...) are let by.
        for (int event = 1; event <= 3 + CompletionStream.EVENTS_WITHOUT_A_TOKEN; event++) {
            at(event, token(" x", event, -0.1, null));
        }

        // The twelfth is cut, whatever it carries: tokens, an empty chunk, an error.
        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> at(12, "{\"choices\":[{\"index\":0,\"text\":\"\"}]}"))
                .satisfies(ex -> {
                    assertThat(ex.failure().kind()).isEqualTo(EngineFailure.Kind.OVERLONG_STREAM);
                    assertThat(ex.failure().detail())
                            .isEqualTo("the stream ran past what was asked: 12 events for max_tokens 3 (at most 11"
                                    + " with those that carry no token); cut");
                });
        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> stream.accept(new ServerSentEvents.Event(ServerSentEvents.Event.ERROR, "again")))
                .satisfies(ex -> assertThat(ex.failure().kind()).isEqualTo(EngineFailure.Kind.OVERLONG_STREAM));
    }

    @Test
    void resultWhenEveryTokenCameWithItsOwnFinishUsageAndDoneEventsIsNoOverlongStream() {
        // The most a correct engine sends for max_tokens 3: a role, three tokens, a finish, the usage, [DONE].
        at(1, "{\"choices\":[{\"index\":0,\"text\":\"\"}]}");
        at(2, token(" a", 1, -0.1, null));
        at(3, token(" b", 2, -0.1, null));
        at(4, token(" c", 3, -0.1, null));
        at(5, "{\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}]}");
        at(6, "{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}");
        at(7, "[DONE]");

        assertThat(stream.result().completionTokens()).isEqualTo(3);
    }
}
