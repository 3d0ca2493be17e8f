package dev.readygate.readiness;

import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * What is known about each engine start, in one place: one immutable {@link Sheet} per start id, opened when the start
 * begins and closed when it ends, kept closed while its record may still be written, and dropped oldest first once
 * more than {@value #KEPT} closed sheets are kept (an open sheet is never dropped). Each concern writes its own
 * {@link Slot} of a start's sheet: the probes' facts, the log's findings as they stood when the start ended, where the
 * start ran, its GPU memory cycle, how it stopped; the start's record is built from its sheet.
 *
 * <p>The state machine owns it and opens and closes sheets as it hands out its news, before any listener hears of
 * the change ({@link EngineStateMachine#ledger()}): a listener always finds the sheet of the start that began. A
 * write for a start id the machine never opened (a start an earlier readygate saw begin) opens a closed sheet.
 * Writes are atomic per sheet; each slot has one writer, which keeps any order its values need.
 */
public final class StartLedger {

    /** How many closed sheets are kept: those whose records may still be written or updated. */
    public static final int KEPT = 8;

    /**
     * One kind of knowledge about a start, and its value before anything was learned.
     *
     * @param <T> the value's type
     */
    public static final class Slot<T> {

        private final String name;
        private final Function<String, T> initial;

        private Slot(String name, Function<String, T> initial) {
            this.name = name;
            this.initial = initial;
        }

        /**
         * @param name what the slot holds (for messages)
         * @param initial its value, from the start id, before anything was written
         */
        public static <T> Slot<T> of(String name, Function<String, T> initial) {
            return new Slot<>(name, initial);
        }

        /** A slot that holds nothing (null) until written. */
        public static <T> Slot<@Nullable T> empty(String name) {
            return new Slot<>(name, id -> null);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * What is known about one start.
     *
     * @param startId the start's id
     * @param open whether the start is in progress (the state machine's current start)
     */
    public record Sheet(String startId, boolean open, Map<Slot<?>, Object> values) {

        public Sheet {
            Objects.requireNonNull(startId);
            values = Map.copyOf(values);
        }

        static Sheet empty(String startId, boolean open) {
            return new Sheet(startId, open, Map.of());
        }

        /** The slot's value, or its initial value when nothing was written. */
        @SuppressWarnings("unchecked")
        public <T> T get(Slot<T> slot) {
            Object value = values.get(slot);
            return value == null ? slot.initial.apply(startId) : (T) value;
        }

        <T> Sheet with(Slot<T> slot, T value) {
            Map<Slot<?>, Object> next = new IdentityHashMap<>(values);
            if (value == null) {
                next.remove(slot);
            } else {
                next.put(slot, value);
            }
            return new Sheet(startId, open, next);
        }

        Sheet closed() {
            return open ? new Sheet(startId, false, values) : this;
        }
    }

    /** The kept sheets, in the order they were opened (guarded by this). */
    private final Map<String, Sheet> sheets = new LinkedHashMap<>();

    /** The sheet of a start: as kept, or an empty closed one (not kept) when nothing is known of it. */
    public synchronized Sheet sheet(String startId) {
        Sheet sheet = sheets.get(startId);
        return sheet == null ? Sheet.empty(startId, false) : sheet;
    }

    /** What a slot of a start's sheet holds. */
    public <T> T get(String startId, Slot<T> slot) {
        return sheet(startId).get(slot);
    }

    /** Changes a slot of a start's sheet (opening a closed one when none is kept); returns the slot's new value. */
    public <T> T update(String startId, Slot<T> slot, UnaryOperator<T> change) {
        synchronized (this) {
            Sheet kept = sheets.get(startId);
            Sheet sheet = kept == null ? Sheet.empty(startId, false) : kept;
            T value = change.apply(sheet.get(slot));
            sheets.put(startId, sheet.with(slot, value));
            // A kept sheet's update changes no sheet's place nor whether it is open: only an added one may evict.
            // (The gateway updates its start's sheet once per proxied answer.)
            if (kept == null) {
                evict();
            }
            return value;
        }
    }

    /** A change of the state machine, before any listener hears of it: the start it ended closes, a new one opens. */
    synchronized void follow(EngineStateChanged change) {
        EngineStart ended = change.ended();
        if (ended != null) {
            Sheet sheet = sheets.get(ended.id());
            sheets.put(ended.id(), sheet == null ? Sheet.empty(ended.id(), false) : sheet.closed());
        }
        EngineStart start = change.start();
        if (change.startBegan() && start != null) {
            Sheet known = sheets.remove(start.id());
            sheets.put(
                    start.id(),
                    known == null ? Sheet.empty(start.id(), true) : new Sheet(start.id(), true, known.values()));
        }
        evict();
    }

    private void evict() {
        long closed = sheets.values().stream().filter(sheet -> !sheet.open()).count();
        for (Iterator<Sheet> oldest = sheets.values().iterator(); closed > KEPT && oldest.hasNext(); ) {
            if (!oldest.next().open()) {
                oldest.remove();
                closed--;
            }
        }
    }
}
