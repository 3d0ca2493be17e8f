package dev.readygate.probe;

import java.util.Locale;

/** The probes that make the engine generate: the two heavy ones, and the light generation check. */
public enum ProbeKind {
    /** A streamed completion with the model's normal prompt and output length. */
    REPRESENTATIVE,
    /** A deterministic completion whose answer is known (in a verification, and every few generation checks). */
    CANARY,
    /** The light generation check: a fresh prompt of a few words, one or two output tokens. */
    GENERATION;

    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
