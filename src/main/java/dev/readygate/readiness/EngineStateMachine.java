package dev.readygate.readiness;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds the current {@link EngineState}, applies observations through {@link ReadinessRules}, and publishes an
 * {@link EngineStateChanged} after each change of kind or reason. Reading the state never blocks and never
 * triggers a probe.
 */
public final class EngineStateMachine {

    private static final Logger logger = LoggerFactory.getLogger(EngineStateMachine.class);

    private final ReadinessRules rules;
    private final Consumer<EngineStateChanged> publisher;
    private final AtomicReference<EngineState> state;

    public EngineStateMachine(ReadinessRules rules, Instant start, Consumer<EngineStateChanged> publisher) {
        this.rules = rules;
        this.publisher = publisher;
        this.state = new AtomicReference<>(new EngineState.Starting(start));
    }

    public EngineState current() {
        return state.get();
    }

    /** Applies one observation; returns the new state. */
    public EngineState apply(Observation observation) {
        EngineState previous;
        EngineState current;
        do {
            previous = state.get();
            current = rules.next(previous, observation);
        } while (!state.compareAndSet(previous, current));
        if (previous.kind() != current.kind() || previous.reason() != current.reason()) {
            log(previous, current);
            publisher.accept(new EngineStateChanged(previous, current, observation));
        }
        return current;
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
