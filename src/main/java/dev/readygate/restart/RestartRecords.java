package dev.readygate.restart;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The recorded engine starts readygate keeps at hand (the last {@value #KEPT}, oldest first), each handed to the
 * history file's writer as it is kept or updated. A start kept again (a verdict that changed) keeps its place and the
 * memory already joined to it; others (GPU memory per cycle) update a kept record by its id.
 */
public final class RestartRecords {

    static final int KEPT = 200;

    private final List<RestartRecord> records = new ArrayList<>();
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
                records.set(index, kept);
            } else {
                kept = record;
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
