package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class StreamTimeoutsTests {

    private static StreamTimeouts timeouts() {
        return new StreamTimeouts(Duration.ofSeconds(10), Duration.ofSeconds(2), VirtualTimeScheduler.get());
    }

    @Test
    void applyWhenNothingComesWithinTheFirstByteTimeoutFailsWithFirstByte() {
        StepVerifier.withVirtualTime(() -> timeouts().apply(Flux.never()))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(9_999))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(error -> assertThat(((StreamTimeouts.TimedOut) error).limit())
                        .isEqualTo(StreamTimeouts.Limit.FIRST_BYTE))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void applyWhenTheFirstEventIsSlowButInTimeLetsItThrough() {
        // The first event after 9 s (under the first-byte limit, over the between-events one), then 1.5 s apart.
        StepVerifier.withVirtualTime(() -> timeouts()
                        .apply(Flux.concat(
                                Flux.just("one").delaySubscription(Duration.ofSeconds(9)),
                                Flux.just("two").delaySubscription(Duration.ofMillis(1500)))))
                .thenAwait(Duration.ofSeconds(9))
                .expectNext("one")
                .thenAwait(Duration.ofMillis(1500))
                .expectNext("two")
                .verifyComplete();
    }

    @Test
    void applyWhenTheEngineStallsAfterAnEventFailsWithBetweenEvents() {
        StepVerifier.withVirtualTime(() -> timeouts().apply(Flux.concat(Flux.just("one"), Flux.never())))
                .expectNext("one")
                .expectNoEvent(Duration.ofMillis(1999))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(error -> assertThat(((StreamTimeouts.TimedOut) error).limit())
                        .isEqualTo(StreamTimeouts.Limit.BETWEEN_EVENTS))
                .verify(Duration.ofSeconds(5));
    }
}
