package dev.readygate.readiness;

import java.time.Instant;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Where the engine stands, from readygate's point of view. The phases from engine start to ready are
 * {@link Down}, {@link Listening}, {@link Healthy}, {@link ModelListed}, {@link Verifying} and {@link Ready}; a ready
 * engine that fails goes {@link Degraded} (still serving, below the failure threshold) then {@link NotReady};
 * verification that fails before readiness is {@link VerificationFailed}, and a latched failure after readiness is a
 * latched {@link NotReady}; a start verified during a restart loop is {@link Held} until it has stayed up long enough;
 * an engine put to sleep is {@link Sleeping} until it wakes.
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
            case Held h -> Reason.RESTART_LOOP;
            case Sleeping s -> Reason.SLEEPING;
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
        HELD,
        SLEEPING,
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

    /**
     * Was ready; some checks are failing, fewer times in a row than the failure threshold altogether: still serving.
     * Each failing check's run ends at its own next pass (a {@code /health} that answers again clears a {@code /health}
     * failure, reset or timeout alike), so failures scattered between passes never add up.
     *
     * @param since when the engine stopped being fully ready
     * @param failing the failing checks, each with its consecutive failures and latest failure
     */
    record Degraded(Instant since, String model, Map<Check, Failing> failing) implements EngineState {

        /**
         * One check's run of failures.
         *
         * @param count consecutive failures of this check
         * @param reason the latest one's reason
         * @param detail the latest one's detail
         * @param at when the latest one was seen
         */
        public record Failing(int count, Reason reason, String detail, Instant at) {
            public Failing {
                if (count < 1) {
                    throw new IllegalArgumentException("count must be at least 1");
                }
            }
        }

        public Degraded {
            if (failing.isEmpty()) {
                throw new IllegalArgumentException("a degraded engine has a failing check");
            }
            failing = Map.copyOf(new EnumMap<>(failing));
        }

        /** One check failing once. */
        public Degraded(Instant since, String model, Check check, Reason reason, String detail) {
            this(since, model, Map.of(check, new Failing(1, reason, detail, since)));
        }

        public Kind kind() {
            return Kind.DEGRADED;
        }

        /** Consecutive failures, over all failing checks. */
        public int failures() {
            return failing.values().stream().mapToInt(Failing::count).sum();
        }

        /** The latest failure. */
        public Failing latest() {
            return failing.values().stream()
                    .max(Comparator.comparing(Failing::at))
                    .orElseThrow();
        }

        /** The latest failure's reason. */
        public Reason cause() {
            return latest().reason();
        }

        /** The latest failure's detail. */
        public String detail() {
            return latest().detail();
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

    /**
     * Verified, but the engine is in a restart loop: held out of service until it has stayed up until {@code until},
     * then verified again, so that an engine about to crash again gets no traffic.
     *
     * @param since when it was held
     * @param until when the start has stayed up long enough
     * @param detail the loop, and how long the start must stay up
     */
    record Held(Instant since, String model, Instant until, String detail) implements EngineState {
        public Kind kind() {
            return Kind.HELD;
        }
    }

    /**
     * The engine sleeps (vLLM's sleep mode: {@code POST /sleep}): alive, its weights offloaded to CPU memory (level 1)
     * or discarded (level 2), its KV cache freed; it serves nothing until it wakes, and nothing is probed meanwhile (a
     * completion would wait for the wake, or wake nothing). Not a failure: no check counts, no restart is counted. A
     * wake is verified as a start is, from {@link ModelListed}.
     *
     * @param since when it was seen asleep
     * @param model the model it served, if it was listed before it slept
     * @param level vLLM's sleep level (1: weights offloaded, 2: discarded), 0 when not told
     * @param detail what said so
     */
    record Sleeping(Instant since, @Nullable String model, int level, String detail) implements EngineState {
        public Kind kind() {
            return Kind.SLEEPING;
        }

        /** What a sleep level means, in vLLM's words ({@code sleep_state}): {@code level 1: weights in CPU ...}. */
        public static String levelWords(int level) {
            return switch (level) {
                case 1 -> "level 1: weights in CPU memory, KV cache freed";
                case 2 -> "level 2: weights and KV cache discarded";
                default -> "level not told";
            };
        }
    }

    /** readygate is stopping: never ready again. */
    record ShuttingDown(Instant since) implements EngineState {
        public Kind kind() {
            return Kind.SHUTTING_DOWN;
        }
    }
}
