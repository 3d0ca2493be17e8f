package dev.readygate.probe;

import java.util.Locale;

/** The heavy probes. */
public enum ProbeKind {
    /** A streamed completion with the model's normal prompt and output length. */
    REPRESENTATIVE,
    /** A deterministic completion whose answer is known. */
    CANARY;

    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
