package dev.readygate.gateway;

import org.jspecify.annotations.Nullable;

/**
 * The one place each proxied exchange's end is reported: where the passive health of issue 27's item 2 (the judge of
 * real traffic) and the traffic metrics plug in. Called once per exchange that reached the engine, on the traffic
 * event loop: it must not block. {@link #began} is each one's start, as it is forwarded, and {@link #released} its very
 * end (for counts of exchanges in flight: {@link WorkInFlight}).
 */
@FunctionalInterface
public interface ExchangeEnds {

    /** Reports nowhere. */
    ExchangeEnds NONE = exchange -> {};

    void ended(ProxiedExchange exchange);

    /** An exchange is forwarded to the engine, for the start it was admitted to (null: without one); ends once. */
    default void began(@Nullable String startId) {}

    /**
     * An exchange that {@link #began} is over for its client too: its answer's last byte was written to the client's
     * connection (or the exchange was cut). Comes after {@link #ended}, which is reported as the engine's answer ends.
     */
    default void released() {}
}
