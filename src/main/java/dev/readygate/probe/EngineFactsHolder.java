package dev.readygate.probe;

import dev.readygate.engine.ModelCard;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.StartLedger;
import java.time.Instant;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The {@link EngineFacts} of the current engine start and of the few before it: one immutable value per start, kept in
 * the start's sheet of the {@link StartLedger} (its {@link #FACTS} slot). A new start gets fresh facts, an ended one
 * keeps its own (restart tracking reads them after the engine went away). The current start is the state machine's;
 * facts learned while there is none are not kept.
 */
public final class EngineFactsHolder {

    /** What the probes learned about a start. */
    public static final StartLedger.Slot<EngineFacts> FACTS = StartLedger.Slot.of("engine facts", EngineFacts::fresh);

    private final EngineStateMachine machine;
    private final StartLedger ledger;

    /** The model card the latest start listed, and that start's id: what the next start's model is compared with. */
    private @Nullable ModelCard lastCard;

    private String lastCardStart = "";
    private @Nullable ModelCard cardBefore;

    public EngineFactsHolder(EngineStateMachine machine) {
        this.machine = machine;
        this.ledger = machine.ledger();
    }

    /** The facts of the current start ({@link EngineFacts#NONE} while there is none). */
    public EngineFacts current() {
        EngineStart start = machine.start();
        return start == null ? EngineFacts.NONE : of(start.id());
    }

    /** Whether the engine is in service now (ready or degraded): clients may hold its slots. */
    boolean inService() {
        return machine.current().acceptsTraffic();
    }

    /** The facts of a start, current or recent; fresh ones for a start nothing was learned about. */
    public EngineFacts of(String startId) {
        return ledger.get(startId, FACTS);
    }

    /**
     * Gateway mode: client requests served whole proved the start {@code startId} generates up to {@code at} (null: a
     * request failed since, no proof stands); the light checks are put off while such proof is recent.
     */
    public void served(String startId, @Nullable Instant at) {
        learn(startId, f -> f.withServed(at));
    }

    /**
     * Notes that the start {@code startId} lists {@code card}, and says whether that is another model than the start
     * before it listed (another name, root or identity: a deliberate model swap). False when no start before it listed
     * one (readygate's first start).
     */
    synchronized boolean modelSwapped(String startId, ModelCard card) {
        if (!startId.equals(lastCardStart)) {
            cardBefore = lastCard;
            lastCardStart = startId;
        }
        lastCard = card;
        return cardBefore != null && !cardBefore.sameModel(card);
    }

    /** Learns something about the current start; nothing while there is none. */
    void learn(UnaryOperator<EngineFacts> change) {
        EngineStart start = machine.start();
        if (start != null) {
            learn(start.id(), change);
        }
    }

    void learn(String startId, UnaryOperator<EngineFacts> change) {
        ledger.update(startId, FACTS, change);
    }
}
