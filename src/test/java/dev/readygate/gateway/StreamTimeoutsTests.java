package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
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

    @Test
    void applyWhenEventsComeSteadilySetsATimerPerLimitNotOnePerEvent() {
        AtomicInteger timers = new AtomicInteger();
        // 50 events 100 ms apart over 5 s: a timer set (and cancelled) for each would take the shared timer's lock 51
        // times; one per between-events limit (2 s) is 3 or 4.
        StepVerifier.withVirtualTime(() -> new StreamTimeouts(
                                Duration.ofSeconds(10),
                                Duration.ofSeconds(2),
                                counting(VirtualTimeScheduler.get(), timers))
                        .apply(Flux.interval(Duration.ofMillis(100)).take(50)))
                .thenAwait(Duration.ofSeconds(5))
                .expectNextCount(50)
                .verifyComplete();
        assertThat(timers).hasValueLessThanOrEqualTo(4);
    }

    @Test
    void applyWhenTheStreamStallsAfterSteadyEventsFailsWithBetweenEventsAtTheLimitAfterTheLastOne() {
        StepVerifier.withVirtualTime(() -> timeouts()
                        .apply(Flux.concat(Flux.interval(Duration.ofMillis(700)).take(20), Flux.never())))
                .thenAwait(Duration.ofSeconds(14))
                .expectNextCount(20)
                .expectNoEvent(Duration.ofMillis(1999))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(error -> assertThat(((StreamTimeouts.TimedOut) error).limit())
                        .isEqualTo(StreamTimeouts.Limit.BETWEEN_EVENTS))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void applyWhenTheClientTakesNothingItsSilenceIsNotTheEngines() {
        // The client takes one event, then asks for nothing for 5 s (it stopped reading: its socket is full): the
        // engine's answer is not read meanwhile, so it cannot be late. Asked again, it has its 2 s from then.
        StepVerifier.withVirtualTime(() -> timeouts().apply(Flux.concat(Flux.just("one"), Flux.never())), 1)
                .expectNext("one")
                .expectNoEvent(Duration.ofSeconds(5))
                .thenRequest(1)
                .expectNoEvent(Duration.ofMillis(1999))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(error -> assertThat(((StreamTimeouts.TimedOut) error).limit())
                        .isEqualTo(StreamTimeouts.Limit.BETWEEN_EVENTS))
                .verify(Duration.ofSeconds(5));
    }

    /** {@code timer}, counting the delayed tasks set on it. */
    private static Scheduler counting(Scheduler timer, AtomicInteger timers) {
        return new Scheduler() {
            @Override
            public Disposable schedule(Runnable task) {
                return timer.schedule(task);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                timers.incrementAndGet();
                return timer.schedule(task, delay, unit);
            }

            @Override
            public long now(TimeUnit unit) {
                return timer.now(unit);
            }

            @Override
            public Worker createWorker() {
                return timer.createWorker();
            }
        };
    }
}
