package dev.readygate.restart;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** Why a preload fallback loaded from disk: vLLM's free-text reason reduced to a closed set fit for a metric tag. */
public enum FallbackReason {
    /** The cached weights are another checkpoint's ({@code WeightCacheKey mismatch}). */
    FINGERPRINT_MISMATCH,
    /** The daemon released the weights. */
    WEIGHTS_RELEASED,
    /** The daemon could not be reached. */
    DAEMON_UNAVAILABLE,
    /** Loading over IPC failed. */
    IPC_FAILED,
    /** The daemon reported an error. */
    DAEMON_ERROR,
    /** Another reason. */
    OTHER,
    /** The log gave none. */
    UNKNOWN;

    /** The label value: {@code fingerprint_mismatch}, ... */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The category of vLLM's fallback reason ({@code Weight cache unusable (<reason>); ...}). */
    public static FallbackReason of(@Nullable String reason) {
        if (reason == null) {
            return UNKNOWN;
        }
        String r = reason.toLowerCase(Locale.ROOT);
        // SGLang's client mode falls back to disk only when no daemon is there (ipc_loader.py @6512c36d: a config
        // mismatch or a refused socket fails the start instead), whatever its warning's "or config mismatch" says.
        if (r.startsWith("sglang: weight cache not available")
                || r.contains("socket not found")
                || r.contains("no registered daemon")
                || r.contains("no weight cache is registered")) {
            return DAEMON_UNAVAILABLE;
        }
        if (r.contains("mismatch")) {
            return FINGERPRINT_MISMATCH;
        }
        if (r.contains("released")) {
            return WEIGHTS_RELEASED;
        }
        if (r.contains("unavailable") || r.contains("cannot connect") || r.contains("connection refused")) {
            return DAEMON_UNAVAILABLE;
        }
        if (r.contains("ipc loading failed")) {
            return IPC_FAILED;
        }
        if (r.contains("daemon error")) {
            return DAEMON_ERROR;
        }
        return OTHER;
    }
}
