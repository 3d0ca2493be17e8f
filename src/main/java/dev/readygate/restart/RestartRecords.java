package dev.readygate.restart;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The recorded engine starts readygate keeps at hand (the last {@value #KEPT}, oldest first), each handed to the
 * history file's writer as it is kept or updated. A start kept again (a verdict that changed) keeps its place and the
 * memory and stop already joined to it; others (GPU memory per cycle) update a kept record by its id, or join a change
 * that waits for the record when it is not kept yet (how a start ended can be known before its record is built).
 */
public final class RestartRecords {

    static final int KEPT = 200;

    /** How many starts' changes may wait for their records. */
    private static final int PENDING = 8;

    private final List<RestartRecord> records = new ArrayList<>();
    private final Map<String, UnaryOperator<RestartRecord>> pending = new LinkedHashMap<>();
    private final Consumer<RestartRecord> writer;

    /**
     * @param loaded the history file's records, oldest first (only the last {@value #KEPT} are kept)
     * @param writer writes a record to the history file, off the caller's thread
     */
    public RestartRecords(List<RestartRecord> loaded, Consumer<RestartRecord> writer) {
        loaded.stream().skip(Math.max(0, loaded.size() - KEPT)).forEach(records::addLast);
        this.writer = writer;
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
                UnaryOperator<RestartRecord> waiting = pending.remove(record.id());
                kept = waiting == null ? record : waiting.apply(record);
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

    /** Changes a kept record as {@link #update} does, or, when it is not kept yet, as soon as it is. */
    public void join(String id, UnaryOperator<RestartRecord> change) {
        synchronized (this) {
            if (!update(id, change)) {
                UnaryOperator<RestartRecord> earlier = pending.remove(id);
                pending.put(id, earlier == null ? change : record -> change.apply(earlier.apply(record)));
                while (pending.size() > PENDING) {
                    pending.remove(pending.keySet().iterator().next());
                }
            }
        }
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
