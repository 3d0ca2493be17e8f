package dev.readygate.config;

import static dev.readygate.config.SettingsStart.settings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.SettingsStart.Outcome.Started;
import dev.readygate.simulator.SimulatorProperties;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.util.unit.DataSize;

/**
 * Every {@code readygate.*} setting takes what a person writes: in YAML (where Spring Boot hands numbers over as
 * Integer and Double, and {@code off} as a Boolean), in properties, on the command line and in environment variables.
 */
class SettingFormsTests {

    @TempDir
    Path dir;

    private Started yaml(String yaml) {
        return settings().yaml(dir, yaml).start().started();
    }

    @ParameterizedTest(name = "prompt-tokens: {0}")
    @CsvSource(
            delimiter = '|',
            value = {
                // a YAML Integer, a YAML Double, a quoted string, percentages, a YAML Long
                "2048|2048",
                "0.25|1024",
                "'\"512\"'|512",
                "50%|2048",
                "'\"25 %\"'|1024",
                "1|1",
                "0.5|2048"
            })
    void promptTokensInYamlBindAsACountOrAFraction(String written, int tokensOf4096) {
        Started started = yaml("readygate:\n  probe:\n    representative:\n      prompt-tokens: " + written + "\n");
        assertThat(started.readygate().probe().representative().promptTokens().resolve(4096))
                .isEqualTo(tokensOf4096);
    }

    @Test
    void promptTokensBindFromTheCommandLineAndTheEnvironment() {
        assertThat(promptTokens(settings().args("--readygate.probe.representative.prompt-tokens=0.25")))
                .isEqualTo(new TokenBudget(null, 0.25));
        assertThat(promptTokens(settings().env("READYGATE_PROBE_REPRESENTATIVE_PROMPTTOKENS", "2048")))
                .isEqualTo(new TokenBudget(2048, null));
        assertThat(promptTokens(settings().env("READYGATE_PROBE_REPRESENTATIVE_PROMPTTOKENS", "50%")))
                .isEqualTo(new TokenBudget(null, 0.5));
    }

    private static TokenBudget promptTokens(SettingsStart start) {
        return start.start().started().readygate().probe().representative().promptTokens();
    }

    @Test
    void numbersInYamlBindToEveryNumericDurationAndSizeSetting() {
        Started started = yaml("""
                readygate:
                  engine:
                    max-body-size: 8388608      # a bare number of bytes
                    connect-timeout: 250        # a bare number of milliseconds
                  probe:
                    heavy-interval: 2m
                    failure-threshold: 5
                    max-tokens-per-minute: 50000
                    representative:
                      enabled: off
                      output-tokens: 128
                    canary:
                      seed: 42
                      logprob-tolerance: 0      # an Integer where a double is wanted
                      expected-logprob: -1
                      expected-token-ids: [12095, 13]
                      expected-text: 1999       # a number where text is wanted
                  memory:
                    kv-shrink-fraction: 0.05
                    drift-threshold: 128MB
                    leak-cycles: 4
                  restart:
                    history-max-size: 20MB
                    readiness-objectives:
                      cold: 15m
                      preload-hit: 90s
                  gpu:
                    uuids: [GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da]
                  node:
                    driver-version: 580.159.04
                """);
        ReadygateProperties readygate = started.readygate();
        assertThat(readygate.engine().maxBodySize()).isEqualTo(DataSize.ofMegabytes(8));
        assertThat(readygate.engine().connectTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(readygate.probe().heavyInterval()).isEqualTo(Duration.ofMinutes(2));
        assertThat(readygate.probe().failureThreshold()).isEqualTo(5);
        assertThat(readygate.probe().representative().enabled()).isFalse();
        assertThat(readygate.probe().representative().outputTokens()).isEqualTo(128);
        assertThat(readygate.probe().canary().seed()).isEqualTo(42L);
        assertThat(readygate.probe().canary().logprobTolerance()).isZero();
        assertThat(readygate.probe().canary().expectedLogprob()).isEqualTo(-1.0);
        assertThat(readygate.probe().canary().expectedTokenIds()).containsExactly(12095, 13);
        assertThat(readygate.probe().canary().expectedText()).isEqualTo("1999");
        assertThat(readygate.memory().kvShrinkFraction()).isEqualTo(0.05);
        assertThat(readygate.memory().driftThreshold()).isEqualTo(DataSize.ofMegabytes(128));
        assertThat(readygate.restart().readinessObjectives())
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("cold", Duration.ofMinutes(15), "preload_hit", Duration.ofSeconds(90)));
        assertThat(readygate.gpu().uuids()).containsExactly("GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da");
        assertThat(readygate.node().driverVersion()).isEqualTo("580.159.04");
    }

    @Test
    void textThatYamlReadsAsANumberKeepsItsDigitsOnlyQuoted() {
        // As docs/readiness.md says: YAML, not readygate, makes 550.90 the number 550.9.
        assertThat(yaml("readygate:\n  node:\n    driver-version: 550.90\n")
                        .readygate()
                        .node()
                        .driverVersion())
                .isEqualTo("550.9");
        assertThat(yaml("readygate:\n  node:\n    driver-version: \"550.90\"\n")
                        .readygate()
                        .node()
                        .driverVersion())
                .isEqualTo("550.90");
    }

