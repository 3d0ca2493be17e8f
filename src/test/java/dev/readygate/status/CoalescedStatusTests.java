package dev.readygate.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.Reason;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Polls of {@code /status} share one rendering while it is in progress and for a second after it, never past that
 * second and never once the engine's state is another one. Renderings take {@value #RENDER_MS} ms of virtual time;
 * each body says which rendering it came from and the state it showed.
 */
class CoalescedStatusTests {

    static final long RENDER_MS = 200;
    static final EngineState DOWN = new EngineState.Down(Instant.EPOCH, Reason.ENGINE_DOWN, "refused");
    static final EngineState READY = new EngineState.Ready(Instant.EPOCH, "model");

    final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    final AtomicReference<EngineState> state = new AtomicReference<>(DOWN);
    final AtomicInteger renderings = new AtomicInteger();
    final AtomicInteger failuresLeft = new AtomicInteger();
    final Clock clock = new VirtualClock(time);
    final CoalescedStatus status = new CoalescedStatus(state::get, this::render, clock);

    /** A rendering: reads the state and the time as it begins, answers {@value #RENDER_MS} ms later. */
    Mono<CoalescedStatus.Body> render() {
        return Mono.defer(() -> {
            int number = renderings.incrementAndGet();
            EngineState shown = state.get();
            Instant at = clock.instant();
            boolean fails = failuresLeft.getAndUpdate(left -> Math.max(0, left - 1)) > 0;
            return Mono.delay(Duration.ofMillis(RENDER_MS), time).map(tick -> {
                if (fails) {
                    throw new IllegalStateException("rendering " + number + " failed");
                }
                String json = "rendering " + number + " shows " + shown.kind().value();
                return new CoalescedStatus.Body(json.getBytes(StandardCharsets.UTF_8), at, shown);
            });
        });
    }

    /** A poll at {@code at} (virtual time from the start), answered with its body's text. */
    Mono<String> pollAt(long atMillis) {
        return Mono.delay(Duration.ofMillis(atMillis), time)
                .then(status.body())
                .map(body -> new String(body.json(), StandardCharsets.UTF_8));
    }

    @Test
    void pollsWhileARenderingIsInProgressShareIt() {
        StepVerifier.withVirtualTime(
                        () -> Flux.merge(pollAt(0), pollAt(50), pollAt(120), pollAt(199)), () -> time, Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(1))
                .expectNext(
                        "rendering 1 shows down",
                        "rendering 1 shows down",
                        "rendering 1 shows down",
                        "rendering 1 shows down")
                .verifyComplete();
        assertThat(renderings).hasValue(1);
    }

    @Test
    void aBodyIsAnsweredAgainUntilItIsOneSecondOldAndNeverAfter() {
        // Polls one after the other: at 0 (rendered then, its now; done at 200), at 500 and 999 the same body; at
        // 1000 ms it is one second old, and a new rendering begins.
        StepVerifier.withVirtualTime(
                        () -> Flux.concat(pollAt(0), pollAt(300), pollAt(499), pollAt(1)), () -> time, Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(5))
                .expectNext("rendering 1 shows down", "rendering 1 shows down", "rendering 1 shows down")
                .expectNext("rendering 2 shows down")
                .verifyComplete();
        assertThat(renderings).hasValue(2);
    }

    @Test
    void aBodyIsNotAnsweredOnceTheEngineStateChanged() {
        StepVerifier.withVirtualTime(
                        () -> Flux.concat(
                                pollAt(0),
                                Mono.fromRunnable(() -> state.set(READY)).then(pollAt(100))),
                        () -> time,
                        Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(1))
                .expectNext("rendering 1 shows down", "rendering 2 shows ready")
                .verifyComplete();
    }

    @Test
    void aRenderingInProgressIsNotJoinedOnceTheEngineStateChanged() {
        // The first rendering began with the engine down; the second poll comes after it turned ready, before the
        // first is done: it gets a rendering of its own, which shows ready.
        StepVerifier.withVirtualTime(
                        () -> Flux.merge(
                                pollAt(0),
                                Mono.delay(Duration.ofMillis(50), time)
                                        .doOnNext(tick -> state.set(READY))
                                        .then(pollAt(50))),
                        () -> time,
                        Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(1))
                .expectNext("rendering 1 shows down", "rendering 2 shows ready")
                .verifyComplete();
    }

    @Test
    void aFailedRenderingIsNotAnsweredAgain() {
        failuresLeft.set(1);
        StepVerifier.withVirtualTime(
                        () -> Flux.concat(
                                pollAt(0).onErrorResume(failed -> Mono.just("failed: " + failed.getMessage())),
                                pollAt(10)),
                        () -> time,
                        Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(1))
                .expectNext("failed: rendering 1 failed", "rendering 2 shows down")
                .verifyComplete();
    }

    @Test
    void aPollThatGoesAwayLeavesTheRenderingToTheOthers() {
        // The first poll gives up after 50 ms; the second comes at 100 ms, while the rendering the first began is
        // still in progress.
        StepVerifier.withVirtualTime(
                        () -> Flux.merge(pollAt(0).take(Duration.ofMillis(50), time), pollAt(100)),
                        () -> time,
                        Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(1))
                .expectNext("rendering 1 shows down")
                .verifyComplete();
        assertThat(renderings).hasValue(1);
    }

    @Test
    void ageIsHowLongBeforeNowTheBodyWasRendered() {
        CoalescedStatus.Body body = new CoalescedStatus.Body(new byte[0], Instant.EPOCH.plusMillis(500), DOWN);
        assertThat(body.age(Instant.EPOCH.plusMillis(1700))).isEqualTo(Duration.ofMillis(1200));
        // A clock that stepped back gives no negative age.
        assertThat(body.age(Instant.EPOCH)).isZero();
    }

    /** A clock that reads the virtual time. */
    static final class VirtualClock extends Clock {
        private final VirtualTimeScheduler time;

        VirtualClock(VirtualTimeScheduler time) {
            this.time = time;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(time.now(TimeUnit.MILLISECONDS));
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
