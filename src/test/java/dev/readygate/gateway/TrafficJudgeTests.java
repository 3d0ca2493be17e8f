package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import dev.readygate.gateway.StreamWatch.Body;
import dev.readygate.gateway.StreamWatch.Seen;
import dev.readygate.gateway.StreamWatch.Unreadable;
import dev.readygate.gateway.TrafficJudge.Exchange;
import dev.readygate.gateway.TrafficJudge.Kind;
import dev.readygate.readiness.Reason;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link TrafficJudge#judge} as a table: one row per rule, every outcome at least once. */
class TrafficJudgeTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    static final Seen NOTHING = Seen.nothing(Body.OTHER);

    /** A stream of {@code events} events, {@code tokens} with tokens, [DONE] or not. */
    static Seen stream(int events, int tokens, boolean done) {
        return new Seen(Body.EVENT_STREAM, 100L * events, events, tokens, null, null, null, null, null, done, null);
    }

    static Seen streamWithError(String message, @Nullable Integer code) {
        return new Seen(Body.EVENT_STREAM, 300, 3, 1, null, null, null, message, code, true, null);
    }

    static Seen unreadable(Unreadable why) {
        return new Seen(Body.EVENT_STREAM, 300, 2, 1, null, null, null, null, null, false, why);
    }

    static Seen json(@Nullable String error, @Nullable Integer code) {
        return new Seen(Body.JSON, 80, 0, 0, 4, null, null, error, code, false, null);
    }

    static Exchange exchange(@Nullable Integer status, boolean retryAfter, Seen seen, ExchangeEnding ending) {
        return new Exchange(Kind.GENERATION, status, retryAfter, seen, ending, T0, T0.plusSeconds(2));
    }

    static Arguments row(String rule, Exchange exchange, TrafficOutcome expected) {
        return Arguments.of(rule, exchange, expected);
    }

    static Stream<Arguments> rows() {
        return Stream.of(
                // 1. refused
                row(
                        "request too large",
                        exchange(null, false, NOTHING, ExchangeEnding.REQUEST_TOO_LARGE),
                        TrafficOutcome.CLIENT_ERROR),
                row(
                        "request too large after the engine answered",
                        exchange(200, false, stream(1, 0, false), ExchangeEnding.REQUEST_TOO_LARGE),
                        TrafficOutcome.CLIENT_ERROR),
                row("refused", exchange(null, false, NOTHING, ExchangeEnding.CONNECT_REFUSED), TrafficOutcome.REFUSED),
                row(
                        "no connection in time",
                        exchange(null, false, NOTHING, ExchangeEnding.CONNECT_TIMED_OUT),
                        TrafficOutcome.CONNECT_TIMEOUT),
                // 2. no answer yet
                row(
                        "client gone before any answer",
                        exchange(null, false, NOTHING, ExchangeEnding.CLIENT_CANCELLED),
                        TrafficOutcome.CLIENT_CANCELLED),
                row(
                        "no first byte in time",
                        exchange(null, false, NOTHING, ExchangeEnding.FIRST_BYTE_TIMED_OUT),
                        TrafficOutcome.FIRST_BYTE_TIMEOUT),
                row(
                        "engine closed before answering",
                        exchange(null, false, NOTHING, ExchangeEnding.ENGINE_CLOSED),
                        TrafficOutcome.CONNECTION_CLOSED),
                // 3. a status that is not 2xx
                row(
                        "400",
                        exchange(400, false, json("bad", 400), ExchangeEnding.COMPLETED),
                        TrafficOutcome.CLIENT_ERROR),
                row("401", exchange(401, false, NOTHING, ExchangeEnding.COMPLETED), TrafficOutcome.CLIENT_ERROR),
                row(
                        "404",
                        exchange(404, false, json("no model", 404), ExchangeEnding.COMPLETED),
                        TrafficOutcome.CLIENT_ERROR),
                row("413", exchange(413, false, NOTHING, ExchangeEnding.COMPLETED), TrafficOutcome.CLIENT_ERROR),
                row(
                        "400 then the client went away",
                        exchange(400, false, NOTHING, ExchangeEnding.CLIENT_CANCELLED),
                        TrafficOutcome.CLIENT_ERROR),
                row("408", exchange(408, false, NOTHING, ExchangeEnding.COMPLETED), TrafficOutcome.BUSY),
                row("429", exchange(429, false, NOTHING, ExchangeEnding.COMPLETED), TrafficOutcome.BUSY),
                row(
                        "503 with Retry-After",
                        exchange(503, true, NOTHING, ExchangeEnding.COMPLETED),
                        TrafficOutcome.BUSY),
                row(
                        "503 without Retry-After (Loading model)",
                        exchange(503, false, json("Loading model", 503), ExchangeEnding.COMPLETED),
                        TrafficOutcome.ENGINE_STATUS),
                row(
                        "500",
                        exchange(500, false, json("dead", 500), ExchangeEnding.COMPLETED),
                        TrafficOutcome.ENGINE_STATUS),
                row("502", exchange(502, false, NOTHING, ExchangeEnding.COMPLETED), TrafficOutcome.ENGINE_STATUS),
                row(
                        "500 cut by the engine",
                        exchange(500, false, NOTHING, ExchangeEnding.ENGINE_CLOSED),
                        TrafficOutcome.ENGINE_STATUS),
                row("501", exchange(501, false, NOTHING, ExchangeEnding.COMPLETED), TrafficOutcome.CLIENT_ERROR),
                row("307", exchange(307, false, NOTHING, ExchangeEnding.COMPLETED), TrafficOutcome.SUCCESS),
                // 4. an error in a 2xx answer
                row(
                        "error event coded 500, then [DONE]",
                        exchange(
                                200,
                                false,
                                streamWithError("EngineCore encountered an issue", 500),
                                ExchangeEnding.COMPLETED),
                        TrafficOutcome.ERROR_EVENT),
                row(
                        "error event without a code",
                        exchange(200, false, streamWithError("slot crashed", null), ExchangeEnding.COMPLETED),
                        TrafficOutcome.ERROR_EVENT),
                row(
                        "error event, then the client went away",
                        exchange(200, false, streamWithError("dead", 500), ExchangeEnding.CLIENT_CANCELLED),
                        TrafficOutcome.ERROR_EVENT),
                row(
                        "error event coded 429",
                        exchange(200, false, streamWithError("queue full", 429), ExchangeEnding.COMPLETED),
                        TrafficOutcome.ERROR_EVENT),
                row(
                        "error event coded 400",
                        exchange(200, false, streamWithError("bad grammar", 400), ExchangeEnding.COMPLETED),
                        TrafficOutcome.CLIENT_ERROR_EVENT),
                row(
                        "error object in a 200 body",
                        exchange(200, false, json("failed", 500), ExchangeEnding.COMPLETED),
                        TrafficOutcome.ERROR_EVENT),
                // 5. malformed
                row(
                        "event not JSON",
                        exchange(200, false, unreadable(Unreadable.MALFORMED), ExchangeEnding.COMPLETED),
                        TrafficOutcome.MALFORMED),
                // 6. [DONE] passed
                row(
                        "stream with [DONE]",
                        exchange(200, false, stream(5, 3, true), ExchangeEnding.COMPLETED),
                        TrafficOutcome.SUCCESS),
                row(
                        "[DONE], then the client went away",
                        exchange(200, false, stream(5, 3, true), ExchangeEnding.CLIENT_CANCELLED),
                        TrafficOutcome.SUCCESS),
                row(
                        "[DONE], then the engine closed",
                        exchange(200, false, stream(5, 3, true), ExchangeEnding.ENGINE_CLOSED),
                        TrafficOutcome.SUCCESS),
                // 7. the ending
                row(
                        "client gone mid-stream",
                        exchange(200, false, stream(5, 3, false), ExchangeEnding.CLIENT_CANCELLED),
                        TrafficOutcome.CLIENT_CANCELLED),
                row("stall", exchange(200, false, stream(5, 3, false), ExchangeEnding.STALLED), TrafficOutcome.STALLED),
                row(
                        "headers, then no byte in time",
                        exchange(200, false, stream(0, 0, false), ExchangeEnding.FIRST_BYTE_TIMED_OUT),
                        TrafficOutcome.FIRST_BYTE_TIMEOUT),
                row(
                        "engine closed mid-stream",
                        exchange(200, false, stream(5, 3, false), ExchangeEnding.ENGINE_CLOSED),
                        TrafficOutcome.TRUNCATED_STREAM),
                row(
                        "engine closed mid-body",
                        exchange(200, false, json(null, null), ExchangeEnding.ENGINE_CLOSED),
                        TrafficOutcome.TRUNCATED_STREAM),
                row(
                        "stream ended without [DONE]",
                        exchange(200, false, stream(5, 3, false), ExchangeEnding.COMPLETED),
                        TrafficOutcome.TRUNCATED_STREAM),
                row(
                        "stream read no further after a too large event",
                        exchange(200, false, unreadable(Unreadable.TOO_LARGE), ExchangeEnding.COMPLETED),
                        TrafficOutcome.NOT_JUDGED),
                row(
                        "too large event, then the engine closed",
                        exchange(200, false, unreadable(Unreadable.TOO_LARGE), ExchangeEnding.ENGINE_CLOSED),
                        TrafficOutcome.TRUNCATED_STREAM),
                row(
                        "whole JSON body",
                        exchange(200, false, json(null, null), ExchangeEnding.COMPLETED),
                        TrafficOutcome.SUCCESS));
    }

    @ParameterizedTest(name = "{0}: {2}")
    @MethodSource("rows")
    void judgeFollowsTheTable(String rule, Exchange exchange, TrafficOutcome expected) {
        TrafficJudge.Verdict verdict = TrafficJudge.judge(exchange);
        assertThat(verdict.outcome()).as(rule).isEqualTo(expected);
        assertThat(verdict.detail()).isNotBlank();
        assertThat(verdict.startedAt()).isEqualTo(exchange.startedAt());
        assertThat(verdict.endedAt()).isEqualTo(exchange.endedAt());
    }

    @Test
    void tableCoversEveryOutcome() {
        Set<TrafficOutcome> covered = EnumSet.noneOf(TrafficOutcome.class);
        rows().forEach(row -> covered.add((TrafficOutcome) row.get()[2]));
        assertThat(covered).containsExactlyInAnyOrder(TrafficOutcome.values());
    }

    @Test
    void everyEngineFailureHasAReadinessReasonAndNoOtherOutcomeHasOne() {
        for (TrafficOutcome outcome : TrafficOutcome.values()) {
            Reason reason = outcome.reason();
            assertThat(reason != null)
                    .as(outcome.value())
                    .isEqualTo(outcome.group() == TrafficOutcome.Group.ENGINE_FAILURE);
        }
    }

    @Test
    void judgeWhenGenerationStreamPassedTokensProvesGeneration() {
        assertThat(TrafficJudge.judge(exchange(200, false, stream(5, 3, true), ExchangeEnding.COMPLETED))
                        .provesGeneration())
                .isTrue();
        assertThat(TrafficJudge.judge(exchange(200, false, json(null, null), ExchangeEnding.COMPLETED))
                        .provesGeneration())
                .isTrue();
    }

    @Test
    void judgeWhenSuccessCarriedNoTokenOrWasNoGenerationProvesNothing() {
        assertThat(TrafficJudge.judge(exchange(200, false, stream(2, 0, true), ExchangeEnding.COMPLETED))
                        .provesGeneration())
                .isFalse();
        assertThat(TrafficJudge.judge(new Exchange(
                                Kind.OTHER,
                                200,
                                false,
                                json(null, null),
                                ExchangeEnding.COMPLETED,
                                T0,
                                T0.plusSeconds(1)))
                        .provesGeneration())
                .isFalse();
        assertThat(TrafficJudge.judge(exchange(307, false, NOTHING, ExchangeEnding.COMPLETED))
                        .provesGeneration())
                .isFalse();
    }

    @Test
    void judgeWhenErrorEventPassedQuotesOnlyItsSafeMessage() {
        TrafficJudge.Verdict verdict = TrafficJudge.judge(exchange(
                200, false, streamWithError("EngineCore encountered an issue", 500), ExchangeEnding.COMPLETED));
        assertThat(verdict.detail())
                .isEqualTo("error event in a 200 stream after 3 events (code 500): EngineCore encountered an issue");
    }

    @Test
    void exchangeWhenAnswerCompletedWithoutStatusIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> exchange(null, false, NOTHING, ExchangeEnding.COMPLETED));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> exchange(200, false, NOTHING, ExchangeEnding.CONNECT_REFUSED));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> exchange(200, false, NOTHING, ExchangeEnding.CONNECT_TIMED_OUT));
    }
}