    @Test
    void listsAndMapsBindFromTheCommandLineAndTheEnvironment() {
        Started fromArgs = settings()
                .args(
                        "--readygate.probe.canary.expected-token-ids=12095,13",
                        "--readygate.gpu.uuids[0]=GPU-a",
                        "--readygate.restart.readiness-objectives.snapshot-restore=1m")
                .start()
                .started();
        assertThat(fromArgs.readygate().probe().canary().expectedTokenIds()).containsExactly(12095, 13);
        assertThat(fromArgs.readygate().gpu().uuids()).containsExactly("GPU-a");
        assertThat(fromArgs.readygate().restart().readinessObjectives())
                .containsExactlyEntriesOf(Map.of("snapshot_restore", Duration.ofMinutes(1)));

        Started fromEnvironment = settings()
                .env("READYGATE_PROBE_CANARY_EXPECTEDTOKENIDS", "12095,13")
                .env("READYGATE_GPU_UUIDS_0_", "GPU-a")
                .env("READYGATE_GPU_UUIDS_1_", "GPU-b")
                .env("READYGATE_RESTART_READINESSOBJECTIVES_PRELOADHIT", "2m")
                .env("READYGATE_PROBE_REPRESENTATIVE_MAXTIMETOFIRSTTOKEN", "5s")
                .start()
                .started();
        assertThat(fromEnvironment.readygate().probe().canary().expectedTokenIds())
                .containsExactly(12095, 13);
        assertThat(fromEnvironment.readygate().gpu().uuids()).containsExactly("GPU-a", "GPU-b");
        assertThat(fromEnvironment.readygate().restart().readinessObjectives())
                .containsExactlyEntriesOf(Map.of("preload_hit", Duration.ofMinutes(2)));
        assertThat(fromEnvironment.readygate().probe().representative().maxTimeToFirstToken())
                .isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void environmentVariablesInTheLegacyFormBindToo() {
        ReadygateProperties readygate = settings()
                .env("READYGATE_STATE_DIR", "/var/lib/readygate")
                .env("READYGATE_PROBE_REPRESENTATIVE_PROMPT_TOKENS", "25%")
                .env("READYGATE_PROBE_CANARY_EXPECTED_TOKEN_IDS", "12095,13")
                .start()
                .started()
                .readygate();
        assertThat(readygate.stateDir()).isEqualTo(Path.of("/var/lib/readygate"));
        assertThat(readygate.probe().representative().promptTokens()).isEqualTo(new TokenBudget(null, 0.25));
        assertThat(readygate.probe().canary().expectedTokenIds()).containsExactly(12095, 13);
    }

    @Test
    void simulatorSettingsTakeYamlNumbersEnumsAndEnvironmentVariables() {
        SimulatorProperties simulator = settings()
                .yaml(dir, """
                        readygate:
                          simulator:
                            port: 19600
                            admin-port: 19601
                            startup: preload-hit
                            load-time: 1500          # milliseconds
                            error-shape: flat
                            timing:
                              batch-slowdown: 0      # an Integer where a double is wanted
                              prefill-per-token: 20us
                            faults:
                              slow-factor: 2
                              kv-too-small-behavior: stuck
                            preload:
                              mode: copy
                              socket-naming: gpu_uuid
                              health-port: 19602
                            memory:
                              leak-per-cycle-mib: 512
                            snapshot:
                              restore-log: NONE
                            model:
                              weights-gib: 1
                              revision: 1234567      # a number where text is wanted
                        """)
                .env("READYGATE_SIMULATOR_PID", "5000")
                .start()
                .started()
                .simulator();
        assertThat(simulator.port()).isEqualTo(19600);
        assertThat(simulator.startup()).isEqualTo(StartupPath.PRELOAD_HIT);
        assertThat(simulator.loadTime()).isEqualTo(Duration.ofMillis(1500));
        assertThat(simulator.errorShape()).isEqualTo(SimulatorProperties.ErrorShape.FLAT);
        assertThat(simulator.timing().batchSlowdown()).isZero();
        assertThat(simulator.faults().slowFactor()).isEqualTo(2.0);
        assertThat(simulator.faults().kvTooSmallBehavior())
                .isEqualTo(SimulatorProperties.Faults.KvTooSmallBehavior.STUCK);
        assertThat(simulator.preload().mode()).isEqualTo(SimulatorProperties.Preload.Mode.COPY);
        assertThat(simulator.preload().socketNaming()).isEqualTo(SimulatorProperties.Preload.SocketNaming.GPU_UUID);
        assertThat(simulator.memory().leakPerCycleMib()).isEqualTo(512L);
        assertThat(simulator.snapshot().restoreLog()).isEqualTo(SimulatorProperties.Snapshot.RestoreLog.NONE);
        assertThat(simulator.model().weightsGib()).isEqualTo(1.0);
        assertThat(simulator.model().revision()).isEqualTo("1234567");
        assertThat(simulator.pid()).isEqualTo(5000);
    }
}
