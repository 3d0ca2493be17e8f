package dev.readygate.engine;

import java.util.List;

/**
 * What llama-server's {@code GET /slots} says of its parallel slots, and nothing else of its answer (each slot's prompt
 * text is in it: never read, kept or shown). Answered without {@code --metrics} (with {@code --slots}, the default of
 * newer llama-servers); its task is a high-priority one, served between two decode steps.
 *
 * @param slots each slot, in the engine's order
 */
public record SlotsSample(List<Slot> slots) {

    public SlotsSample {
        slots = List.copyOf(slots);
    }

    /**
     * One slot.
     *
     * @param id the slot's {@code id}
     * @param task the {@code id_task} it serves (or served last)
     * @param processing its {@code is_processing}: a request holds it
     * @param decoded its {@code next_token.n_decoded}: the tokens its request generated so far (0 while its prompt is
     *     evaluated)
     */
    public record Slot(int id, long task, boolean processing, long decoded) {}

    /** How many slots a request holds. */
    public int processing() {
        return (int) slots.stream().filter(Slot::processing).count();
    }

    /** Whether every slot is held: a request sent now would wait for one. */
    public boolean full() {
        return !slots.isEmpty() && processing() == slots.size();
    }
}
