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
 * Holds the current {@link EngineState} and the {@link EngineStart} it belongs to, applies observations through
 * {@link ReadinessRules} and {@link StartRules}, and publishes an {@link EngineStateChanged} after each change of kind,
 * reason or start. Observations come from the probe loop and from the engine log (a start's header, a start that
 * failed), on different threads: {@link #apply} takes them one at a time and every listener gets the changes in the
 * order they were applied (a listener that folds them, like the restart timeline, would otherwise lose a start when
 * the log's header and the probes' closed port come together). Listeners are cheap and synchronous; a change that a
 * listener causes on the same thread goes out after the one it is handling. Reading never blocks and never triggers a
 * probe.
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
    /** Applies and publishes one observation at a time. */
    private final Object applying = new Object();
    /** Changes applied but not yet published (guarded by {@code applying}). */
    private final Queue<EngineStateChanged> unpublished = new ArrayDeque<>();
    /** Whether a thread is publishing (guarded by {@code applying}): a listener's own change waits its turn. */
    private boolean publishing;

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
        synchronized (applying) {
            Current previous = current.get();
            if (!StartRules.concerns(previous.start(), observation)) {
                // The log's news of a start that is no longer current (another began or ended meanwhile).
                logger.debug("Ignored, about another engine start than the current one: {}", observation);
                return previous.state();
            }
            EngineState state = rules.next(previous.state(), observation);
            EngineStart start = StartRules.next(previous.start(), previous.state(), state, observation, startIds);
            Current next = new Current(state, start);
            current.set(next);
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

    /** Hands the changes to the listeners in the order they were applied (holding {@code applying}). */
    private void publish() {
        publishing = true;
        try {
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
            default -> current.reason() == null ? "" : ": " + current.reason().value();
        };
        logger.info("Engine state changed from {} to {}{}", previous.kind(), current.kind(), why);
    }
}
