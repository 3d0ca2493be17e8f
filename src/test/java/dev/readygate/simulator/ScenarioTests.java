package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/** Scenario files: parsing, errors that name the step, and a scenario driving a real simulator. */
class ScenarioTests {

    @TempDir
    Path workDir;

    @Test
    void demoScenarioParsesAndVisitsEveryRestartPath() {
        Scenario demo = Scenario.load("classpath:simulator/demo.yaml");
        assertThat(demo.name()).isEqualTo("demo");
        assertThat(demo.repeat()).isTrue();
        assertThat(demo.steps().stream()
                        .map(Scenario.Step::action)
                        .filter(Scenario.Action.Restart.class::isInstance)
                        .map(action -> ((Scenario.Action.Restart) action).path())
                        .distinct())
                .containsExactlyInAnyOrder(
                        StartupPath.PRELOAD_HIT,
                        StartupPath.PRELOAD_FALLBACK,
                        StartupPath.SNAPSHOT_RESTORE,
                        StartupPath.COLD);
        assertThat(demo.steps()).anyMatch(step -> step.action() instanceof Scenario.Action.Crash);
        assertThat(demo.steps())
                .anyMatch(step -> step.action() instanceof Scenario.Action.Daemon daemon
                        && "qwen3-0.6b-finetune-step2000".equals(daemon.checkpoint()));
        assertThat(demo.steps()).anyMatch(step -> step.action() instanceof Scenario.Action.Switch);
        assertThat(demo.steps()).allMatch(step -> step.note() != null);
        // The crash comes with users' requests in flight: the work it loses is not nothing.
        List<Scenario.Action> actions =
                demo.steps().stream().map(Scenario.Step::action).toList();
        int crash = actions.indexOf(new Scenario.Action.Crash());
        assertThat(actions.subList(0, crash)).contains(new Scenario.Action.Traffic(3));
        assertThat(actions.subList(0, crash).lastIndexOf(new Scenario.Action.Traffic(3)))
                .isGreaterThan(actions.subList(0, crash).lastIndexOf(new Scenario.Action.Traffic(0)));
    }

    @Test
    void parseReadsEveryAction() {
        Object yaml = new Yaml().load("""
                steps:
                  - restart: snapshot-restore
                  - after: 1500ms
                    fault: hang
                    scope: all
                  - fault: hang
                    enabled: false
                  - clear-faults: true
                  - crash: true
                  - stop: true
                  - daemon: start
                    checkpoint: a
                    layout: b
                  - daemon: stop
                  - log: rotate
                  - traffic: 2
                  - note: just a note
                """);
        Scenario scenario = Scenario.parse(yaml, "inline");
        assertThat(scenario.name()).isEqualTo("inline");
        assertThat(scenario.repeat()).isFalse();
        assertThat(scenario.steps())
                .extracting(Scenario.Step::action)
                .containsExactly(
                        new Scenario.Action.Restart(StartupPath.SNAPSHOT_RESTORE),
                        new Scenario.Action.SetFault(Fault.HANG, true, FaultSet.Scope.ALL),
                        new Scenario.Action.SetFault(Fault.HANG, false, FaultSet.Scope.INFERENCE),
                        new Scenario.Action.ClearFaults(),
                        new Scenario.Action.Crash(),
                        new Scenario.Action.Stop(),
                        new Scenario.Action.Daemon(true, "a", "b"),
                        new Scenario.Action.Daemon(false, null, null),
                        new Scenario.Action.Log(true),
                        new Scenario.Action.Traffic(2),
                        new Scenario.Action.Note());
        assertThat(scenario.steps().get(1).after()).isEqualTo(Duration.ofMillis(1500));
        assertThat(scenario.steps().getFirst().after()).isZero();
    }

