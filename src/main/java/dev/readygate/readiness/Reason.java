package dev.readygate.readiness;

import java.util.Locale;

/** Why the engine is not (or no longer fully) ready: a closed set of machine-readable reasons. */
public enum Reason {
    /** readygate has not yet heard from the engine. */
    STARTING,
    /** Nothing listens on the engine port: the engine is down or still loading (vLLM binds late). */
    ENGINE_DOWN,
    /**
     * The engine's last start died before serving: vLLM logged {@code EngineCore failed to start.} and its reason (the
     * detail). Held while the port stays closed, until the next start.
     */
    START_FAILED,
    /** The connection was reset. */
    CONNECTION_RESET,
    /** {@code /health} answered 503: vLLM's engine core is dead. */
    ENGINE_DEAD,
    /**
     * The engine answers but says it is still loading its model (llama.cpp's {@code /health} 503 {@code Loading
     * model}): listening, not dead.
     */
    ENGINE_LOADING,
    /** {@code /health} failed otherwise (timeout, unexpected status, reset mid-answer). */
    HEALTH_FAILED,
    /** {@code /v1/models} failed or listed no model. */
    MODEL_NOT_LISTED,
    /** The engine has not passed verification (yet, or enough times). */
    NOT_VERIFIED,
    /** The engine restarted (new process start time) and must be verified again. */
    ENGINE_RESTARTED,
    /** A probe got no answer in time (and the engine showed no progress on other requests). */
    TIMED_OUT,
    /** A probe stream stopped making progress while requests were running. */
    STALLED,
    /** A probe got an unexpected HTTP status. */
    HTTP_STATUS,
    /** A probe answer was not well-formed (JSON, SSE framing). */
    MALFORMED_RESPONSE,
    /** A probe stream ended before {@code [DONE]}. */
    TRUNCATED_STREAM,
    /**
     * A probe stream ran past the {@code max_tokens} it asked (more events than that and the few without a token): an
     * engine that does not stop where a request says would stream to every client without end. Cut at once.
     */
    OVERLONG_STREAM,
    /** A probe stream carried an error event. */
    ERROR_EVENT,
    /** The answer was larger than readygate reads. */
    RESPONSE_TOO_LARGE,
    /** The engine counted a different number of prompt tokens than planned (e.g. it truncated the prompt). */
    PROMPT_TOKENS_MISMATCH,
    /**
     * The engine's prompt token count cannot be proven (no usable {@code /tokenize}, and its counts of a calibration
     * sentence do not add up), and no tolerance accepts an approximate count.
     */
    PROMPT_TOKENS_UNPROVEN,
    /** The engine generated a different number of tokens than asked. */
    COMPLETION_TOKENS_MISMATCH,
    /** The probe finished for another reason than {@code length}. */
    UNEXPECTED_FINISH_REASON,
    /**
     * The engine ended the probe itself ({@code finish_reason} {@code abort}): vLLM's sleep and pause abort the
     * requests in flight by default. No verdict on what the engine generates: never a canary mismatch.
     */
    ENGINE_ABORTED,
    /** The probe was correct but slower than the configured objective. */
    SLOW,
    /** The canary's answer differs from the expected one: wrong weights, or a broken engine. */
    CANARY_MISMATCH,
    /** The probe cannot fit the engine's {@code max_model_len}. */
    PROBE_EXCEEDS_CONTEXT,
    /**
     * The light generation check got no generation: an error event, an HTTP error, a malformed or truncated answer,
     * or not the tokens asked.
     */
    GENERATION_FAILED,
    /** The light generation check got no first token in time, and the engine made no progress on other work. */
    GENERATION_TIMED_OUT,
    /** The light generation check's stream stopped before it finished, and the engine made no progress meanwhile. */
    GENERATION_STALLED,
    /** The engine restarts over and over: a verified start is held out of service until it stays up. */
    RESTART_LOOP,
    /**
     * The engine sleeps (vLLM's sleep mode, by its operator or a model switcher): not broken, not serving until it
     * wakes and is verified again.
     */
    SLEEPING,
    /** Another I/O problem talking to the engine. */
    IO_ERROR,
    /** readygate is shutting down. */
    SHUTTING_DOWN;

    /** The snake_case name used in {@code /readyz}, {@code /status}, logs and metrics. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
