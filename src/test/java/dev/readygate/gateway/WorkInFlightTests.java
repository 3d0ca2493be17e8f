package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.restart.Stop;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * The gateway's own count of the work a stop lost (issue 27, item 5): per start, the exchanges in flight at its stop,
 * those that finished after it, those cut, and the tokens the cut ones had streamed.
 */
class WorkInFlightTests {

    private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");

    private static ProxiedExchange ended(@Nullable String startId, ExchangeEnding ending, int tokenEvents) {
        return ended(startId, ending, tokenEvents, false);
    }

    private static ProxiedExchange ended(
            @Nullable String startId, ExchangeEnding ending, int tokenEvents, boolean sentAgain) {
        StreamWatch.Seen seen = new StreamWatch.Seen(
                StreamWatch.Body.EVENT_STREAM,
                100,
                tokenEvents,
                tokenEvents,
                null,
                null,
                null,
                null,
                null,
                ending == ExchangeEnding.COMPLETED,
                null);
        return new ProxiedExchange(
                "/v1/completions", startId, 200, 200, false, seen, ending, null, T0, T0.plusSeconds(1), sentAgain);
    }

    @Test
    void aDrainCountsThoseThatFinishedAndThoseCutAtItsDeadlineWithTheirTokens() {
        WorkInFlight work = new WorkInFlight(true);
        for (int i = 0; i < 4; i++) {
            work.began("s1");
        }
        work.began("s2");
        AtomicReference<Stop.Traffic> counted = new AtomicReference<>();

        work.stopped("s1").subscribe(counted::set);
        finish(work, ended("s1", ExchangeEnding.COMPLETED, 40));
        finish(work, ended("s1", ExchangeEnding.CLIENT_CANCELLED, 3));
        assertThat(counted).hasNullValue();
        work.cutting();
        // Cut by the deadline: the client's connection closed, which the proxy sees as a cancel.
        finish(work, ended("s1", ExchangeEnding.CLIENT_CANCELLED, 120));
        finish(work, ended("s1", ExchangeEnding.CLIENT_CANCELLED, 7));

        assertThat(counted).hasValue(new Stop.Traffic(4, 2, 2, 127));
        assertThat(work.cutByStops()).isEqualTo(2);
        assertThat(work.tokensCutByStops()).isEqualTo(127);
        assertThat(work.inFlight()).isEqualTo(1);
    }

    @Test
    void aCrashCountsTheStreamsTheEngineCutBeforeReadygateSawItGoAndThoseStillInFlight() {
        WorkInFlight work = new WorkInFlight(true);
        for (int i = 0; i < 4; i++) {
            work.began("s1");
        }
        // Served whole before the crash: no work lost.
        finish(work, ended("s1", ExchangeEnding.COMPLETED, 50));
        // The engine dies: its connection closes under two streams.
        finish(work, ended("s1", ExchangeEnding.ENGINE_CLOSED, 12));
        finish(work, ended("s1", ExchangeEnding.ENGINE_CLOSED, 5));

        StepVerifier.create(work.stopped("s1"))
                .then(() -> finish(work, ended("s1", ExchangeEnding.STALLED, 2)))
                .expectNext(new Stop.Traffic(3, 0, 3, 19))
                .verifyComplete();
        assertThat(work.inFlight()).isZero();
    }

    @Test
    void anAttemptSentAgainToTheNextStartIsNoWorkLost() {
        WorkInFlight work = new WorkInFlight(true);
        work.began("s1");
        work.began("s1");
        // Refused and closed before any answer, each sent again (retry-before-first-byte): the clients saw nothing.
        finish(work, ended("s1", ExchangeEnding.ENGINE_CLOSED, 0, true));

        StepVerifier.create(work.stopped("s1"))
                .then(() -> finish(work, ended("s1", ExchangeEnding.CONNECT_REFUSED, 0, true)))
                .expectNext(new Stop.Traffic(1, 1, 0, 0))
                .verifyComplete();
    }

    @Test
    void aStopWithNothingInFlightCountsZeroAtOnceAndIsEmptyWithGatewayModeOff() {
        StepVerifier.create(new WorkInFlight(true).stopped("s1"))
                .expectNext(new Stop.Traffic(0, 0, 0, 0))
                .verifyComplete();
        StepVerifier.create(new WorkInFlight(false).stopped("s1")).verifyComplete();
    }

    @Test
    void idleCompletesOnceTheLastExchangeInFlightIsReleasedToItsClientNotWhenTheEnginesAnswerEnded() {
        WorkInFlight work = new WorkInFlight(true);
        StepVerifier.create(work.idle()).verifyComplete();
        work.began("s1");
        work.began(null);

        StepVerifier.create(work.idle())
                .expectSubscription()
                .then(() -> finish(work, ended("s1", ExchangeEnding.COMPLETED, 1)))
                // The engine's answer ended; its last bytes may not have reached the client yet.
                .then(() -> work.ended(ended(null, ExchangeEnding.COMPLETED, 0)))
                .expectNoEvent(java.time.Duration.ZERO)
                .then(work::released)
                .verifyComplete();
    }

    private static void finish(WorkInFlight work, ProxiedExchange exchange) {
        work.ended(exchange);
        work.released();
    }
}
