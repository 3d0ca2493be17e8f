package dev.readygate.server;

import org.jspecify.annotations.Nullable;

/**
 * The endpoints of readygate's server whose answers cost more than reading a state from memory, each with a budget
 * of requests answered at once of its own ({@link HeavyRequestLimit}), apart from the kubelet's probes
 * ({@code /readyz}, {@code /livez}), which have none.
 */
public enum HeavyEndpoint {
    /** {@code /status} (the JSON document and the page) and everything below it: the exports and the comparison. */
    STATUS("status"),
    /** The Prometheus scrape, {@code /actuator/prometheus}: a scrape is never turned away by {@code /status} pollers. */
    METRICS("metrics");

    private final String value;

    HeavyEndpoint(String value) {
        this.value = value;
    }

    /** The name in metrics and logs. */
    public String value() {
        return value;
    }

    /** The heavy endpoint a request path is for, or null for any other path (the probes among them). */
    static @Nullable HeavyEndpoint of(String path) {
        if (path.equals("/status") || path.startsWith("/status/")) {
            return STATUS;
        }
        if (path.equals("/actuator/prometheus") || path.startsWith("/actuator/prometheus/")) {
            return METRICS;
        }
        return null;
    }
}
