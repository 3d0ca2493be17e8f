package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.statedir.StateDir;
import dev.readygate.statedir.StateDirProblem;
import dev.readygate.statedir.Store;
import dev.readygate.statedir.Tmpfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

class CanaryBaselineStoreTests {

    static final BaselineKey KEY = new BaselineKey("m", "m", 4096, "0.31.0", "H200", "prompt#1/max1/seed0");
    static final BaselineKey OTHER = new BaselineKey("m2", "m2", 4096, "0.31.0", "H200", "prompt#1/max1/seed0");
    static final Instant AT = Instant.parse("2026-11-30T12:00:00Z");

    @TempDir
    Path dir;

    final JsonMapper json = JsonMapper.builder().build();

    @Test
    void saveWhenTheStateDirIsReadOnlyKeepsTheBaselineInMemoryAndSaysItWasNotWritten() throws Exception {
        try (Tmpfs fs = Tmpfs.mount(dir.resolve("mnt"), "256k")) {
            Path state = Files.createDirectories(fs.path().resolve("state"));
            fs.readOnly();
            StateDir stateDir = new StateDir(state, Clock.systemUTC());
            CanaryBaselineStore store = new CanaryBaselineStore(stateDir, json);
            CanaryAnswer answer = new CanaryAnswer(List.of(3920), " ralo", -1.96);
            assertThat(store.save(KEY, answer, AT)).isFalse();
            assertThat(store.find(KEY)).isEqualTo(new CanaryBaselineStore.Baseline(answer, AT));
            assertThat(stateDir.status().get(Store.CANARY_BASELINES).problem()).isEqualTo(StateDirProblem.READ_ONLY);
            stateDir.close();
        }
    }

    @Test
    void saveWhenTheDiskIsFullLeavesTheFileAsItWasAndNoTemporaryFile() throws Exception {
        try (Tmpfs fs = Tmpfs.mount(dir.resolve("mnt"), "64k")) {
            Path state = Files.createDirectories(fs.path().resolve("state"));
            StateDir stateDir = new StateDir(state, Clock.systemUTC());
            CanaryBaselineStore store = new CanaryBaselineStore(stateDir, json);
            assertThat(store.save(KEY, new CanaryAnswer(List.of(1), "a", -0.5), AT))
                    .isTrue();
            String before = Files.readString(state.resolve(CanaryBaselineStore.FILE));
            fs.fill();
            assertThat(store.save(OTHER, new CanaryAnswer(List.of(2), "b".repeat(8000), -0.5), AT))
                    .isFalse();
            assertThat(stateDir.status().get(Store.CANARY_BASELINES).problem()).isEqualTo(StateDirProblem.FULL);
            assertThat(Files.readString(state.resolve(CanaryBaselineStore.FILE)))
                    .isEqualTo(before);
            assertThat(state.resolve(CanaryBaselineStore.FILE + ".tmp")).doesNotExist();
            assertThat(new CanaryBaselineStore(new StateDir(dir.resolve("other"), Clock.systemUTC()), json).find(KEY))
                    .isNull();
            stateDir.close();
        }
    }
}
