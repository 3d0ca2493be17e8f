package dev.readygate.readiness;

import java.util.Locale;

/** Where the time of an engine start comes from, best first. */
public enum StartSource {
    /** The engine's own {@code process_start_time_seconds}. */
    PROCESS_START_TIME,
    /** The timestamp of the start's first line in the engine log. */
    LOG,
    /** When readygate saw the previous engine go away (the new one started at or after it). */
    OBSERVED_DOWN,
    /** When readygate first saw this start: it started while readygate was not looking. */
    FIRST_OBSERVED,
    /**
     * A wake from sleep: when the engine's {@code vllm:engine_sleep_state} first said it is awake again, read every
     * {@code readygate.probe.not-ready-interval} while it sleeps. The engine's own word, late by at most one interval;
     * vLLM's wake itself ({@code It took … seconds to wake up}) came before it, so a wake's readiness latency is from
     * the engine awake to verified ready: what verification adds to a wake.
     */
    WAKE;

    /**
     * Whether the time comes from the engine itself (its process start time, its log, its sleep state): a readiness
     * latency measured from it is exact. From what readygate saw ({@link #OBSERVED_DOWN}, {@link #FIRST_OBSERVED}) it is
     * only a bound: the engine started at or after the old one was seen going away, or before readygate first saw it.
     */
    public boolean fromEngine() {
        return this == PROCESS_START_TIME || this == LOG || this == WAKE;
    }

    /** The snake_case name used in records, {@code /status} and the CSV: {@code process_start_time}, ... */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The source of a value; one this version does not know reads as {@link #FIRST_OBSERVED} (the weakest claim). */
    public static StartSource of(String value) {
        for (StartSource source : values()) {
            if (source.value().equals(value)) {
                return source;
            }
        }
        return FIRST_OBSERVED;
    }
}
