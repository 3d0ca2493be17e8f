package dev.readygate.statedir;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

@ExtendWith(OutputCaptureExtension.class)
class StateDirTests {

    @TempDir
    Path dir;

    final Clock clock = Clock.systemUTC();

    static StateDir.Write writing(Path file) {
        return () -> Files.writeString(file, "x".repeat(1000));
    }

    static int occurrences(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
            count++;
        }
        return count;
    }

    @Test
    void writeWhenTheDirectoryIsReadOnlyFailsWithItsReasonAndLogsOncePerChange(CapturedOutput output)
            throws IOException {
        try (Tmpfs fs = Tmpfs.mount(dir.resolve("mnt"), "256k")) {
            Path state = Files.createDirectories(fs.path().resolve("state"));
            // Read-only before readygate opens it (a file system with a file open for writing cannot be remounted).
            fs.readOnly();
            try (StateDir stateDir = new StateDir(state, clock)) {
                for (int i = 0; i < 5; i++) {
                    assertThat(stateDir.write(Store.CANARY_BASELINES, writing(state.resolve("canary-baselines.json"))))
                            .isFalse();
                }
                StateDir.StoreStatus status = stateDir.status().get(Store.CANARY_BASELINES);
                assertThat(status.problem()).isEqualTo(StateDirProblem.READ_ONLY);
                assertThat(status.detail()).contains("Read-only file system");
                assertThat(stateDir.failures(Store.CANARY_BASELINES, StateDirProblem.READ_ONLY))
                        .isEqualTo(5);
                assertThat(stateDir.failing(Store.CANARY_BASELINES, StateDirProblem.READ_ONLY))
                        .isTrue();
                assertThat(occurrences(output.getAll(), "Cannot write canary-baselines.json"))
                        .isEqualTo(1);
                assertThat(output.getAll()).contains("state_dir_read_only");

                fs.readWrite();
                assertThat(stateDir.write(Store.CANARY_BASELINES, writing(state.resolve("canary-baselines.json"))))
                        .isTrue();
                assertThat(stateDir.status().get(Store.CANARY_BASELINES).problem())
                        .isNull();
                assertThat(stateDir.status().get(Store.CANARY_BASELINES).lastWrite())
                        .isNotNull();
                assertThat(occurrences(output.getAll(), "Writing canary-baselines.json in the state directory"))
                        .isEqualTo(1);
                assertThat(stateDir.writer()).as("takes the lock once it can").isTrue();
                assertThat(stateDir.status().get(Store.RESTART_HISTORY).problem())
                        .as("not written since")
                        .isEqualTo(StateDirProblem.READ_ONLY);
            }
        }
    }

    @Test
    void openWhenTheDirectoryIsReadOnlyAtStartSaysSoForEveryStoreAndNeverThrows() throws IOException {
        try (Tmpfs fs = Tmpfs.mount(dir.resolve("mnt"), "256k")) {
            Files.createDirectories(fs.path().resolve("state"));
            fs.readOnly();
            try (StateDir stateDir = new StateDir(fs.path().resolve("state"), clock)) {
                assertThat(stateDir.status().values())
                        .extracting(StateDir.StoreStatus::problem)
                        .containsOnly(StateDirProblem.READ_ONLY);
                assertThat(stateDir.readOnly())
                        .as("not locked by another: just not writable")
                        .isFalse();
            }
        }
    }

    @Test
    void writeWhenTheFileSystemIsFullFailsAsFullUntilThereIsSpaceAgain() throws IOException {
        try (Tmpfs fs = Tmpfs.mount(dir.resolve("mnt"), "64k")) {
            Path state = fs.path().resolve("state");
            try (StateDir stateDir = new StateDir(state, clock)) {
                fs.fill();
                assertThat(stateDir.write(Store.RESTART_HISTORY, writing(state.resolve("restarts.jsonl"))))
                        .isFalse();
                assertThat(stateDir.status().get(Store.RESTART_HISTORY).problem())
                        .isEqualTo(StateDirProblem.FULL);
                fs.free();
                assertThat(stateDir.write(Store.RESTART_HISTORY, writing(state.resolve("restarts.jsonl"))))
                        .isTrue();
            }
        }
    }

    @Test
    void writeWhenTheDirectoryIsGoneAndCannotBeCreatedFailsAsMissing() throws IOException {
        // Its parent is a file: the directory can be neither found nor made.
        Path parent = Files.writeString(dir.resolve("not-a-directory"), "");
        Path state = parent.resolve("state");
        try (StateDir stateDir = new StateDir(state, clock)) {
            assertThat(stateDir.write(Store.RESTART_HISTORY, () -> {
                        Files.createDirectories(state);
                        Files.writeString(state.resolve("restarts.jsonl"), "x");
                    }))
                    .isFalse();
            assertThat(stateDir.status().get(Store.RESTART_HISTORY).problem()).isEqualTo(StateDirProblem.MISSING);
        }
    }

    @Test
    void writeWhenTheDirectoryWasRemovedWorksOnceTheWriterMakesItAgain() throws IOException {
        Path state = dir.resolve("state");
        try (StateDir stateDir = new StateDir(state, clock)) {
            org.springframework.util.FileSystemUtils.deleteRecursively(state);
            assertThat(stateDir.write(Store.RESTART_HISTORY, () -> {
                        Files.createDirectories(state);
                        Files.writeString(state.resolve("restarts.jsonl"), "x");
                    }))
                    .isTrue();
            assertThat(stateDir.status().get(Store.RESTART_HISTORY).problem()).isNull();
        }
    }

    @Test
    void secondStateDirOnTheSameDirectoryRunsReadOnlyAndTakesOverWhenTheFirstCloses(CapturedOutput output)
            throws IOException {
        Path state = dir.resolve("state");
        StateDir first = new StateDir(state, clock);
        StateDir second = new StateDir(state, clock);
        assertThat(first.writer()).isTrue();
        assertThat(second.writer()).isFalse();
        assertThat(second.readOnly()).isTrue();
        assertThat(second.holder()).contains("pid " + ProcessHandle.current().pid());
        assertThat(output.getAll()).contains("this one runs read-only");
        assertThat(second.write(Store.RESTART_HISTORY, writing(state.resolve("restarts.jsonl"))))
                .isFalse();
        assertThat(second.status().get(Store.RESTART_HISTORY).problem()).isEqualTo(StateDirProblem.LOCKED);
        assertThat(Files.exists(state.resolve("restarts.jsonl"))).isFalse();

        first.close();
        assertThat(second.write(Store.RESTART_HISTORY, writing(state.resolve("restarts.jsonl"))))
                .isTrue();
        assertThat(second.writer()).isTrue();
        assertThat(second.readOnly()).isFalse();
        assertThat(second.status().get(Store.RESTART_HISTORY).problem()).isNull();
        assertThat(second.status().values())
                .as("no store stays state_dir_locked after the takeover, written since or not")
                .allSatisfy(status -> assertThat(status.problem()).isNull());
        assertThat(output.getAll()).contains("Took over the state directory");
        second.close();
    }

    @Test
    void aStateDirForReadingOnlyCreatesNothingAndWritesNothing() {
        Path state = dir.resolve("never-created");
        try (StateDir reader = StateDir.readingOnly(state, clock)) {
            assertThat(reader.write(Store.RESTART_HISTORY, writing(state.resolve("restarts.jsonl"))))
                    .isFalse();
        }
        assertThat(state).doesNotExist();
    }

    @Test
    void lockHeldByAnotherProcessIsFreedWhenThatProcessIsKilled() throws Exception {
        Path state = dir.resolve("state");
        Process holder = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        LockHolder.class.getName(),
                        state.toString())
                .redirectErrorStream(true)
                .start();
        try {
            // The holder says when it holds the lock, then waits on its standard input.
            String line = new String(holder.getInputStream().readNBytes("locked\n".length()), StandardCharsets.UTF_8);
            assertThat(line).isEqualTo("locked\n");
            try (StateDir stateDir = new StateDir(state, clock)) {
                assertThat(stateDir.readOnly()).isTrue();
                assertThat(stateDir.holder()).contains("pid " + holder.pid());
                assertThat(stateDir.write(Store.RESTART_HISTORY, writing(state.resolve("restarts.jsonl"))))
                        .isFalse();
                // kill -9: no clean-up runs; the OS drops the lock with the process, the file stays.
                holder.destroyForcibly();
                assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(Files.exists(state.resolve(StateDir.LOCK_FILE))).isTrue();
                assertThat(stateDir.write(Store.RESTART_HISTORY, writing(state.resolve("restarts.jsonl"))))
                        .isTrue();
                assertThat(stateDir.writer()).isTrue();
            }
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void problemOfNamesTheFileSystemsErrors() {
        assertThat(List.of(
                        new java.nio.file.FileSystemException("/s/x", null, "Read-only file system"),
                        new java.io.IOException("No space left on device"),
                        new java.nio.file.FileSystemException("/s/x", null, "Disk quota exceeded"),
                        new java.nio.file.AccessDeniedException("/s/x"),
                        new java.nio.file.NoSuchFileException("/s/x"),
                        new java.nio.file.FileAlreadyExistsException("/s"),
                        new java.io.UncheckedIOException(new java.io.IOException("No space left on device")),
                        new java.io.IOException("Input/output error")))
                .extracting(StateDirProblem::of)
                .containsExactly(
                        StateDirProblem.READ_ONLY,
                        StateDirProblem.FULL,
                        StateDirProblem.FULL,
                        StateDirProblem.NOT_WRITABLE,
                        StateDirProblem.MISSING,
                        StateDirProblem.MISSING,
                        StateDirProblem.FULL,
                        StateDirProblem.IO_ERROR);
    }
}
