package dev.readygate.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * One sheet per engine start: opened when the start begins and closed when it ends, before any listener hears of the
 * change; kept closed for the records still to be written, one eviction bound for all of it.
 */
class StartLedgerTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final StartLedger.Slot<Integer> COUNT = StartLedger.Slot.of("count", id -> 0);
    static final StartLedger.Slot<@Nullable String> NOTE = StartLedger.Slot.empty("note");

    final AtomicInteger ids = new AtomicInteger();
    /** Whether each start's sheet was open when a listener heard of the change: start id, open. */
    final List<String> heard = new ArrayList<>();

    final EngineStateMachine machine =
            new EngineStateMachine(new ReadinessRules(1, 2), T0, this::heard, () -> "s" + ids.incrementAndGet());
    final StartLedger ledger = machine.ledger();

    void heard(EngineStateChanged change) {
        if (change.startBegan()) {
            heard.add(change.start().id() + " began, open "
                    + ledger.sheet(change.start().id()).open());
        }
        if (change.ended() != null) {
            heard.add(change.ended().id() + " ended, open "
                    + ledger.sheet(change.ended().id()).open());
        }
    }

    void begin(int second) {
        machine.apply(new Observation.HealthOk(T0.plusSeconds(second)));
    }

    void end(int second) {
        machine.apply(new Observation.Unreachable(T0.plusSeconds(second), Reason.ENGINE_DOWN, "refused"));
    }

    @Test
    void aStartsSheetIsOpenWhenListenersHearItBeganAndClosedWhenTheyHearItEnded() {
        begin(1);
        String first = machine.start().id();
        ledger.update(first, COUNT, count -> count + 1);
        end(2);

        assertThat(heard).containsExactly(first + " began, open true", first + " ended, open false");
        assertThat(ledger.sheet(first).open()).isFalse();
        // An ended start keeps what was learned: its record is written after the engine went away.
        assertThat(ledger.get(first, COUNT)).isEqualTo(1);
    }

    @Test
    void aSlotNeverWrittenHoldsItsInitialValueAndAskingKeepsNothing() {
        assertThat(ledger.get("unknown", COUNT)).isZero();
        assertThat(ledger.get("unknown", NOTE)).isNull();
        assertThat(ledger.sheet("unknown").values()).isEmpty();

        ledger.update("s9", NOTE, note -> "written");
        ledger.update("s9", NOTE, note -> null);

        assertThat(ledger.get("s9", NOTE)).isNull();
    }

    @Test
    void eachSlotChangesOnItsOwnInOneSheet() {
        ledger.update("s1", COUNT, count -> count + 2);
        ledger.update("s1", NOTE, note -> "kept");
        ledger.update("s1", COUNT, count -> count * 10);

        StartLedger.Sheet sheet = ledger.sheet("s1");
        assertThat(sheet.get(COUNT)).isEqualTo(20);
        assertThat(sheet.get(NOTE)).isEqualTo("kept");
    }

    @Test
    void whatWasWrittenBeforeAStartBeganIsInItsSheetOnceOpen() {
        ledger.update("s1", COUNT, count -> 7);

        begin(1);

        assertThat(machine.start().id()).isEqualTo("s1");
        assertThat(ledger.sheet("s1").open()).isTrue();
        assertThat(ledger.get("s1", COUNT)).isEqualTo(7);
    }

    @Test
    void onlyTheLatestClosedSheetsAreKeptAndTheOpenOneIsNeverDropped() {
        begin(0);
        String current = machine.start().id();
        ledger.update(current, COUNT, count -> 1);
        // A start an earlier readygate saw begin, and others recorded since: closed sheets, one more than kept.
        for (int i = 0; i <= StartLedger.KEPT; i++) {
            ledger.update("earlier" + i, COUNT, count -> 1);
        }

        assertThat(ledger.get("earlier0", COUNT)).as("the oldest closed sheet").isZero();
        assertThat(ledger.get("earlier1", COUNT)).isEqualTo(1);
        assertThat(ledger.get("earlier" + StartLedger.KEPT, COUNT)).isEqualTo(1);
        assertThat(ledger.get(current, COUNT))
                .as("the open sheet, older than all")
                .isEqualTo(1);

        ledger.update("earlier1", COUNT, count -> count + 1);
        assertThat(ledger.get("earlier1", COUNT)).isEqualTo(2);
        assertThat(ledger.get("earlier2", COUNT))
                .as("an update of a kept sheet drops none")
                .isEqualTo(1);

        end(1);
        ledger.update("later", COUNT, count -> 1);

        assertThat(ledger.get(current, COUNT))
                .as("closed now, and the oldest of those kept")
                .isZero();
    }

    @Test
    void everyStartOfARestartingEngineHasItsOwnSheet() {
        List<String> starts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            begin(2 * i);
            starts.add(machine.start().id());
            ledger.update(machine.start().id(), NOTE, note -> "start " + starts.size());
            end(2 * i + 1);
        }

        assertThat(starts).doesNotHaveDuplicates();
        assertThat(starts).extracting(id -> ledger.get(id, NOTE)).containsExactly("start 1", "start 2", "start 3");
    }
}
