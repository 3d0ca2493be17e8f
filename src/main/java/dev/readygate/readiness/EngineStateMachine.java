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
 * Holds the current {@link EngineState} and the {@link EngineStart} it belongs to, applies observations through
 * {@link ReadinessRules} and {@link StartRules}, and publishes an {@link EngineStateChanged} after each change of kind,
 * reason or start. Reading never blocks and never triggers a probe.
 */
public final class EngineStateMachine {

    private static final Logger logger = LoggerFactory.getLogger(EngineStateMachine.class);

    /** Random start ids; not {@code UUID.randomUUID()}: its SecureRandom may read {@code /dev/urandom} on an event loop. */
    public static final Supplier<String> RANDOM_IDS = () -> new UUID(
                    ThreadLocalRandom.current().nextLong(),
                    ThreadLocalRandom.current().nextLong())
            .toString();

    /** The state and the start it belongs to, swapped together. */
    private record Current(EngineState state, @Nullable EngineStart start) {}

    private final ReadinessRules rules;
    private final Consumer<EngineStateChanged> publisher;
    private final Supplier<String> startIds;
    private final AtomicReference<Current> current;

    public EngineStateMachine(ReadinessRules rules, Instant start, Consumer<EngineStateChanged> publisher) {
        this(rules, start, publisher, RANDOM_IDS);
    }

    public EngineStateMachine(
            ReadinessRules rules, Instant start, Consumer<EngineStateChanged> publisher, Supplier<String> startIds) {
        this.rules = rules;
        this.publisher = publisher;
        this.startIds = startIds;
        this.current = new AtomicReference<>(new Current(new EngineState.Starting(start), null));
    }

    public EngineState current() {
        return current.get().state();
    }

    /** The engine start in progress, or null while there is none. */
    public @Nullable EngineStart start() {
        return current.get().start();
    }

    /** Applies one observation; returns the new state. */
    public EngineState apply(Observation observation) {
        Current previous;
        Current next;
        do {
            previous = current.get();
            EngineState state = rules.next(previous.state(), observation);
            boolean changed = changed(previous.state(), state) || observation instanceof Observation.Restarted;
            EngineStart start = changed
                    ? StartRules.next(previous.start(), previous.state(), state, observation, startIds)
                    : previous.start();
            next = new Current(state, start);
        } while (!current.compareAndSet(previous, next));
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
            default -> current.reason() == null ? "" : ": " + current.reason().value();
        };
        logger.info("Engine state changed from {} to {}{}", previous.kind(), current.kind(), why);
    }
}
