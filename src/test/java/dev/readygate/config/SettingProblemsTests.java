package dev.readygate.config;

import static dev.readygate.config.SettingsStart.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

import dev.readygate.ReadygateApplication;
import dev.readygate.config.SettingsStart.Outcome.Failed;
import dev.readygate.simulator.SimulatorConfiguration;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A start with a setting readygate does not know, or a value it refuses, stops with a report that names the key,
 * echoes the value as the user wrote it and where, and carries no framework types.
 */
@ExtendWith(OutputCaptureExtension.class)
class SettingProblemsTests {

    @TempDir
    Path dir;

    private static void assertClean(Failed failed) {
        assertThat(failed.description())
                .doesNotContain("org.springframework", "java.lang", "dev.readygate.", "@", "Failed to bind");
    }

    @Test
    void unknownSettingOnTheCommandLineStopsTheStartNamingTheNearestKnownOne() {
        Failed failed =
                settings().args("--readygate.probe.prompt-tokens=-5").start().failed();
        assertThat(failed.description())
                .startsWith("Unknown setting readygate.probe.prompt-tokens; did you mean"
                        + " readygate.probe.representative.prompt-tokens?\n")
                .contains("on the command line");
        assertClean(failed);
    }

    @Test
    void unknownSettingsInAFileAreAllNamedWithTheirLines() {
        Failed failed = settings().yaml(dir, """
                        readygate:
                          engine:
                            base-uri: http://127.0.0.1:8000
                          probe:
                            heavy-intervall: 2m
                            canary:
                              expected-tokens: [12095]
                          simulator:
                            prot: 19600
                        """).withoutDefaultEngine().start().failed();
        assertThat(failed.description())
                .contains("Unknown setting readygate.engine.base-uri; did you mean readygate.engine.base-url?")
                .contains("Unknown setting readygate.probe.heavy-intervall; did you mean"
                        + " readygate.probe.heavy-interval?")
                .contains("Unknown setting readygate.probe.canary.expected-tokens; did you mean"
                        + " readygate.probe.canary.expected-token-ids?")
                .contains("Unknown setting readygate.simulator.prot; did you mean readygate.simulator.port?")
                .containsPattern("application-[0-9]+\\.yaml, line 3\n")
                .containsPattern("application-[0-9]+\\.yaml, line 5\n");
        assertClean(failed);
    }

    @Test
    void unknownSettingStopsTheStandaloneSimulatorToo() {
        // As `java -jar readygate.jar simulate ...` starts it (SimulatorLauncher).
        assertThatException()
                .isThrownBy(() -> new SpringApplicationBuilder(SimulatorConfiguration.class)
                        .web(WebApplicationType.NONE)
                        .bannerMode(Banner.Mode.OFF)
                        .properties("spring.config.name=simulator")
                        .run("--readygate.simulator.prot=19600")
                        .close())
                .isInstanceOf(InvalidSettingsException.class)
                .withMessage("Unknown setting readygate.simulator.prot; did you mean readygate.simulator.port?\n"
                        + "    set on the command line");
    }

    @Test
    void unknownSettingsValueIsNeverEchoed() {
        Failed failed = settings()
                .args("--readygate.engine.api-key=sk-very-secret")
                .start()
                .failed();
        assertThat(failed.description())
                .startsWith("Unknown setting readygate.engine.api-key; did you mean readygate.engine.api-key-env?")
                .doesNotContain("sk-very-secret");
    }

    @Test
    void knownSettingsInEveryFormStartWithoutComplaint(CapturedOutput output) {
        settings()
                .yaml(dir, """
                        readygate:
                          probe:
                            representative:
                              promptTokens: 1024
                            canary:
                              expected-token-ids:
                                - 12095
                          gpu:
                            uuids: [GPU-a, GPU-b]
                          restart:
                            readiness-objectives:
                              preload-hit: 2m
                              "[snapshot_restore]": 1m
                          simulator:
                            model:
                              max-model-len: 8192
                        """)
                .args(
                        "--readygate.probe.canary.expected_text= Paris",
                        "--readygate.restart.readiness-objectives.cold=15m",
                        "--spring.mian.banner-mode=off",
                        "--server.prot=1",
                        "--management.endpoint.helth.enabled=true",
                        "--logging.level.dev.readygate=info")
                .env("READYGATE_PROBE_REPRESENTATIVE_OUTPUTTOKENS", "32")
                .env("READYGATE_PROBE_CANARY_EXPECTEDTOKENIDS_0_", "12095")
                .env("READYGATE_RESTART_READINESSOBJECTIVES_UNKNOWN", "15m")
                .env("READYGATE_SIMULATOR_ADMINPORT", "19601")
                .env("READYGATE_NODE_NAME", "gpu-node-7")
                // The legacy form (dashes as underscores), as the Dockerfile sets it.
                .env("READYGATE_STATE_DIR", "/var/lib/readygate")
                .env("READYGATE_PROBE_REPRESENTATIVE_MAX_TIME_TO_FIRST_TOKEN", "5s")
                .env("READYGATE_PROBE_CANARY_EXPECTED_TOKEN_IDS", "12095")
                .start()
                .started();
        assertThat(output).doesNotContain("Unknown setting");
    }

