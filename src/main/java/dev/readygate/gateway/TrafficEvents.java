package dev.readygate.gateway;

import java.time.Duration;

/**
 * What the gateway tells the traffic path's meters besides each forwarded exchange's start and end
 * ({@link ExchangeEnds}): a request the gateway answered itself, and a request that was held. Called on the traffic event loops: each call must be cheap and must not block.
 */
public interface TrafficEvents {

    /** Tells nothing. */
    TrafficEvents NONE = new TrafficEvents() {
        @Override
        public void refused(OpenAiError error) {}

        @Override
        public void held(Duration waited, boolean forwarded) {}
    };

    /** A request the gateway answered itself with {@code error}, without sending it to the engine. */
    void refused(OpenAiError error);

    /**
     * A request that was held (through a short start) left the hold after {@code waited}: forwarded to the engine, or
     * not (refused: its deadline passed, the start failed, the pod drains). Its outcome is counted apart, by
     * {@link #refused} or by its exchange's end.
     */
    void held(Duration waited, boolean forwarded);
}
