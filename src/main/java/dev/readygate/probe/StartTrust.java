package dev.readygate.probe;

/**
 * Whether the engine's current start loaded its weights from disk (trusted to learn a canary baseline from), mapped
 * them from a cache or restored a snapshot (not trusted), or is not known. Restart-path attribution provides it.
 */
@FunctionalInterface
public interface StartTrust {

    /** The trust of the current engine start. */
    Trust current();

    /** Trust of one start. */
    enum Trust {
        /** Weights loaded from disk (a cold start or a preload fallback). */
        TRUSTED,
        /** Weights mapped from the preload daemon or restored from a snapshot. */
        UNTRUSTED,
        /** No evidence either way. */
        UNKNOWN
    }
}
