package dev.readygate.readiness;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds the current {@link EngineState}, the {@link EngineStart} it belongs to and the {@link RestartLoop} of recent
 * starts, applies observations through {@link ReadinessRules} and {@link StartRules}, and publishes an
 * {@link EngineStateChanged} after each change of kind, reason or start, and an {@link ObservationIgnored} for each
 * observation the rules could not use.
 *
 * <p>As Resilience4j's {@code CircuitBreakerStateMachine} does, the state, start and loop are one immutable value
 * swapped whole by compare-and-set, and the listeners hear of a swap after it, outside any lock: a listener never runs
 * while the state is held, and reading never blocks. Observations come from the probe loop and from the engine log (a
 * start's header, a start that failed), on different threads, so each swap that has news takes the next number and the
 * news goes out strictly in that order, by one thread at a time: the thread that swapped, unless another is handing
 * out news already, which then hands out this one too (after its own). Every listener thus gets the changes in the
 * order they were applied (a listener that folds them, like the restart timeline, would otherwise lose a start when the
 * log's header and the probes' closed port come together), and a change that a listener causes goes out after the one
 * it is handling. {@link #apply} returns once its change is swapped in, perhaps before the listeners heard of it.
 */
public final class EngineStateMachine {

    private static final Logger logger = LoggerFactory.getLogger(EngineStateMachine.class);

    /** Random start ids; not {@code UUID.randomUUID()}: its SecureRandom may read {@code /dev/urandom} on an event loop. */
    public static final Supplier<String> RANDOM_IDS = () -> new UUID(
                    ThreadLocalRandom.current().nextLong(),
                    ThreadLocalRandom.current().nextLong())
            .toString();

    /**
     * The state, the start it belongs to, the recent starts, and until when the current start is held (it began in a
     * restart loop), swapped together; {@code news} numbers the swaps that had news for the listeners.
     */
    private record Current(
            EngineState state,
            @Nullable EngineStart start,
            RestartLoop loop,
            @Nullable Instant heldUntil,
            @Nullable Instant loopCounted,
            long news) {

        Current withNews() {
            return new Current(state, start, loop, heldUntil, loopCounted, news + 1);
        }
    }

    /** What one swap tells the listeners, in this order: the observation it ignored, the change it made. */
    private record News(
            @Nullable ObservationIgnored ignored, @Nullable EngineStateChanged change) {}

    /** A swap: the next value, and its news for the listeners (null when it has none). */
    private record Swap(Current next, @Nullable News news) {}

    /** No restart loop is ever recognised: for tests of other rules. */
    public static final RestartLoop NO_LOOP = new RestartLoop(
            java.time.Duration.ZERO, Integer.MAX_VALUE, java.time.Duration.ZERO, java.time.Duration.ZERO);

    private final ReadinessRules rules;
    private final Consumer<EngineStateChanged> publisher;
    private final Consumer<ObservationIgnored> ignoredPublisher;
    private final Supplier<String> startIds;
    private final AtomicReference<Current> current;
    /** What is known about each start: opened and closed here, before the listeners hear of the change. */
    private final StartLedger ledger = new StartLedger();
    /** The news swapped in and not handed out yet, by its number. */
    private final Map<Long, News> unpublished = new ConcurrentHashMap<>();
    /**
     * How many times a thread asked for the news to be handed out since the thread handing it out last looked: not 0
     * while one does. The thread that takes it from 0 hands out the news until nobody asked again.
     */
    private final AtomicInteger publishing = new AtomicInteger();
    /**
     * The number of the next news to hand out (only the thread handing out news touches it; {@link #publishing} passes
     * it from one such thread to the next).
     */
    private long nextNews = 1;

    public EngineStateMachine(ReadinessRules rules, Instant start, Consumer<EngineStateChanged> publisher) {
        this(rules, NO_LOOP, start, publisher, ignored -> {}, RANDOM_IDS);
    }

    public EngineStateMachine(
            ReadinessRules rules, Instant start, Consumer<EngineStateChanged> publisher, Supplier<String> startIds) {
        this(rules, NO_LOOP, start, publisher, ignored -> {}, startIds);
    }

    public EngineStateMachine(
            ReadinessRules rules,
            RestartLoop loop,
            Instant start,
            Consumer<EngineStateChanged> publisher,
            Consumer<ObservationIgnored> ignoredPublisher,
            Supplier<String> startIds) {
        this.rules = rules;
        this.publisher = publisher;
        this.ignoredPublisher = ignoredPublisher;
        this.startIds = startIds;
        this.current = new AtomicReference<>(new Current(new EngineState.Starting(start), null, loop, null, null, 0));
    }

    public EngineState current() {
        return current.get().state();
    }

    /** The engine start in progress, or null while there is none. */
    public @Nullable EngineStart start() {
        return current.get().start();
    }

    /** What is known about each engine start, one sheet per start: the sheets open and close with the starts. */
    public StartLedger ledger() {
        return ledger;
    }

    /** The recent starts: whether the engine is in a restart loop. */
    public RestartLoop restartLoop() {
        return current.get().loop();
    }

    /** Until when the current start is held out of service (it began in a restart loop), or null. */
    public @Nullable Instant heldUntil() {
        return current.get().heldUntil();
    }

    /** Applies one observation; returns the new state. */
    public EngineState apply(Observation observation) {
        return apply(observation, null);
    }

    /**
     * Applies an observation made for the engine start {@code startId} (null: whichever is current); one made for a
     * start that is over changes nothing and is counted as ignored ({@link ReadinessRules.Ignored#STALE}).
     */
    public EngineState apply(Observation observation, @Nullable String startId) {
        Current previous;
        Swap swap;
        do {
            previous = current.get();
            // Computed again when another thread swapped first (a start id drawn meanwhile is not used).
            swap = next(previous, observation, startId);
        } while (!current.compareAndSet(previous, swap.next()));
        News news = swap.news();
        if (news != null) {
            unpublished.put(swap.next().news(), news);
        }
        publish();
        return swap.next().state();
    }

    /** The value after an observation, and what it tells the listeners. */
    private Swap next(Current previous, Observation observation, @Nullable String startId) {
        EngineStart start = previous.start();
        if ((startId != null && (start == null || !start.id().equals(startId)))
                || !StartRules.concerns(start, observation)) {
            // Made for, or the log's news of, a start that is no longer current (another began or ended).
            return new Swap(
                    previous.withNews(),
                    new News(
                            new ObservationIgnored(observation, previous.state(), ReadinessRules.Ignored.STALE), null));
        }
        ReadinessRules.Step step = rules.step(previous.state(), observation, previous.heldUntil());
        EngineState state = step.state();
        EngineStart nextStart = StartRules.next(start, previous.state(), state, observation, startIds);
        Current next;
        if (nextStart == null || nextStart == start || nextStart.wake()) {
            // A wake is the same process serving again: not a restart, not counted toward a restart loop.
            boolean goesOn = nextStart != null && !nextStart.wake();
            next = new Current(
                    state,
                    nextStart,
                    previous.loop(),
                    goesOn ? previous.heldUntil() : null,
                    goesOn ? previous.loopCounted() : null,
                    previous.news());
        } else {
            // A start began: counted toward the restart loop, and held if it began in one.
            Instant began = RestartLoop.beginning(nextStart, observation.at());
            RestartLoop loop = previous.loop().started(began);
            next = new Current(state, nextStart, loop, loop.heldUntil(began), began, previous.news());
        }
        ObservationIgnored ignored =
                step.ignored() == null ? null : new ObservationIgnored(observation, previous.state(), step.ignored());
        EngineStateChanged change = changed(previous.state(), next.state()) || previous.start() != next.start()
                ? new EngineStateChanged(previous.state(), next.state(), observation, previous.start(), next.start())
                : null;
        return ignored == null && change == null
                ? new Swap(next, null)
                : new Swap(next.withNews(), new News(ignored, change));
    }

    /**
     * The start {@code startId} is a deliberate model swap, not a repeat of the same start: it serves another model than
     * the start before it (another name, root or identity), or the operator accepted its model. It no longer counts
     * toward the restart loop, and is not held as one of its starts. Nothing changes when {@code startId} is no longer
     * current.
     *
     * @param why what shows it, for the log
     */
    public void modelSwapped(String startId, String why) {
        Current now;
        Current next;
        do {
            now = current.get();
            EngineStart start = now.start();
            Instant counted = now.loopCounted();
            if (start == null || !start.id().equals(startId) || counted == null) {
                return;
            }
            next = new Current(now.state(), start, now.loop().without(counted), null, null, now.news());
        } while (!current.compareAndSet(now, next));
        logger.info("Engine start {} {}: a model swap, not counted toward the restart loop", startId, why);
    }

    /**
     * The start {@code startId}, which readygate first saw running, began at {@code processStart} by the engine's own
     * word ({@code process_start_time_seconds}, read after the start was counted): it counts toward the restart loop
     * from then, not from readygate's first look, so a restart soon after it is held as a crash loop's second start
     * only when the engine had in truth not stayed up {@code loop-hold}. Nothing changes for a start readygate saw
     * begin, nor when {@code startId} is no longer current.
     */
    public void firstSeenStartBegan(String startId, Instant processStart) {
        Current now;
        Current next;
        do {
            now = current.get();
            EngineStart start = now.start();
            Instant counted = now.loopCounted();
            if (start == null || !start.id().equals(startId) || !start.firstSeen() || counted == null) {
                return;
            }
            RestartLoop loop = now.loop().dated(counted, processStart);
            if (loop == now.loop()) {
                return;
            }
            next = new Current(now.state(), start, loop, now.heldUntil(), processStart, now.news());
        } while (!current.compareAndSet(now, next));
    }

    /**
     * Hands the news swapped in to the listeners in the order of the swaps, unless another thread does already: that
     * one looks again before it stops. News whose swap is not handed in yet (its thread swapped first, then this one)
     * waits for it: that thread hands it out, with what followed.
     */
    private void publish() {
        if (publishing.getAndIncrement() != 0) {
            return;
        }
        int asked = 1;
        try {
            do {
                for (News news = unpublished.remove(nextNews); news != null; news = unpublished.remove(nextNews)) {
                    nextNews++;
                    tell(news);
                }
                asked = publishing.addAndGet(-asked);
            } while (asked != 0);
        } catch (RuntimeException | Error failed) {
            // A listener failed (a bug): its caller hears of it, as it would have from a synchronous publisher; the
            // news left goes out with the next apply.
            publishing.set(0);
            throw failed;
        }
    }

    private void tell(News news) {
        if (news.ignored() != null) {
            ignoredPublisher.accept(news.ignored());
        }
        EngineStateChanged change = news.change();
        if (change != null) {
            log(change.previous(), change.current());
            ledger.follow(change);
            publisher.accept(change);
        }
    }

    private static boolean changed(EngineState previous, EngineState current) {
        return previous.kind() != current.kind() || previous.reason() != current.reason();
    }

    private static void log(EngineState previous, EngineState current) {
        String why = switch (current) {
            case EngineState.Degraded d ->
                " after " + d.failures() + " consecutive failure(s) (last: "
                        + d.cause().value() + ": " + d.detail() + ")";
            case EngineState.NotReady n ->
                ": " + n.cause().value() + " (" + n.detail() + ")"
                        + (n.latched() ? ", held until the engine restarts" : "");
            case EngineState.VerificationFailed f ->
                ": " + f.cause().value() + " (" + f.detail() + ")"
                        + (f.latched() ? ", held until the engine restarts" : "");
            case EngineState.Down d -> ": " + d.cause().value() + " (" + d.detail() + ")";
            case EngineState.Listening l -> ": " + l.cause().value() + " (" + l.detail() + ")";
            case EngineState.Held h -> ": " + h.detail();
            default -> current.reason() == null ? "" : ": " + current.reason().value();
        };
        logger.info("Engine state changed from {} to {}{}", previous.kind(), current.kind(), why);
    }
}
