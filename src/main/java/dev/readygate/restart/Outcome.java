package dev.readygate.restart;

import java.util.Locale;

/** How an engine start ended up: verified ready, or never ready (its record says the last reason why). */
public enum Outcome {
    /** Verified ready. */
    READY,
    /** Never verified ready: a latched verification failure, or the engine went away or restarted first. */
    NOT_READY;

    /** The snake_case name used in records, {@code /status} and the CSV. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The outcome of a value; anything but {@code ready} was not ready. */
    public static Outcome of(String value) {
        return READY.value().equals(value) ? READY : NOT_READY;
    }
}