    @Test
    void parseWhenAStepIsWrongNamesTheStep() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scenario.parse(
                        Map.of("steps", List.of(Map.of("restart", "cold"), Map.of("fault", "melt"))), "f.yaml"))
                .withMessage("scenario f.yaml step 2: unknown fault 'melt' (expected one of [hang, stall-stream, "
                        + "slow, error-5xx, busy-429, malformed-json, truncated-sse, reset, wrong-weights, "
                        + "truncate-prompt, kv-too-small, generation-fails, engine-dead, crash-loop, startup-failure, "
                        + "config-error, wake-corrupts])");
        assertThatIllegalArgumentException()
                .isThrownBy(() ->
                        Scenario.parse(Map.of("steps", List.of(Map.of("restart", "cold", "crash", true))), "f.yaml"))
                .withMessageStartingWith("scenario f.yaml step 1: needs exactly one of");
        assertThatIllegalArgumentException()
                .isThrownBy(() ->
                        Scenario.parse(Map.of("steps", List.of(Map.of("after", "soon", "crash", true))), "f.yaml"))
                .withMessage("scenario f.yaml step 1: 'after' is not a duration: soon");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scenario.parse(Map.of("steps", List.of()), "f.yaml"))
                .withMessage("scenario f.yaml: 'steps' must be a non-empty list");
    }

    @Test
    void missingScenarioFileFailsNamingTheKey() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scenario.load(workDir.resolve("nope.yaml").toString()))
                .withMessageStartingWith("readygate.simulator.scenario: cannot read " + workDir.resolve("nope.yaml"))
                .withMessageContaining("the demo's own is classpath:simulator/demo.yaml");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scenario.load("classpath:simulator/nope.yaml"))
                .withMessage("readygate.simulator.scenario: no simulator/nope.yaml on the class path"
                        + " (was classpath:simulator/nope.yaml)");
    }

    @Test
    void aScenarioIsReadFromTheJarOrFromAFileWithOrWithoutFilePrefix() throws Exception {
        Path file = Files.writeString(workDir.resolve("mine.yaml"), """
                name: mine
                steps:
                  - after: 2s
                    crash: true
                """);
        assertThat(Scenario.load(file.toString()).name()).isEqualTo("mine");
        assertThat(Scenario.load("file:" + file).name()).isEqualTo("mine");
        assertThat(Scenario.load("classpath:/simulator/demo.yaml").name()).isEqualTo("demo");
    }

    @Test
    void timeScaleMultipliesEveryStepsWait() {
        Scenario demo = Scenario.load("classpath:simulator/demo.yaml");
        Scenario fast = demo.scaled(0.25);
        assertThat(fast.steps()).hasSameSizeAs(demo.steps());
        for (int i = 0; i < demo.steps().size(); i++) {
            assertThat(fast.steps().get(i).after())
                    .isEqualTo(demo.steps().get(i).after().dividedBy(4));
            assertThat(fast.steps().get(i).action())
                    .isEqualTo(demo.steps().get(i).action());
        }
    }

    @Test
    void scenarioDrivesTheSimulatorStepByStep() throws Exception {
        Path file = workDir.resolve("scenario.yaml");
        Files.writeString(file, """
                name: short
                steps:
                  - after: 100ms
                    restart: preload-hit
                    note: cached restart
                  - after: 600ms
                    fault: generation-fails
                  - after: 100ms
                    daemon: stop
                """);
        try (RunningSimulator running =
                RunningSimulator.start(workDir.resolve("sim"), "scenario=" + file, "load-time=200ms")) {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> running.simulator.daemon().phase() == WeightCacheDaemon.Phase.STOPPED
                            && running.simulator.faults().has(Fault.GENERATION_FAILS));
            assertThat(running.simulator.engine().latestStart().requested()).isEqualTo(StartupPath.PRELOAD_HIT);
            EngineSimulator.ScenarioProgress progress = running.simulator.scenarioProgress();
            assertThat(progress.name()).isEqualTo("short");
            assertThat(progress.step()).isEqualTo(3);
            assertThat(progress.steps()).isEqualTo(3);
        }
    }
}
