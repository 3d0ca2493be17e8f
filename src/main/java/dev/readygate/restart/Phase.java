package dev.readygate.restart;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** The phases of an engine start, in the order they are reached; the last is verified readiness. */
public enum Phase {
    /** The engine process started. */
    ENGINE_START,
    /** Its port accepted a connection. */
    PORT_LISTENING,
    /** {@code /health} answered 200. */
    HEALTH_OK,
    /** {@code /v1/models} listed the served model. */
    MODEL_LISTED,
    /** The representative probe passed. */
    REPRESENTATIVE_OK,
    /** The canary passed. */
    CANARY_OK,
    /** Verified ready: the kubelet may send traffic. */
    READY;

    /** The snake_case name used in records, {@code /status}, the CSV and metric tags: {@code health_ok}, ... */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The phase of a value, or null for one this version does not know. */
    public static @Nullable Phase of(String value) {
        for (Phase phase : values()) {
            if (phase.value().equals(value)) {
                return phase;
            }
        }
        return null;
    }
}
