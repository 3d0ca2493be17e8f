package dev.readygate.gateway;

/**
 * The one place each proxied exchange's end is reported: where the passive health of issue 27's item 2 (the judge of
 * real traffic) and the traffic metrics plug in. Called once per exchange that reached the engine, on the traffic
 * event loop: it must not block.
 */
@FunctionalInterface
public interface ExchangeEnds {

    /** Reports nowhere. */
    ExchangeEnds NONE = exchange -> {};

    void ended(ProxiedExchange exchange);
}
