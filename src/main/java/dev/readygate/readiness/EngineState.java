package dev.readygate.readiness;

import java.time.Instant;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Where the engine stands, from readygate's point of view. The phases from engine start to ready are
 * {@link Down}, {@link Listening}, {@link Healthy}, {@link ModelListed}, {@link Verifying} and {@link Ready}; a ready
 * engine that fails goes {@link Degraded} (still serving, below the failure threshold) then {@link NotReady};
 * verification that fails before readiness is {@link VerificationFailed}, and a latched failure after readiness is a
 * latched {@link NotReady}.
 */
public sealed interface EngineState {

    /** Since when the engine has been in this kind of state. */
    Instant since();

    /** The kind, for metrics, logs and {@code /readyz}. */
    Kind kind();

    /** Why not ready (or, for {@link Degraded}, what is failing); null when ready. */
    default @Nullable Reason reason() {
        return switch (this) {
            case Starting s -> Reason.STARTING;
            case Down d -> d.cause();
            case Listening l -> l.cause();
            case Healthy h -> h.cause();
            case ModelListed m -> m.cause();
            case Verifying v -> v.cause();
            case Ready r -> null;
            case Degraded d -> d.cause();
            case NotReady n -> n.cause();
            case VerificationFailed f -> f.cause();
            case ShuttingDown s -> Reason.SHUTTING_DOWN;
        };
    }

    /** Whether the kubelet should send traffic: {@link Ready} and {@link Degraded} only. */
    default boolean acceptsTraffic() {
        return this instanceof Ready || this instanceof Degraded;
    }

    /** The kinds of state, one per record. */
    enum Kind {
        STARTING,
        DOWN,
        LISTENING,
        HEALTHY,
        MODEL_LISTED,
        VERIFYING,
        READY,
        DEGRADED,
        NOT_READY,
        VERIFICATION_FAILED,
        SHUTTING_DOWN;

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Nothing heard from the engine yet: not ready (the safe default). */
    record Starting(Instant since) implements EngineState {
        public Kind kind() {
            return Kind.STARTING;
        }
    }

    /** The engine is unreachable or dead. */
    record Down(Instant since, Reason cause, String detail) implements EngineState {
        public Kind kind() {
            return Kind.DOWN;
        }
    }

    /** The port accepts connections but {@code /health} does not pass yet. */
    record Listening(Instant since, Reason cause, String detail) implements EngineState {
        public Kind kind() {
            return Kind.LISTENING;
        }
    }

    /** {@code /health} passes; the model is not listed yet. */
    record Healthy(Instant since, Reason cause, String detail) implements EngineState {
        public Kind kind() {
            return Kind.HEALTHY;
        }
    }

    /** The model is listed; no verification has run yet. */
    record ModelListed(Instant since, String model, Reason cause) implements EngineState {
        public Kind kind() {
            return Kind.MODEL_LISTED;
        }
    }

    /** Verification passed {@code successes} times, fewer than the success threshold. */
    record Verifying(Instant since, String model, int successes, Reason cause) implements EngineState {
        public Verifying {
            if (successes < 1) {
                throw new IllegalArgumentException("successes must be at least 1");
            }
        }

        public Kind kind() {
            return Kind.VERIFYING;
        }
    }

    /** Verified: the engine served representative traffic correctly. */
    record Ready(Instant since, String model) implements EngineState {
        public Kind kind() {
            return Kind.READY;
        }
    }

    /** Was ready; {@code failures} consecutive failures, fewer than the failure threshold: still serving. */
    record Degraded(Instant since, String model, int failures, Reason cause, String detail) implements EngineState {
        public Degraded {
            if (failures < 1) {
                throw new IllegalArgumentException("failures must be at least 1");
            }
        }

        public Kind kind() {
            return Kind.DEGRADED;
        }
    }

    /**
     * Was ready in this engine start, then failed: {@code failure-threshold} consecutive failures, after which it needs
     * the success threshold of verifications to recover; or a {@code latched} failure (canary mismatch, probe exceeding
     * the context), which holds until the engine restarts.
     */
    record NotReady(Instant since, String model, int successes, Reason cause, String detail, boolean latched)
            implements EngineState {

        /** Not ready after failures that are not latched. */
        public NotReady(Instant since, String model, int successes, Reason cause, String detail) {
            this(since, model, successes, cause, detail, false);
        }

        public Kind kind() {
            return Kind.NOT_READY;
        }
    }

    /**
     * Verification failed before the engine was ever ready in this start. A {@code latched} failure (canary
     * mismatch, probe exceeding the context) stays until the engine restarts.
     */
    record VerificationFailed(Instant since, String model, Reason cause, String detail, boolean latched, int failures)
            implements EngineState {
        public Kind kind() {
            return Kind.VERIFICATION_FAILED;
        }
    }

    /** readygate is stopping: never ready again. */
    record ShuttingDown(Instant since) implements EngineState {
        public Kind kind() {
            return Kind.SHUTTING_DOWN;
        }
    }
}
