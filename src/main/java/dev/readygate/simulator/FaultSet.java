package dev.readygate.simulator;

import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/** The faults active now, with their scope and since when; thread-safe. */
final class FaultSet {

    /** Which requests a fault hits. */
    enum Scope {
        /** Completions and chat completions only: {@code /health} and the other endpoints still answer. */
        INFERENCE,
        /** Every request on the engine port. */
        ALL
    }

    /** One active fault. */
    record Active(Fault fault, Scope scope, Instant since) {}

    private final Map<Fault, Active> active = new ConcurrentHashMap<>();
    private final AtomicReference<@Nullable Instant> lastBlockingCleared = new AtomicReference<>();
    private final Clock clock;

    FaultSet(Clock clock) {
        this.clock = clock;
    }

    void enable(Fault fault, Scope scope) {
        active.put(fault, new Active(fault, scope, clock.instant()));
    }

    void disable(Fault fault) {
        if (active.remove(fault) != null && fault.blocksServing()) {
            lastBlockingCleared.set(clock.instant());
        }
    }

    void clear() {
        List.copyOf(active.keySet()).forEach(this::disable);
    }

    boolean has(Fault fault) {
        return active.containsKey(fault);
    }

    /** Whether the fault is active for a request that is ({@code inference}) or is not an inference request. */
    boolean hits(Fault fault, boolean inference) {
        Active a = active.get(fault);
        return a != null && (inference || a.scope() == Scope.ALL);
    }

    boolean anyBlocking() {
        return active.keySet().stream().anyMatch(Fault::blocksServing);
    }

    @Nullable
    Instant lastBlockingCleared() {
        return lastBlockingCleared.get();
    }

    List<Active> active() {
        return active.values().stream()
                .sorted(Comparator.comparing(Active::fault))
                .toList();
    }
}
