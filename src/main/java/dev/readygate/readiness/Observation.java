package dev.readygate.readiness;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What one check of the engine found, with the time it was found (time enters the state machine only here).
 * Produced by the probe schedule, consumed by {@link ReadinessRules#next}.
 */
public sealed interface Observation {

    Instant at();

    /** The engine cannot be reached (refused or reset): readiness drops at once. */
    record Unreachable(Instant at, Reason reason, String detail) implements Observation {}

    /** {@code /health} answered 503 (engine dead): readiness drops at once. */
    record EngineDead(Instant at, String detail) implements Observation {}

    /**
     * The engine answered, but says it is still loading its model (llama.cpp's 503 {@code Loading model}): the port
     * listens, nothing can be served yet, readiness drops at once.
     */
    record Loading(Instant at, String detail) implements Observation {}

    /**
     * A check failed otherwise (timeout, 5xx, malformed, a generation that failed): counts toward the failure
     * threshold, until that check passes again.
     *
     * @param check which check failed
     */
    record CheckFailed(Instant at, Check check, Reason reason, String detail) implements Observation {

        /** A failed cheap check: {@code /v1/models} for {@link Reason#MODEL_NOT_LISTED}, else {@code /health}. */
        public CheckFailed(Instant at, Reason reason, String detail) {
            this(at, reason == Reason.MODEL_NOT_LISTED ? Check.MODEL : Check.HEALTH, reason, detail);
        }
    }

    /** {@code /health} answered 200. */
    record HealthOk(Instant at) implements Observation {}

    /** {@code /v1/models} lists the served model. */
    record ModelListed(Instant at, String model) implements Observation {}

    /**
     * The engine process changed (new {@code process_start_time_seconds}, counters that went down, another version)
     * without readygate seeing it go down.
     *
     * @param processStart the new process's start time, when its metrics say
     */
    record Restarted(Instant at, String detail, @Nullable Instant processStart) implements Observation {

        public Restarted(Instant at, String detail) {
            this(at, detail, null);
        }
    }

    /** The light generation check passed: the engine generated the tokens asked, well-formed. */
    record Generated(Instant at, String detail) implements Observation {}

    /**
     * A client request readygate proxied (gateway mode) was served whole, and began after the latest request the
     * engine failed ended: the {@link Check#TRAFFIC} check passed.
     */
    record Served(Instant at, String detail) implements Observation {}

    /**
     * The engine log shows a new server process's start-up header: an engine start began, long before its port opens
     * (vLLM binds once initialized). Comes from the log, not from a probe, so it names what it follows.
     *
     * @param loggedAt the header's own timestamp, when the line has one
     * @param follows the start whose log already held a header or served when this header came (a new process after
     *     it), or null when no start was known: the header begins a start unless another one began meanwhile (whose
     *     header this is)
     * @param inProgress the header was already in the log when readygate began reading it: the start was in progress
     *     before readygate, so it is the first start readygate sees
     */
    record ProcessStarted(
            Instant at,
            @Nullable Instant loggedAt,
            @Nullable String follows,
            boolean inProgress,
            String detail) implements Observation {}

    /**
     * The engine log says the start {@code startId} died before serving ({@code Engine core initialization failed}
     * after {@code EngineCore failed to start.}). {@code detail} is vLLM's reason, the traceback's root exception.
     */
    record StartFailed(Instant at, String startId, String detail) implements Observation {}

    /** The heavy probes (representative and canary) passed. */
    record Verified(Instant at, String detail) implements Observation {}

    /**
     * The heavy probes failed. {@code latched} failures (canary mismatch, probe exceeds context) keep the engine
     * not ready until it restarts.
     */
    record VerificationFailed(Instant at, Reason reason, String detail, boolean latched) implements Observation {}

    /**
     * The operator accepted the model the engine serves ({@code readygate accept-model}): a latched
     * {@code canary_mismatch} is released, so the heavy probes run again and the canary learns the accepted answer.
     */
    record ModelAccepted(Instant at, String detail) implements Observation {}

    /** A heavy probe could not finish because the engine is busy and making progress: neither pass nor failure. */
    record Busy(Instant at, String detail) implements Observation {}

    /** readygate is shutting down: readiness drops before anything else stops. */
    record ShutdownRequested(Instant at) implements Observation {}

    /**
     * The engine says it sleeps ({@code vllm:engine_sleep_state}, {@code /is_sleeping}).
     *
     * @param level vLLM's sleep level (1: weights offloaded to CPU memory, 2: discarded), 0 when not told
     * @param detail what said so
     */
    record Asleep(Instant at, int level, String detail) implements Observation {}

    /** The engine that slept says it is awake: every part of it (a partial wake still sleeps). */
    record Awake(Instant at, String detail) implements Observation {}
}
