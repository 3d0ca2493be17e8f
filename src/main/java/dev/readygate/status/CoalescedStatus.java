package dev.readygate.status;

import dev.readygate.readiness.EngineState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * One rendering of {@code /status} shared by every poll that comes while it is in progress or within {@link
 * #FRESH_FOR} after it, as long as the engine's readiness state is still the one it shows: many pollers cost a few
 * renderings a second instead of one each. A poll never gets a body rendered longer than {@link #FRESH_FOR} before
 * it came, nor one whose state is no longer the current one. Thread-safe.
 */
final class CoalescedStatus {

    /** How long a rendered body is answered again, and how long after it began a rendering in progress is joined. */
    static final Duration FRESH_FOR = Duration.ofSeconds(1);

    /**
     * A rendered {@code /status} body.
     *
     * @param json the JSON document
     * @param at when it was rendered (its {@code now})
     * @param state the engine's readiness state it shows
     */
    record Body(byte[] json, Instant at, EngineState state) {

        /** How long before {@code now} it was rendered, never negative. */
        Duration age(Instant now) {
            Duration age = Duration.between(at, now);
            return age.isNegative() ? Duration.ZERO : age;
        }
    }

    /** A rendering in progress: when it began, with which state current, and its body to come. */
    record Rendering(Instant began, EngineState state, Mono<Body> body) {}

    /** What a poll is answered with. */
    enum Use {
        /** The body rendered last: younger than {@link #FRESH_FOR}, and its state is the current one. */
        LAST,
        /** The rendering in progress: begun less than {@link #FRESH_FOR} ago, with the state current now. */
        IN_PROGRESS,
        /** A rendering of its own. */
        NEW
    }

    private final Supplier<EngineState> state;
    private final Supplier<Mono<Body>> render;
    private final Clock clock;
    private final AtomicReference<@Nullable Body> last = new AtomicReference<>();
    private final AtomicReference<@Nullable Rendering> inProgress = new AtomicReference<>();

    /**
     * @param state the engine's readiness state now
     * @param render renders a body (reading the state itself, as it shows it), each time it is subscribed to
     * @param clock the time a body's age is measured in
     */
    CoalescedStatus(Supplier<EngineState> state, Supplier<Mono<Body>> render, Clock clock) {
        this.state = state;
        this.render = render;
        this.clock = clock;
    }

    /** A body for a poll now: the last one, the one in progress, or a new one (see {@link Use}). */
    Mono<Body> body() {
        return Mono.defer(() -> {
            while (true) {
                Instant now = clock.instant();
                EngineState current = state.get();
                Body done = last.get();
                Rendering running = inProgress.get();
                switch (use(now, current, done, running)) {
                    case LAST -> {
                        return Mono.just(done);
                    }
                    case IN_PROGRESS -> {
                        return running.body();
                    }
                    case NEW -> {
                        Rendering started = new Rendering(now, current, rendering());
                        if (inProgress.compareAndSet(running, started)) {
                            return started.body();
                        }
                        // Another poll began one meanwhile: decide again, most likely to join it.
                    }
                }
            }
        });
    }

    /**
     * The decision: the last body while it is fresh and shows the current state, else the rendering in progress while
     * it is young and began with the current state, else a new one. A body is fresh while younger than {@link
     * #FRESH_FOR}; a rendering finished long ago is no longer in progress.
     */
    static Use use(Instant now, EngineState current, @Nullable Body last, @Nullable Rendering inProgress) {
        if (last != null && young(last.at(), now) && last.state().equals(current)) {
            return Use.LAST;
        }
        if (inProgress != null
                && young(inProgress.began(), now)
                && inProgress.state().equals(current)) {
            return Use.IN_PROGRESS;
        }
        return Use.NEW;
    }

    private static boolean young(Instant at, Instant now) {
        return Duration.between(at, now).compareTo(FRESH_FOR) < 0;
    }

    /**
     * One rendering, run once whoever joins it (a poll that goes away does not cancel it for the others), its body
     * kept as the last one unless a later one was kept first. A failure is not kept: the next poll renders again.
     */
    private Mono<Body> rendering() {
        return render.get()
                .doOnNext(body -> last.accumulateAndGet(
                        body, (kept, rendered) -> kept != null && kept.at().isAfter(rendered.at()) ? kept : rendered))
                .cache(body -> Duration.ofMillis(Long.MAX_VALUE), error -> Duration.ZERO, () -> Duration.ZERO);
    }
}
