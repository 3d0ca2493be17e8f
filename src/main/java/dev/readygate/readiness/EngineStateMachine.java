package dev.readygate.readiness;

import java.time.Instant;
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
 * observation the rules could not use. Reading never blocks and never triggers a probe.
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
            @Nullable Instant heldUntil) {}

    /** No restart loop is ever recognised: for tests of other rules. */
    public static final RestartLoop NO_LOOP = new RestartLoop(
            java.time.Duration.ZERO, Integer.MAX_VALUE, java.time.Duration.ZERO, java.time.Duration.ZERO);

    private final ReadinessRules rules;
    private final Consumer<EngineStateChanged> publisher;
    private final Consumer<ObservationIgnored> ignoredPublisher;
    private final Supplier<String> startIds;
    private final AtomicReference<Current> current;

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
        Current previous;
        Current next;
        ReadinessRules.Ignored ignored;
        do {
            previous = current.get();
            EngineStart start = previous.start();
            if (startId != null && (start == null || !start.id().equals(startId))) {
                ignoredPublisher.accept(
                        new ObservationIgnored(observation, previous.state(), ReadinessRules.Ignored.STALE));
                return previous.state();
            }
            ReadinessRules.Step step = rules.step(previous.state(), observation, previous.heldUntil());
            ignored = step.ignored();
            EngineState state = step.state();
            boolean changed = changed(previous.state(), state) || observation instanceof Observation.Restarted;
            EngineStart nextStart =
                    changed ? StartRules.next(start, previous.state(), state, observation, startIds) : start;
            if (nextStart == null || nextStart == start) {
                next = new Current(state, nextStart, previous.loop(), nextStart == null ? null : previous.heldUntil());
            } else {
                // A start began: counted toward the restart loop, and held if it began in one.
                RestartLoop loop = previous.loop().started(observation.at());
                next = new Current(state, nextStart, loop, loop.heldUntil(observation.at()));
            }
        } while (!current.compareAndSet(previous, next));
        if (ignored != null) {
            ignoredPublisher.accept(new ObservationIgnored(observation, previous.state(), ignored));
        }
        boolean startChanged = previous.start() != next.start();
        if (changed(previous.state(), next.state()) || startChanged) {
            log(previous.state(), next.state());
            publisher.accept(new EngineStateChanged(
                    previous.state(), next.state(), observation, previous.start(), next.start()));
        }
        return next.state();
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
