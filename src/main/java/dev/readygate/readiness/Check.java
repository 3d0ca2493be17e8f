package dev.readygate.readiness;

import java.util.Locale;

/**
 * Which check of the engine an observation comes from. A ready engine's failures are counted per check: a check's
 * run of failures ends at its own next pass ({@link ReadinessRules}), so scattered failures of one check never add up
 * while it passes in between.
 */
public enum Check {
    /** {@code GET /health}. */
    HEALTH,
    /** {@code GET /v1/models}: the served model is listed. */
    MODEL,
    /** The light generation check: a few prompt tokens, one or two output tokens, between the heavy probes. */
    GENERATION,
    /** The heavy verification: the representative probe and the canary. */
    VERIFICATION,
    /**
     * Client requests in gateway mode, each judged as readygate judges its own probes: a request the engine failed is
     * a failure of this check, and one served whole after the failures ended is its pass.
     */
    TRAFFIC;

    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
