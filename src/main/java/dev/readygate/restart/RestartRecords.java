package dev.readygate.restart;

import dev.readygate.readiness.StartLedger;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The recorded engine starts readygate keeps at hand (the last {@value #KEPT}, oldest first), each handed to the
 * history file's writer as it is kept or updated. A start kept again (a verdict that changed) keeps its place and the
 * memory and stop already joined to it; others (GPU memory per cycle) update a kept record by its id. How a start
 * ended can be known before its record is built: it is written to the start's sheet of the {@link StartLedger}
 * ({@link #STOP}), and a record kept later takes it from there.
 */
public final class RestartRecords {

    static final int KEPT = 200;

    /** How a start ended, once it did (null before). */
    static final StartLedger.Slot<@Nullable Stop> STOP = StartLedger.Slot.empty("how the start ended");

    private final List<RestartRecord> records = new ArrayList<>();
    private final Consumer<RestartRecord> writer;
    private final StartLedger ledger;

    /**
     * @param loaded the history file's records, oldest first (only the last {@value #KEPT} are kept)
     * @param writer writes a record to the history file, off the caller's thread
     * @param ledger where how each start ended is kept until its record is (the state machine's)
     */
    public RestartRecords(List<RestartRecord> loaded, Consumer<RestartRecord> writer, StartLedger ledger) {
        loaded.stream().skip(Math.max(0, loaded.size() - KEPT)).forEach(records::addLast);
        this.writer = writer;
        this.ledger = ledger;
    }

    /** Records with a ledger of their own (tests of the history alone). */
    public RestartRecords(List<RestartRecord> loaded, Consumer<RestartRecord> writer) {
        this(loaded, writer, new StartLedger());
    }

    /** Keeps a record (a start's memory joined so far stays with it) and writes it; returns it as kept. */
    public RestartRecord keep(RestartRecord record) {
        RestartRecord kept;
        synchronized (this) {
            int index = indexOf(record.id());
            if (index >= 0) {
                RestartRecord known = records.get(index);
                kept = record.memory().equals(CycleMemory.NONE) ? record.withMemory(known.memory()) : record;
                kept = kept.stop() == null ? kept.withStop(known.stop()) : kept;
                records.set(index, kept);
            } else {
                Stop stop = ledger.get(record.id(), STOP);
                kept = stop == null ? record : record.withStop(stop);
                records.addLast(kept);
                while (records.size() > KEPT) {
                    records.removeFirst();
                }
            }
            writer.accept(kept);
        }
        return kept;
    }

    /** Changes a kept record and writes it again if it changed; false when no record of that start is kept (yet). */
    public boolean update(String id, UnaryOperator<RestartRecord> change) {
        synchronized (this) {
            int index = indexOf(id);
            if (index < 0) {
                return false;
            }
            RestartRecord known = records.get(index);
            RestartRecord changed = change.apply(known);
            if (!changed.equals(known)) {
                records.set(index, changed);
                writer.accept(changed);
            }
            return true;
        }
    }

    /** How a start ended: joined to its record now, or, when it is not kept yet, as soon as it is. */
    public synchronized void stopped(String id, Stop stop) {
        ledger.update(id, STOP, known -> stop);
        update(id, record -> record.withStop(stop));
    }

    /**
     * The gateway's count of the requests in flight at a start's stop, joined to the stop already known (now, or once
     * the record is kept); nothing when no stop of the start is known.
     */
    public synchronized void counted(String id, Stop.Traffic traffic) {
        ledger.update(id, STOP, known -> known == null ? null : known.withTraffic(traffic));
        update(id, record -> {
            Stop stop = record.stop();
            return stop == null ? record : record.withStop(stop.withTraffic(traffic));
        });
    }

    /** The record kept before a start's (the latest kept when that start has none yet), or null. */
    public synchronized @Nullable RestartRecord before(String id) {
        int index = indexOf(id);
        int previous = index >= 0 ? index - 1 : records.size() - 1;
        return previous >= 0 ? records.get(previous) : null;
    }

    /** The kept records, oldest first. */
    public synchronized List<RestartRecord> history() {
        return List.copyOf(records);
    }

    private int indexOf(String id) {
        for (int i = 0; i < records.size(); i++) {
            if (records.get(i).id().equals(id)) {
                return i;
            }
        }
        return -1;
    }
}
