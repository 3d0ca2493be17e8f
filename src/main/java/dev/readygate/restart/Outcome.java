package dev.readygate.restart;

import java.util.Locale;

/**
 * How an engine start ended up: verified ready, never ready (its record says the last reason why), or failed: the
 * engine process died before it ever served (its record quotes vLLM's reason when the log gave one).
 */
public enum Outcome {
    /** Verified ready. */
    READY,
    /** Never verified ready: a latched verification failure, or the engine went away or restarted first. */
    NOT_READY,
    /**
     * Died before serving: vLLM said the start failed ({@code EngineCore failed to start.}), or the start the log began
     * ended before its port ever answered.
     */
    FAILED,
    /**
     * Not known: readygate was killed or restarted during the start, and the start the next readygate found was
     * another process. The start is recorded (an earlier readygate saw it begin) but how it ended was seen by none.
     */
    UNKNOWN;

    /** The snake_case name used in records, {@code /status} and the CSV. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The outcome of a value; one this version does not know was not ready. */
    public static Outcome of(String value) {
        for (Outcome outcome : values()) {
            if (outcome.value().equals(value)) {
                return outcome;
            }
        }
        return NOT_READY;
    }
}
