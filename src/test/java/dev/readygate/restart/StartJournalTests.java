package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import dev.readygate.statedir.StateDir;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Set;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

/** The starts readygate saw begin and has not recorded: kept across a kill, taken out once recorded, matched as a table. */
class StartJournalTests {

    static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");
    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    static Stream<Arguments> continuations() {
        return Stream.of(
                // The found start's own dating against the journal's: the log's whole seconds and the process start.
                Arguments.of(StartSource.LOG, T0, T0.plusMillis(700), true),
                Arguments.of(StartSource.LOG, T0, T0.plusSeconds(5), false),
                Arguments.of(StartSource.PROCESS_START_TIME, T0, T0.minusSeconds(5), false),
                // Seen going away at T0: a process started after it may be the one, one started well before is not.
                Arguments.of(StartSource.OBSERVED_DOWN, T0, T0.plusSeconds(30), true),
                Arguments.of(StartSource.OBSERVED_DOWN, T0, T0.minusSeconds(30), false),
                // First seen at T0: its process started before.
                Arguments.of(StartSource.FIRST_OBSERVED, T0, T0.minusSeconds(30), true),
                Arguments.of(StartSource.FIRST_OBSERVED, T0, T0.plusSeconds(30), false),
                // Nothing dates the found start: nothing tells them apart.
                Arguments.of(StartSource.LOG, T0, null, true),
                Arguments.of(StartSource.OBSERVED_DOWN, T0, null, true));
    }

    @ParameterizedTest
    @MethodSource("continuations")
    void continuesWhenTheFoundStartIsTheSameEngineProcessAsFarAsTheirDatingsTell(
            StartSource source, Instant since, @Nullable Instant origin, boolean same) {
        assertThat(StartJournal.continues(new StartJournal.Entry("a", since, source), origin))
                .isEqualTo(same);
    }

    StartJournal journal(StateDir stateDir, Set<String> recorded) {
        return new StartJournal(dir.resolve(StartJournal.FILE_NAME), stateDir, Runnable::run, JSON, recorded);
    }

    @Test
    void aStartBegunAndNotRecordedIsFoundByTheNextReadygateOnceAndARecordedOneIsNot() {
        Path file = dir.resolve(StartJournal.FILE_NAME);
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            StartJournal journal = journal(stateDir, Set.of());
            journal.begun(new EngineStart("seen", T0, StartSource.OBSERVED_DOWN, false));
            journal.begun(new EngineStart("first-seen", T0, StartSource.FIRST_OBSERVED, true));
            journal.begun(new EngineStart("recorded", T0.plusSeconds(9), StartSource.LOG, false));
            journal.recorded("recorded");
            assertThat(StartJournal.read(file, JSON))
                    .containsExactly(new StartJournal.Entry("seen", T0, StartSource.OBSERVED_DOWN));
        }
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            StartJournal next = journal(stateDir, Set.of());
            assertThat(next.takeFound()).containsExactly(new StartJournal.Entry("seen", T0, StartSource.OBSERVED_DOWN));
            assertThat(next.takeFound()).isEmpty();
            next.recorded("seen");
            assertThat(file).as("no start in progress, no file").doesNotExist();
        }
    }

    @Test
    void aStartSeenBeginBeforeTheNewEngineAnsweredIsKeptAsAwaitedUntilItBegins() {
        Path file = dir.resolve(StartJournal.FILE_NAME);
        StartJournal.Entry awaited = new StartJournal.Entry("awaited", T0, StartSource.OBSERVED_DOWN, true);
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            StartJournal journal = journal(stateDir, Set.of());
            journal.awaited(T0, "awaited");
            journal.awaited(T0.plusSeconds(1), "seen-down-again");
            assertThat(StartJournal.read(file, JSON))
                    .as("one awaited start, the earliest sighting")
                    .containsExactly(awaited);
        }
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            StartJournal next = journal(stateDir, Set.of());
            assertThat(next.takeFound()).containsExactly(awaited);
            next.begun(new EngineStart("began", T0.plusSeconds(2), StartSource.OBSERVED_DOWN, false));
            assertThat(StartJournal.read(file, JSON))
                    .as("the start that began is the awaited one")
                    .containsExactly(new StartJournal.Entry("began", T0.plusSeconds(2), StartSource.OBSERVED_DOWN));
        }
    }

    @Test
    void aStartTheEngineDatesIsKeptWithItsProcessStartTimeOnce() {
        Path file = dir.resolve(StartJournal.FILE_NAME);
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            StartJournal journal = journal(stateDir, Set.of());
            journal.begun(new EngineStart("seen", T0, StartSource.OBSERVED_DOWN, false));
            journal.dated("seen", T0.plusMillis(40));
            journal.dated("seen", T0.plusSeconds(9));
            journal.dated("never-begun", T0);
            assertThat(StartJournal.read(file, JSON))
                    .containsExactly(new StartJournal.Entry("seen", T0.plusMillis(40), StartSource.PROCESS_START_TIME));
        }
    }

    @Test
    void aStartWhoseRecordTheHistoryHoldsIsNotFound() {
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            journal(stateDir, Set.of()).begun(new EngineStart("seen", T0, StartSource.LOG, false));
        }
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            // Killed after the record's line, before the journal's write.
            assertThat(journal(stateDir, Set.of("seen")).takeFound()).isEmpty();
        }
    }

    @Test
    void aReadygateRunningReadOnlyBesideTheWriterLeavesItsJournalAlone() throws Exception {
        try (StateDir writer = new StateDir(dir, Clock.systemUTC())) {
            journal(writer, Set.of()).begun(new EngineStart("seen", T0, StartSource.LOG, false));
            try (StateDir readOnly = new StateDir(dir, Clock.systemUTC())) {
                StartJournal other = journal(readOnly, Set.of());
                assertThat(other.takeFound()).isEmpty();
                other.begun(new EngineStart("other", T0, StartSource.LOG, false));
            }
            assertThat(StartJournal.read(dir.resolve(StartJournal.FILE_NAME), JSON))
                    .extracting(StartJournal.Entry::id)
                    .containsExactly("seen");
        }
    }

    @Test
    void anUnreadableJournalIsIgnored() throws Exception {
        Files.writeString(dir.resolve(StartJournal.FILE_NAME), "{\"starts\": [{\"id\": \"torn");
        try (StateDir stateDir = new StateDir(dir, Clock.systemUTC())) {
            assertThat(journal(stateDir, Set.of()).takeFound()).isEmpty();
        }
    }
}
