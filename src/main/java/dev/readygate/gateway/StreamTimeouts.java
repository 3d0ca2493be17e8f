package dev.readygate.gateway;

import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The engine answer's two timeouts, on the injected timer: the first element (the first body buffer) within
 * {@code firstByte} of the subscription, each next one within {@code betweenEvents} of the one before. Each fails
 * the answer with its own {@link TimedOut}, so the proxy tells a 504 (nothing sent yet) from a cut stream.
 */
record StreamTimeouts(Duration firstByte, Duration betweenEvents, Scheduler timer) {

    /** Which limit ran out. */
    enum Limit {
        FIRST_BYTE,
        BETWEEN_EVENTS
    }

    /** The answer failed a limit; no stack trace: it is an outcome, not a bug. */
    static final class TimedOut extends RuntimeException {
        private final Limit limit;

        TimedOut(Limit limit, Duration after) {
            super(
                    "no " + (limit == Limit.FIRST_BYTE ? "first byte" : "next event") + " from the engine within "
                            + after,
                    null,
                    false,
                    false);
            this.limit = limit;
        }

        Limit limit() {
            return limit;
        }
    }

    <T> Flux<T> apply(Flux<T> answer) {
        Mono<Void> first =
                Mono.delay(firstByte, timer).then(Mono.error(() -> new TimedOut(Limit.FIRST_BYTE, firstByte)));
        Mono<Void> next = Mono.delay(betweenEvents, timer)
                .then(Mono.error(() -> new TimedOut(Limit.BETWEEN_EVENTS, betweenEvents)));
        return answer.timeout(first, element -> next);
    }
}
