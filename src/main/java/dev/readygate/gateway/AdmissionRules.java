package dev.readygate.gateway;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.Reason;
import dev.readygate.restart.RestartPath;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Whether a new request is forwarded to the engine, held for later, or refused: never sent where it cannot succeed. A
 * pure function of the engine's state (readygate shutting down is the pod draining), the streams in flight and the queue, as
 * {@code ReadinessRules} is of the engine's observations.
 *
 * <p>Rules, first match wins:
 *
 * <ol>
 *   <li>Draining (readygate shutting down): 503 {@code engine_draining}, {@code Retry-After} 1 s and
 *       {@code Connection: close}, so that the client's next request opens a connection the Service sends to
 *       another pod.
 *   <li>A stop of the engine announced by the operator ({@code POST /gateway/drain}): with {@code hold} on and room
 *       in the queue, held for the next start (forwarded once it is verified); otherwise 503 {@code engine_not_ready}.
 *   <li>An engine that accepts traffic (ready, or degraded below the failure threshold, as the kubelet sees it) with
 *       a stream free: forward. With every stream taken, held for a free one while the queue has room (bounded by
 *       {@code holdFor}); with the queue full, 429 {@code engine_saturated}, {@code Retry-After} 1 s: the engine is
 *       ready, the load is the clients', so this is the rate answer, not the availability one (503), and readiness
 *       stays up.
 *   <li>A start under way, with {@code hold} on, expected to be verified within {@code holdFor}
 *       ({@link #expectedWithin}: a short path, a preload hit or a snapshot restore, or a path whose recorded latencies
 *       say so), and room in the queue: held until the start is verified, or no longer expected within the request's
 *       deadline, or the deadline passes.
 *   <li>Otherwise 503 {@code engine_not_ready}, with a {@code Retry-After} that says when to come back: the start's
 *       expected remainder ({@link RetryAfter}) while one is under way, the end of a restart-loop hold for a held
 *       start, {@link RetryAfter#NO_HISTORY} for a served engine that failed its checks (it recovers in a few probe
 *       periods or not at all) and {@link RetryAfter#MAX_SECONDS} for one that will not serve without a restart (a
 *       start that failed, a latched failure).
 * </ol>
 */
public final class AdmissionRules {

    private AdmissionRules() {}

    /**
     * What the decision is made of.
     *
     * @param state the engine's readiness state
     * @param stopAnnounced whether the operator announced a stop of the engine's current start (it still serves; its
     *     requests in flight run to their end, new ones wait for the next start or are refused)
     * @param inFlight streams (requests) forwarded and not ended
     * @param maxInFlight the most the engine is given at once
     * @param queued requests held now
     * @param maxQueued the most held at once
     * @param hold whether requests may be held through a short start ({@code hold} on)
     * @param holdFor the longest a request is held
     * @param path the current start's provisional restart path
     * @param retryAfter the current start's expected remainder ({@link RetryAfter#of})
     * @param now the time of the decision
     */
    public record Situation(
            EngineState state,
            boolean stopAnnounced,
            int inFlight,
            int maxInFlight,
            int queued,
            int maxQueued,
            boolean hold,
            Duration holdFor,
            RestartPath path,
            RetryAfter retryAfter,
            Instant now) {}

    /** What to do with the request. */
    public sealed interface Decision {

        /** Send it to the engine now. */
        record Forward() implements Decision {}

        /**
         * Hold it, and send it when the engine can take it, or refuse it (503) at {@code until}.
         *
         * @param why what it waits for
         */
        record Hold(Why why, Instant until) implements Decision {}

        /**
         * Answer it without the engine.
         *
         * @param error the status, type and code
         * @param message the message of the body
         * @param retryAfterSeconds the {@code Retry-After} header
         * @param closeConnection whether to answer with {@code Connection: close}
         */
        record Reject(OpenAiError error, String message, long retryAfterSeconds, boolean closeConnection)
                implements Decision {}
    }

    /** What a held request waits for. */
    public enum Why {
        /** A stream to free up on a ready engine. */
        STREAM,
        /** The current start to be verified. */
        START,
        /** The engine's next verified start, to be sent once more (its connection failed before any answer). */
        RETRY
    }

    /**
     * A request already waiting in the queue.
     *
     * @param why what it waits for
     * @param until when it is answered at the latest
     * @param failedStart for a retry, the start its first attempt failed on (null: none known, or not a retry)
     * @param failedAt for a retry, when its first attempt failed
     */
    public record Waiting(
            Why why,
            Instant until,
            @Nullable String failedStart,
            @Nullable Instant failedAt) {

        /** A request held by {@link #decide}. */
        public static Waiting held(Decision.Hold hold) {
            return new Waiting(hold.why(), hold.until(), null, null);
        }

        /** A request whose first attempt failed on {@code failedStart} at {@code failedAt}, to be sent once more. */
        public static Waiting retry(@Nullable String failedStart, Instant failedAt, Duration maxWait) {
            return new Waiting(Why.RETRY, failedAt.plus(maxWait), failedStart, failedAt);
        }
    }

    /** The decision for one new request. */
    public static Decision decide(Situation s) {
        if (s.state() instanceof EngineState.ShuttingDown) {
            return new Decision.Reject(
                    OpenAiError.ENGINE_DRAINING,
                    "This server is shutting down; retry after 1 s (another server takes it).",
                    1,
                    true);
        }
        if (s.stopAnnounced()) {
            return s.hold() && s.queued() < s.maxQueued()
                    ? new Decision.Hold(Why.START, s.now().plus(s.holdFor()))
                    : stopping();
        }
        if (s.state().acceptsTraffic()) {
            if (s.inFlight() < s.maxInFlight()) {
                return new Decision.Forward();
            }
            if (s.queued() < s.maxQueued()) {
                return new Decision.Hold(Why.STREAM, s.now().plus(s.holdFor()));
            }
            return new Decision.Reject(
                    OpenAiError.ENGINE_SATURATED,
                    "The engine is serving all the requests it takes at once (" + s.maxInFlight()
                            + ") and the queue is full; retry after 1 s.",
                    1,
                    false);
        }
        boolean underWay = startUnderWay(s.state());
        if (underWay && s.hold() && expectedWithin(s, s.holdFor(), false) && s.queued() < s.maxQueued()) {
            return new Decision.Hold(Why.START, s.now().plus(s.holdFor()));
        }
        return notReady(s, underWay);
    }

    private static Decision notReady(Situation s, boolean underWay) {
        long seconds = underWay ? s.retryAfter().seconds() : notUnderWay(s.state(), s.now());
        return new Decision.Reject(
                OpenAiError.ENGINE_NOT_READY,
                "The engine is not ready (" + reason(s.state())
                        + (underWay ? ", " + s.path().value() + " start" : "") + "); retry after " + seconds + " s.",
                seconds,
                false);
    }

    /**
     * The decision for a request already waiting (it has its place in the queue): forwarded once the engine can take it
     * (a retry only once the engine was verified after its first attempt failed: a new start, or the same start
     * verified again), kept while what it waits for may still come before its deadline, answered otherwise. At its
     * deadline a request waiting on a serving engine is answered 429 (every stream taken), a retry 502 (the engine it
     * failed on serves as if nothing happened: the failure is the client's answer), others as {@link #decide} refuses.
     *
     * @param start the engine's current start ({@code null}: none known)
     */
    public static Decision reconsider(Situation s, Waiting waiting, @Nullable String start) {
        if (s.state() instanceof EngineState.ShuttingDown) {
            return decide(s);
        }
        boolean serves = s.state().acceptsTraffic() && !s.stopAnnounced();
        boolean verifiedSince = waiting.why() != Why.RETRY
                || waiting.failedAt() == null
                || !Objects.equals(start, waiting.failedStart())
                || s.state().since().isAfter(waiting.failedAt());
        if (serves && verifiedSince && s.inFlight() < s.maxInFlight()) {
            return new Decision.Forward();
        }
        boolean expired = !s.now().isBefore(waiting.until());
        boolean underWay = startUnderWay(s.state());
        if (!expired) {
            if (serves) {
                return new Decision.Hold(verifiedSince ? Why.STREAM : Why.RETRY, waiting.until());
            }
            if (s.stopAnnounced() && (s.hold() || waiting.why() == Why.RETRY)) {
                return new Decision.Hold(waiting.why() == Why.RETRY ? Why.RETRY : Why.START, waiting.until());
            }
            Duration left = Duration.between(s.now(), waiting.until());
            if (waiting.why() == Why.RETRY && mayServeAgain(s.state(), waiting.until())) {
                return new Decision.Hold(Why.RETRY, waiting.until());
            }
            // A retry is decided above (a start under way is one the engine may serve again from).
            if (underWay && s.hold() && expectedWithin(s, left, true)) {
                return new Decision.Hold(Why.START, waiting.until());
            }
        } else if (serves && verifiedSince) {
            return new Decision.Reject(
                    OpenAiError.ENGINE_SATURATED,
                    "No stream of the engine came free within readygate.gateway.max-wait; retry after 1 s.",
                    1,
                    false);
        } else if (serves) {
            return new Decision.Reject(
                    OpenAiError.ENGINE_UNREACHABLE,
                    "The engine could not be reached, and was not verified again within readygate.gateway.max-wait; retry after 1 s.",
                    1,
                    false);
        }
        return s.stopAnnounced() ? stopping() : notReady(s, underWay);
    }

    /** The refusal while a stop of the engine is announced: the next start's length is not known yet. */
    private static Decision stopping() {
        long seconds = RetryAfter.seconds(RetryAfter.NO_HISTORY);
        return new Decision.Reject(
                OpenAiError.ENGINE_NOT_READY,
                "The engine is about to restart (a stop was announced); retry after " + seconds + " s.",
                seconds,
                false);
    }

    /** The paths a start is short on: the weights are cached, the whole engine restored, or the engine woke. */
    static boolean shortPath(RestartPath path) {
        return path == RestartPath.PRELOAD_HIT || path == RestartPath.SNAPSHOT_RESTORE || path == RestartPath.WAKE;
    }

    /**
     * Whether the start under way is expected to be verified within {@code within}: by its path's recorded latencies
     * ({@link RetryAfter}: a cold start of a small model is short too, its history says so). Without a recorded latency
     * a new request is held only on a short path (a preload hit, a snapshot restore): a cold or unknown start's length
     * is anyone's guess. A request already held keeps waiting to its deadline: a start's path is provisional until the
     * engine's log shows how the weights came (a preload hit reads as cold or unknown before its cache line), so only a
     * recorded latency beyond the deadline lets it go early.
     *
     * @param held whether the request already waits
     */
    static boolean expectedWithin(Situation s, Duration within, boolean held) {
        if (s.retryAfter().basis() == RetryAfter.Basis.NO_HISTORY) {
            return held || shortPath(s.path());
        }
        return s.retryAfter().remaining().compareTo(within) <= 0;
    }

    /** Whether the engine is on its way to serving by itself: a start that began and has not failed or latched. */
    static boolean startUnderWay(EngineState state) {
        return switch (state) {
            case EngineState.Starting s -> true;
            case EngineState.Down d -> d.cause() != Reason.START_FAILED;
            case EngineState.Listening l -> true;
            case EngineState.Healthy h -> true;
            case EngineState.ModelListed m -> true;
            case EngineState.Verifying v -> true;
            case EngineState.VerificationFailed f -> !f.latched();
            case EngineState.Ready r -> false;
            case EngineState.Degraded d -> false;
            case EngineState.NotReady n -> false;
            case EngineState.Held h -> false;
            // It serves again only when someone wakes it.
            case EngineState.Sleeping s -> false;
            case EngineState.ShuttingDown s -> false;
        };
    }

    /**
     * Whether an engine out of service may serve again by {@code deadline} without anyone's doing: a start under way,
     * an engine out by its checks and not latched (a crash is first seen as a refused or reset connection on the engine
     * that served, before its port is found closed and its next start begins), a restart-loop hold that ends before the
     * deadline. A retry waits through these for the next verified start; not for a failed start, a latched failure or
     * a sleeping engine.
     */
    static boolean mayServeAgain(EngineState state, Instant deadline) {
        return switch (state) {
            case EngineState.NotReady n -> !n.latched();
            case EngineState.Held h -> h.until().isBefore(deadline);
            default -> startUnderWay(state);
        };
    }

    private static long notUnderWay(EngineState state, Instant now) {
        return switch (state) {
            case EngineState.Held h -> RetryAfter.seconds(Duration.between(now, h.until()));
            case EngineState.NotReady n when !n.latched() -> RetryAfter.seconds(RetryAfter.NO_HISTORY);
            default -> RetryAfter.MAX_SECONDS;
        };
    }

    private static String reason(EngineState state) {
        @Nullable Reason reason = state.reason();
        return reason == null ? state.kind().value() : reason.value();
    }
}
