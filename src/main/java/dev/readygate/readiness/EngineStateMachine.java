package dev.readygate.readiness;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
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
 * observation the rules could not use. Observations come from the probe loop and from the engine log (a start's
 * header, a start that failed), on different threads: {@link #apply} takes them one at a time and every listener gets
 * the changes in the order they were applied (a listener that folds them, like the restart timeline, would otherwise
 * lose a start when the log's header and the probes' closed port come together). Listeners are cheap and
 * synchronous; a change that a listener causes on the same thread goes out after the one it is handling. Reading never
 * blocks and never triggers a probe.
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
     * restart loop), swapped together.
     */
    private record Current(
            EngineState state,
            @Nullable EngineStart start,
            RestartLoop loop,
            @Nullable Instant heldUntil,
            @Nullable Instant loopCounted) {

        Current(EngineState state, @Nullable EngineStart start, RestartLoop loop, @Nullable Instant heldUntil) {
            this(state, start, loop, heldUntil, null);
        }
    }

    /** No restart loop is ever recognised: for tests of other rules. */
    public static final RestartLoop NO_LOOP = new RestartLoop(
            java.time.Duration.ZERO, Integer.MAX_VALUE, java.time.Duration.ZERO, java.time.Duration.ZERO);

    private final ReadinessRules rules;
    private final Consumer<EngineStateChanged> publisher;
    private final Consumer<ObservationIgnored> ignoredPublisher;
    private final Supplier<String> startIds;
    private final AtomicReference<Current> current;
    /** Applies and publishes one observation at a time. */
    private final Object applying = new Object();
    /** Changes applied but not yet published (guarded by {@code applying}). */
    private final Queue<EngineStateChanged> unpublished = new ArrayDeque<>();
    /** Observations the rules could not use, not yet published (guarded by {@code applying}). */
    private final Queue<ObservationIgnored> unpublishedIgnored = new ArrayDeque<>();
    /** Whether a thread is publishing (guarded by {@code applying}): a listener's own change waits its turn. */
    private boolean publishing;

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
        this.current = new AtomicReference<>(new Current(new EngineState.Starting(start), null, loop, null));
    }

    public EngineState current() {
        return current.get().state();
    }

    /** The engine start in progress, or null while there is none. */
    public @Nullable EngineStart start() {
        return current.get().start();
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
        synchronized (applying) {
            Current previous = current.get();
            EngineStart start = previous.start();
            if ((startId != null && (start == null || !start.id().equals(startId)))
                    || !StartRules.concerns(start, observation)) {
                // Made for, or the log's news of, a start that is no longer current (another began or ended).
                unpublishedIgnored.add(
                        new ObservationIgnored(observation, previous.state(), ReadinessRules.Ignored.STALE));
                if (!publishing) {
                    publish();
                }
                return previous.state();
            }
            ReadinessRules.Step step = rules.step(previous.state(), observation, previous.heldUntil());
            EngineState state = step.state();
            EngineStart nextStart = StartRules.next(start, previous.state(), state, observation, startIds);
            Current next;
            if (nextStart == null || nextStart == start) {
                next = new Current(
                        state,
                        nextStart,
                        previous.loop(),
                        nextStart == null ? null : previous.heldUntil(),
                        nextStart == null ? null : previous.loopCounted());
            } else {
                // A start began: counted toward the restart loop, and held if it began in one.
                Instant began = RestartLoop.beginning(nextStart, observation.at());
                RestartLoop loop = previous.loop().started(began);
                next = new Current(state, nextStart, loop, loop.heldUntil(began), began);
            }
            current.set(next);
            if (step.ignored() != null) {
                unpublishedIgnored.add(new ObservationIgnored(observation, previous.state(), step.ignored()));
            }
            if (changed(previous.state(), next.state()) || previous.start() != next.start()) {
                log(previous.state(), next.state());
                unpublished.add(new EngineStateChanged(
                        previous.state(), next.state(), observation, previous.start(), next.start()));
            }
            if (!publishing) {
                publish();
            }
            return next.state();
        }
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
        synchronized (applying) {
            Current now = current.get();
            EngineStart start = now.start();
            Instant counted = now.loopCounted();
            if (start == null || !start.id().equals(startId) || counted == null) {
                return;
            }
            current.set(new Current(now.state(), start, now.loop().without(counted), null, null));
            logger.info("Engine start {} {}: a model swap, not counted toward the restart loop", startId, why);
        }
    }

    /**
     * The start {@code startId}, which readygate first saw running, began at {@code processStart} by the engine's own
     * word ({@code process_start_time_seconds}, read after the start was counted): it counts toward the restart loop
     * from then, not from readygate's first look, so a restart soon after it is held as a crash loop's second start
     * only when the engine had in truth not stayed up {@code loop-hold}. Nothing changes for a start readygate saw
     * begin, nor when {@code startId} is no longer current.
     */
    public void firstSeenStartBegan(String startId, Instant processStart) {
        synchronized (applying) {
            Current now = current.get();
            EngineStart start = now.start();
            Instant counted = now.loopCounted();
            if (start == null || !start.id().equals(startId) || !start.firstSeen() || counted == null) {
                return;
            }
            RestartLoop loop = now.loop().dated(counted, processStart);
            if (loop != now.loop()) {
                current.set(new Current(now.state(), start, loop, now.heldUntil(), processStart));
            }
        }
    }

    /** Hands the changes to the listeners in the order they were applied (holding {@code applying}). */
    private void publish() {
        publishing = true;
        try {
            for (ObservationIgnored ignored = unpublishedIgnored.poll();
                    ignored != null;
                    ignored = unpublishedIgnored.poll()) {
                ignoredPublisher.accept(ignored);
            }
            for (EngineStateChanged change = unpublished.poll(); change != null; change = unpublished.poll()) {
                publisher.accept(change);
            }
        } finally {
            publishing = false;
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
