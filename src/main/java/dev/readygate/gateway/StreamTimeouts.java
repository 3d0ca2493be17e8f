package dev.readygate.gateway;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The engine answer's two timeouts, on the injected timer: the first element (the first body buffer) within
 * {@code firstByte} of the subscription, each next one within {@code betweenEvents} of the one before. Each fails
 * the answer with its own {@link TimedOut}, so the proxy tells a 504 (nothing sent yet) from a cut stream. Only time
 * the client is waiting counts: while it has taken all it asked for (it stopped reading, its socket is full), the
 * engine's answer is not read and its silence is the client's, never a stall of the engine's; once the client asks
 * again, the engine has the whole limit from then.
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

    /**
     * {@code answer} with both limits. One timer at a time per answer, not one per buffer: when it rings it looks at
     * when the last buffer passed and, if the limit has not run out since, is set again for what is left (the shared
     * timer's lock is taken about once per between-events limit, not once per token).
     */
    <T> Flux<T> apply(Flux<T> answer) {
        return Flux.defer(() -> {
            Silence silence = new Silence(timer.now(TimeUnit.NANOSECONDS));
            return answer.doOnNext(element -> silence.heard(timer.now(TimeUnit.NANOSECONDS)))
                    .doOnRequest(more -> silence.asked(more, timer.now(TimeUnit.NANOSECONDS)))
                    .takeUntilOther(alarm(silence));
        });
    }

    /** Fails once the current limit ran out since the last buffer (or the subscription); else waits what is left. */
    private Mono<Void> alarm(Silence silence) {
        return Mono.defer(() -> {
            boolean heard = silence.heard;
            Duration limit = heard ? betweenEvents : firstByte;
            if (!silence.waiting()) {
                // The client took all it asked for: nothing is read from the engine, so nothing is late. Looked at
                // again within the limit.
                return Mono.delay(betweenEvents, timer).then(alarm(silence));
            }
            long left = silence.since + limit.toNanos() - timer.now(TimeUnit.NANOSECONDS);
            if (left <= 0) {
                return Mono.error(new TimedOut(heard ? Limit.BETWEEN_EVENTS : Limit.FIRST_BYTE, limit));
            }
            // Before the first buffer, looks again within the between-events limit at the latest: a first buffer that
            // comes early is followed by that limit, not by what was left of the first-byte one.
            long wait = heard ? left : Math.min(left, betweenEvents.toNanos());
            return Mono.delay(Duration.ofNanos(wait), timer).then(alarm(silence));
        });
    }

    /**
     * When the answer was last heard from or asked for again, and how much the client asked for that has not come:
     * written on its event loop (a request may come from another thread), read when the timer rings.
     */
    private static final class Silence {
        volatile long since;
        volatile boolean heard;
        private final AtomicLong owed = new AtomicLong();

        Silence(long subscribed) {
            this.since = subscribed;
        }

        void heard(long at) {
            since = at;
            heard = true;
            owed.getAndUpdate(left -> left == Long.MAX_VALUE || left == 0 ? left : left - 1);
        }

        /** The client asked for more: after a pause in which it asked for nothing, the engine's time starts now. */
        void asked(long more, long at) {
            long before = owed.getAndUpdate(left -> left > Long.MAX_VALUE - more ? Long.MAX_VALUE : left + more);
            if (before == 0) {
                since = at;
            }
        }

        /** Whether the client waits for something it asked for. */
        boolean waiting() {
            return owed.get() > 0;
        }
    }
}
