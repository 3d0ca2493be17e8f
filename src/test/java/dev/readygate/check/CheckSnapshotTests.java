package dev.readygate.check;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.simulator.RunningSimulator;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code readygate check} with snapshot evidence, against the simulator (issue 19, item 5): it names an engine a
 * snapshot cannot restore (wider than one GPU) and a manifest taken on another driver than the node's, as
 * {@code /status} does, and the canary does not take such a manifest's oracle for the expected answer.
 */
class CheckSnapshotTests {

    @TempDir
    Path dir;

    String check(RunningSimulator engine, Path snapshotDir, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + dir.resolve("state"),
                "--readygate.evidence.engine-log=" + engine.engineLogFile(),
                "--readygate.evidence.snapshot-dir=" + snapshotDir,
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4"));
        args.addAll(List.of(extra));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CheckLauncher.run(args.toArray(String[]::new), new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theCheckWritesNothingNotEvenTheStateDirectorysLockFile() {
        try (RunningSimulator engine = RunningSimulator.serving(dir.resolve("engine"), "preload.enabled=false")) {
            String output = check(engine, engine.workDir().resolve("snapshot"));

            assertThat(output).contains("canary");
            assertThat(dir.resolve("state"))
                    .as("the state directory, with its readygate.lock")
                    .doesNotExist();
        }
    }

    @Test
    void aDataParallelEngineWithSnapshotEvidenceIsNamedAnUnsupportedSnapshotConfiguration() {
        try (RunningSimulator engine = RunningSimulator.serving(
                dir.resolve("engine"), "preload.enabled=false", "deployment.data-parallel-size=2")) {
            String output = check(engine, engine.workDir().resolve("snapshot"));

            String why = "data_parallel_size is 2: vLLM's snapshots restore one GPU (TP1) engines only, so"
                    + " readygate.evidence.snapshot-dir cannot describe this engine's starts";
            assertThat(output)
                    .as(output)
                    .containsPattern("snapshot scope +NOT supported: " + Pattern.quote(why))
                    .contains("  - unsupported snapshot configuration: " + why);
        }
    }

    @Test
    void aOneGpuEngineIsInScopeAndAManifestFromAnotherDriverIsNamedNotTrusted() throws Exception {
        try (RunningSimulator engine = RunningSimulator.serving(dir.resolve("engine"))) {
            Path snapshot = engine.workDir().resolve("snapshot");
            String matching = check(engine, snapshot, "--readygate.node.driver-version=580.159.04");
            assertThat(matching)
                    .as(matching)
                    .contains("snapshot scope     one GPU (tensor, pipeline and data parallel size 1): a snapshot can"
                            + " restore this engine")
                    .contains("snapshot manifest  taken on this GPU, driver and vLLM version, as far as known")
                    .contains("(snapshot_manifest)")
                    .doesNotContain("unsupported snapshot configuration")
                    .doesNotContain("NOT trusted");

            // A copy of the snapshot directory whose manifest was taken on another driver than the node's.
            Path view = Files.createDirectories(dir.resolve("snapshot-view"));
            String manifest = Files.readString(snapshot.resolve("manifest.json"));
            assertThat(manifest).contains("\"driver_version\" : \"580.159.04\"");
            Files.writeString(
                    view.resolve("manifest.json"),
                    manifest.replace("\"driver_version\" : \"580.159.04\"", "\"driver_version\" : \"570.86.15\""));
            String other = check(engine, view, "--readygate.node.driver-version=580.159.04");
            String named = "driver_version: the snapshot was taken on 570.86.15, this engine runs on 580.159.04";
            assertThat(other)
                    .as(other)
                    .contains("snapshot manifest  NOT trusted: " + named)
                    .contains("  - the snapshot manifest does not match this engine (" + named + ")")
                    .contains("the snapshot manifest's oracle was not used (" + named + ")")
                    .doesNotContain("(snapshot_manifest)");
        }
    }
}
