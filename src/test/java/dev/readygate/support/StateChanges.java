package dev.readygate.support;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;

/**
 * readygate's engine state changes, as its application events tell them, for a test that started readygate with
 * {@code SpringApplicationBuilder.listeners(...)}: when the engine was taken out, when it was back, and why.
 */
public final class StateChanges implements ApplicationListener<ApplicationEvent> {

    private final List<EngineState> states = new CopyOnWriteArrayList<>();

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (event instanceof PayloadApplicationEvent<?> payload
                && payload.getPayload() instanceof EngineStateChanged change) {
            states.add(change.current());
        }
    }

    /** The first time at or after {@code from} that readygate stopped accepting traffic, or null. */
    public @Nullable Instant outSince(Instant from) {
        return outs(from).stream().map(EngineState::since).findFirst().orElse(null);
    }

    /** Every state at or after {@code from} in which readygate did not accept traffic, in order. */
    public List<EngineState> outs(Instant from) {
        return states.stream()
                .filter(s -> !s.since().isBefore(from) && !s.acceptsTraffic())
                .toList();
    }

    /** The first time after {@code out} that readygate accepted traffic again; {@link Instant#MAX} while it has not. */
    public Instant backAfter(Instant out) {
        return states.stream()
                .filter(s -> s.since().isAfter(out) && s.acceptsTraffic())
                .map(EngineState::since)
                .findFirst()
                .orElse(Instant.MAX);
    }

    /**
     * Whether readygate had taken the engine out just before {@code at} (a request that arrived then was refused by
     * the gateway, never forwarded); false before the first change.
     */
    public boolean outAt(Instant at) {
        EngineState last = null;
        for (EngineState state : states) {
            if (state.since().isBefore(at)) {
                last = state;
            }
        }
        return last != null && !last.acceptsTraffic();
    }

    /** How often failed client requests (the gateway's passive health) took the engine out at or after {@code from}. */
    public long takenOutByClientTraffic(Instant from) {
        return states.stream()
                .filter(s -> !s.since().isBefore(from)
                        && s instanceof EngineState.NotReady notReady
                        && notReady.detail().startsWith("client request"))
                .count();
    }
}
