package dev.readygate;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.PayloadApplicationEvent;

/** The engine states a readygate started in a test goes through, recorded from its state-change events. */
final class StateChanges {

    private StateChanges() {}

    /** Every state {@code readygate} enters from now on, in order. */
    static List<EngineState> recorded(ConfigurableApplicationContext readygate) {
        List<EngineState> states = new CopyOnWriteArrayList<>();
        readygate.addApplicationListener((ApplicationListener<PayloadApplicationEvent<EngineStateChanged>>)
                event -> states.add(event.getPayload().current()));
        return states;
    }

    /**
     * The states from the first {@code down} on: from an engine's first crash (the dying start may first fail a check,
     * degraded, before it is down).
     */
    static List<EngineState> sinceTheFirstCrash(List<EngineState> states) {
        EngineState down = states.stream()
                .filter(state -> state.kind() == EngineState.Kind.DOWN)
                .findFirst()
                .orElseThrow();
        return List.copyOf(states.subList(states.indexOf(down), states.size()));
    }
}