    @Test
    void unknownEnvironmentVariablesAreWarnedAboutNotFatal(CapturedOutput output) {
        // The environment is shared: Kubernetes adds READYGATE_SERVICE_HOST, READYGATE_PORT, ... for a Service named
        // readygate in the namespace, and scripts export their own READYGATE_* variables.
        settings()
                .env("READYGATE_PROBE_PROMPTTOKENS", "2048")
                .env("READYGATE_SERVICE_HOST", "10.0.0.1")
                .env("READYGATE_PORT", "tcp://10.0.0.1:8090")
                .env("READYGATE_PORT_8090_TCP_ADDR", "10.0.0.1")
                // Binds to nothing: a map's elements are read from the standard form only.
                .env("READYGATE_RESTART_READINESS_OBJECTIVES_PRELOAD_FALLBACK", "15m")
                .start()
                .started();
        assertThat(output)
                .contains("Unknown setting readygate.probe.prompttokens (environment variable"
                        + " READYGATE_PROBE_PROMPTTOKENS); did you mean readygate.probe.representative.prompt-tokens?")
                .contains("environment variable READYGATE_SERVICE_HOST")
                .contains(
                        "Unknown setting readygate.restart.readiness.objectives.preload.fallback (environment variable"
                                + " READYGATE_RESTART_READINESS_OBJECTIVES_PRELOAD_FALLBACK); did you mean"
                                + " readygate.restart.readiness-objectives?")
                .doesNotContain("2048");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "--readygate.probe.representative.prompt-tokens=-5|readygate.probe.representative.prompt-tokens: a token"
                        + " count must be at least 1 (was -5)",
                "--readygate.probe.representative.prompt-tokens=150%|readygate.probe.representative.prompt-tokens: a"
                        + " fraction of max_model_len must be between 0 and 1 (was 150%)",
                "--readygate.probe.representative.prompt-tokens=lots|readygate.probe.representative.prompt-tokens: not a"
                        + " token count or a fraction of max_model_len (was lots)",
                "--readygate.memory.tolerance=-64MB|readygate.memory.tolerance: must be positive (was -64MB)",
                "--readygate.probe.heavy-timeout=6m|readygate.probe.heavy-timeout: must not be longer than its interval"
                        + " readygate.probe.heavy-interval (was 6m; readygate.probe.heavy-interval is 5m, the default)",
                "--readygate.probe.heavy-interval=soon|readygate.probe.heavy-interval: not a duration: write a whole"
                        + " number and a unit, e.g. 500ms, 30s, 5m (was soon)",
                "--readygate.probe.heavy-interval=1.5s|readygate.probe.heavy-interval: not a duration: write a whole"
                        + " number and a unit, e.g. 500ms, 30s, 5m (was 1.5s)",
                "--readygate.engine.max-body-size=big|readygate.engine.max-body-size: not a size: write a whole number"
                        + " and a unit, e.g. 512KB, 64MB, 1GB (was big)",
                "--readygate.probe.failure-threshold=three|readygate.probe.failure-threshold: not a whole number (was"
                        + " three)",
                "--readygate.probe.failure-threshold=0|readygate.probe.failure-threshold: must be at least 1 (was 0)",
                "--readygate.probe.canary.logprob-tolerance=tiny|readygate.probe.canary.logprob-tolerance: not a number"
                        + " (was tiny)",
                "--readygate.probe.canary.enabled=maybe|readygate.probe.canary.enabled: not true or false (was maybe)",
                "--readygate.probe.canary.expected-token-ids=12095,x|readygate.probe.canary.expected-token-ids: not a"
                        + " list of whole numbers (was 12095,x)",
                "--readygate.simulator.startup=warm|readygate.simulator.startup: must be one of cold, preload-hit,"
                        + " preload-fallback, snapshot-restore (was warm)",
                "--readygate.simulator.port=70000|readygate.simulator.port: must be a TCP port between 1 and 65535 (was"
                        + " 70000)",
                "--readygate.simulator.timing.decode-per-token=-8ms|readygate.simulator.timing.decode-per-token: must"
                        + " not be negative (was -8ms)",
                "--readygate.memory.window=2|readygate.memory.window: must be at least readygate.memory.leak-cycles"
                        + " (was 2; readygate.memory.leak-cycles is 3, the default)",
                "--readygate.restart.readiness-objectives.warm=1m|readygate.restart.readiness-objectives.warm: is not a"
                        + " restart path: use cold, preload-hit, preload-fallback, snapshot-restore, wake or unknown",
                "--readygate.restart.readiness-objectives.cold=0s|readygate.restart.readiness-objectives.cold: must be"
                        + " positive (was 0s)",
                "--readygate.engine.base-url=localhost:8000|readygate.engine.base-url: must be an http(s) URL with a"
                        + " host, e.g. http://127.0.0.1:8000 (was localhost:8000)",
                "--readygate.probe.ready-interval=500|readygate.engine.request-timeout: must not be longer than its"
                        + " interval readygate.probe.ready-interval (was 800ms, the default;"
                        + " readygate.probe.ready-interval is 500, read as milliseconds)",
                "--readygate.gpu.uuids[1]=GPU-b|readygate.gpu.uuids: a list's elements must be numbered from [0] without"
                        + " gaps, and all come from one place (was readygate.gpu.uuids[1])"
            })
    void rejectedValueIsNamedByItsKeyAndEchoedAsWritten(String argument, String message) {
        Failed failed = settings().args(argument).start().failed();
        assertThat(failed.description()).startsWith(message + "\n");
        assertClean(failed);
    }

    @Test
    void rejectedValueFromYamlIsEchoedWithItsFileAndLine() {
        Failed failed = settings()
                .yaml(dir, "readygate:\n  probe:\n    representative:\n      prompt-tokens: -5\n")
                .start()
                .failed();
        assertThat(failed.description())
                .startsWith("readygate.probe.representative.prompt-tokens: a token count must be at least 1 (was -5)\n")
                .containsPattern("application-[0-9]+\\.yaml, line 4$");
        assertClean(failed);
    }

    @Test
    void rejectedValueFromTheEnvironmentNamesTheVariable() {
        Failed failed =
                settings().env("READYGATE_MEMORY_TOLERANCE", "-64MB").start().failed();
        assertThat(failed.description())
                .isEqualTo("readygate.memory.tolerance: must be positive (was -64MB)\n"
                        + "    set by the environment variable READYGATE_MEMORY_TOLERANCE");
        assertClean(failed);
    }

    @Test
    void missingEngineNamesTheKey() {
        Failed failed = settings().withoutDefaultEngine().start().failed();
        assertThat(failed.description())
                .startsWith("readygate.engine.base-url: is not set: point it at the vLLM engine");
        assertClean(failed);
    }

    @Test
    void readygatesOwnStartPrintsTheCleanMessageAndNoFrameworkWarning(CapturedOutput output) {
        assertThatException()
                .isThrownBy(() -> SpringApplication.run(
                        ReadygateApplication.class,
                        "--server.port=0",
                        "--readygate.engine.base-url=http://127.0.0.1:8000",
                        "--readygate.memory.tolerance=-64MB"));
        assertThat(output)
                .contains("Description:\n\nreadygate.memory.tolerance: must be positive (was -64MB)\n"
                        + "    set on the command line\n")
                .doesNotContain("UnsatisfiedDependencyException", "Could not bind properties", "-67108864B");
    }

    @Test
    void simulatorSettingsAreKnownToReadygateOutsideTheDemoProfileToo() {
        // One configuration file may serve both; the simulator's records are not bound here, its keys are known.
        SpringApplication.run(
                        ReadygateApplication.class,
                        "--server.port=0",
                        "--readygate.engine.base-url=http://127.0.0.1:1",
                        "--readygate.state-dir=" + dir.resolve("state"),
                        "--readygate.simulator.port=19600")
                .close();
    }

    @Test
    void startupFailureReportIsTheCleanMessageAlone(CapturedOutput output) {
        try {
            new SpringApplicationBuilder(SettingsStart.Settings.class)
                    .web(WebApplicationType.NONE)
                    .bannerMode(Banner.Mode.OFF)
                    .run(
                            "--spring.config.location=optional:classpath:/no-such-file.yaml",
                            "--readygate.engine.base-url=http://127.0.0.1:8000",
                            "--readygate.probe.representative.prompt-tokens=-5")
                    .close();
        } catch (RuntimeException expected) {
            // reported below
        }
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("Description:\n\nreadygate.probe.representative.prompt-tokens: a token count must be at"
                        + " least 1 (was -5)\n    set on the command line\n")
                .doesNotContain("org.springframework.boot.context.properties.bind", "TokenBudget]", "@org");
    }
}
