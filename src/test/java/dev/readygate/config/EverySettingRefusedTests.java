package dev.readygate.config;

import static dev.readygate.config.SettingsStart.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.readygate.ReadygateApplication;
import dev.readygate.config.SettingsStart.Outcome;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Every {@code readygate.*} setting, walked from the settings metadata (so a new one cannot be forgotten), started
 * with a value readygate must refuse: the start stops with a refusal that names the key and the value as written
 * (never a secret's value) and prints no stack trace. A value that binds but is refused when readygate starts to use
 * it (a key file that is not there) is started as the jar starts, and its printed output is read. A setting that takes
 * any value says why in {@link #ANY_VALUE} instead.
 */
@ExtendWith(OutputCaptureExtension.class)
class EverySettingRefusedTests {

    /**
     * An invalid value, typed on the command line as {@code --<argument>}, and how the refusal shows it (null: there
     * is nothing to show).
     */
    record Invalid(String argument, @Nullable String shown) {

        static Invalid value(String key, String value) {
            return new Invalid(key + "=" + value, "was " + value);
        }
    }

    /** A file and a directory that exist where tests run (the project's root). */
    static final String A_FILE = "pom.xml";

    static final String A_DIRECTORY = "./src";

    static final Map<String, Invalid> INVALID = Map.ofEntries(
            invalid("readygate.check.wait-for-engine", "-1s"),
            invalid("readygate.gateway.between-events-timeout", "0s"),
            invalid("readygate.gateway.connect-timeout", "0s"),
            invalid("readygate.gateway.drain-timeout", "0s"),
            invalid("readygate.gateway.enabled", "maybe"),
            invalid("readygate.gateway.first-byte-timeout", "-1s"),
            invalid("readygate.gateway.hold", "sometimes"),
            invalid("readygate.gateway.max-connections", "0"),
            invalid("readygate.gateway.max-in-flight", "0"),
            invalid("readygate.gateway.max-queued", "-1"),
            invalid("readygate.gateway.max-request-size", "0"),
            invalid("readygate.gateway.max-wait", "0s"),
            invalid("readygate.gateway.port", "65536"),
            invalid("readygate.gateway.retry-before-first-byte", "twice"),
            invalid("readygate.engine.api-key-env", "sk-proj-Ab12Cd34Ef56"),
            invalid("readygate.engine.api-key-file", "/nonexistent/key"),
            invalid("readygate.engine.base-url", "localhost:8000"),
            invalid("readygate.engine.connect-timeout", "0s"),
            invalid("readygate.engine.dialect", "vlm"),
            invalid("readygate.engine.max-body-size", "10B"),
            invalid("readygate.engine.max-model-len", "0"),
            invalid("readygate.engine.request-timeout", "0s"),
            invalid("readygate.evidence.daemon-health-timeout", "0s"),
            invalid("readygate.evidence.daemon-health-url", "localhost:8001/health"),
            invalid("readygate.evidence.daemon-log", A_DIRECTORY),
            invalid("readygate.evidence.daemon-socket-dir", A_FILE),
            invalid("readygate.evidence.engine-container-file", A_DIRECTORY),
            invalid("readygate.evidence.engine-log", A_DIRECTORY),
            invalid("readygate.evidence.log-poll-interval", "0s"),
            invalid("readygate.evidence.log-time-zone", "Mars/Olympus_Mons"),
            invalid("readygate.evidence.snapshot-dir", A_FILE),
            invalid("readygate.gpu.dcgm-url", "localhost:9400"),
            invalid("readygate.gpu.interval", "0s"),
            invalid("readygate.gpu.nvidia-smi", A_DIRECTORY),
            invalid("readygate.gpu.nvidia-smi-format", "json"),
            invalid("readygate.gpu.timeout", "0s"),
            invalid("readygate.memory.after-stop-delay", "-1s"),
            invalid("readygate.memory.daemon-overhead", "-1GB"),
            invalid("readygate.memory.drift-threshold", "0B"),
            invalid("readygate.memory.kv-shrink-fraction", "1.5"),
            invalid("readygate.memory.leak-cycles", "1"),
            invalid("readygate.memory.tolerance", "0B"),
            invalid("readygate.memory.window", "2"),
            invalid("readygate.node.boot-id-file", A_DIRECTORY),
            invalid("readygate.probe.canary.enabled", "maybe"),
            invalid("readygate.probe.canary.expected-logprob", "likely"),
            invalid("readygate.probe.canary.expected-token-ids", "12095,x"),
            invalid("readygate.probe.canary.learn-baseline", "maybe"),
            invalid("readygate.probe.canary.learn-when-start-path-unknown", "maybe"),
            invalid("readygate.probe.canary.logprob-tolerance", "-0.1"),
            invalid("readygate.probe.canary.logprob-tolerance-under-load", "0.001"),
            invalid("readygate.probe.canary.max-tokens", "0"),
            // A blank prompt: there is nothing to show of it.
            Map.entry("readygate.probe.canary.prompt", new Invalid("readygate.probe.canary.prompt= ", null)),
            invalid("readygate.probe.canary.seed", "x"),
            invalid("readygate.probe.down-interval", "0s"),
            invalid("readygate.probe.failure-threshold", "0"),
            invalid("readygate.probe.generation.canary-every", "-1"),
            invalid("readygate.probe.generation.enabled", "maybe"),
            invalid("readygate.probe.generation.interval", "0s"),
            invalid("readygate.probe.generation.output-tokens", "0"),
            invalid("readygate.probe.generation.timeout", "0s"),
            invalid("readygate.probe.health-interval", "0s"),
            invalid("readygate.probe.heavy-interval", "0s"),
            invalid("readygate.probe.heavy-retry-interval", "0s"),
            invalid("readygate.probe.heavy-timeout", "0s"),
            invalid("readygate.probe.max-tokens-per-minute", "0"),
            invalid("readygate.probe.not-ready-interval", "0s"),
            invalid("readygate.probe.ready-interval", "0s"),
            invalid("readygate.probe.representative.enabled", "maybe"),
            invalid("readygate.probe.representative.max-inter-token-latency", "0s"),
            invalid("readygate.probe.representative.max-time-to-first-token", "0s"),
            invalid("readygate.probe.representative.output-tokens", "0"),
            invalid("readygate.probe.representative.prompt-token-tolerance", "-1"),
            invalid("readygate.probe.representative.prompt-tokens", "-5"),
            invalid("readygate.probe.success-threshold", "0"),
            invalid("readygate.probe.suspend-after-failures", "0"),
            invalid("readygate.probe.suspension", "0s"),
            invalid("readygate.restart.history-files", "0"),
            invalid("readygate.restart.history-max-size", "0"),
            invalid("readygate.restart.loop-hold", "-1s"),
            invalid("readygate.restart.loop-hold-max", "30s"),
            invalid("readygate.restart.loop-starts", "1"),
            invalid("readygate.restart.loop-window", "0s"),
            Map.entry(
                    "readygate.restart.readiness-objectives",
                    // The map's key is the value refused: the refusal names it.
                    new Invalid(
                            "readygate.restart.readiness-objectives.warm=1m",
                            "readygate.restart.readiness-objectives.warm: is not a restart path")),
            invalid("readygate.server.idle-timeout", "0s"),
            invalid("readygate.server.max-connections", "1"),
            invalid("readygate.server.max-heavy-requests", "0"),
            invalid("readygate.server.scheduler-slice", "50us"),
            invalid("readygate.state-dir", A_FILE));

    /** Settings that take any value, and why. */
    static final Map<String, String> ANY_VALUE = Map.of(
            "readygate.node.name", "a label recorded with each start, as the operator writes it",
            "readygate.node.gpu-name", "a label recorded with each start and part of a baseline's key",
            "readygate.node.gpu-uuid", "a label, used when no GPU reading gives one",
            "readygate.node.driver-version", "a label, used when no GPU reading gives one",
            "readygate.node.pod-uid", "a label recorded with each start",
            "readygate.probe.canary.expected-text", "any text is an answer a model may give",
            "readygate.gpu.uuids", "GPUs no reading lists are shown as such in /status, not refused");

    /** Settings whose value is or may be a secret: refused without showing it. */
    static final Set<String> SECRET = Set.of("readygate.engine.api-key-env");

    private static Map.Entry<String, Invalid> invalid(String key, String value) {
        return Map.entry(key, Invalid.value(key, value));
    }

    /**
     * The simulator's settings (a test tool's) get a value their type refuses; its text and path settings take any
     * value.
     */
    static @Nullable Invalid simulatorInvalid(SettingsMetadata.Setting setting) {
        String type = setting.type();
        if (type.equals("java.lang.Integer") || type.equals("java.lang.Long") || type.equals("java.lang.Double")) {
            return Invalid.value(setting.key(), "x");
        }
        if (type.equals("java.lang.Boolean")) {
            return Invalid.value(setting.key(), "maybe");
        }
        if (type.equals("java.time.Duration")) {
            return Invalid.value(setting.key(), "soon");
        }
        if (type.startsWith("dev.readygate.")) {
            return Invalid.value(setting.key(), "warm");
        }
        return null;
    }

    static Stream<Arguments> simulatorInvalidValues() {
        return SettingsMetadata.load(null).all().stream()
                .filter(setting -> setting.key().startsWith("readygate.simulator."))
                .filter(setting -> simulatorInvalid(setting) != null)
                .map(setting -> Arguments.of(setting.key(), simulatorInvalid(setting)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("simulatorInvalidValues")
    void simulatorValueOfTheWrongTypeIsRefusedNamingKeyAndValue(String key, Invalid invalid) {
        Outcome.Failed failed =
                settings().args("--" + invalid.argument()).start().failed();
        assertThat(causes(failed.failure())).anyMatch(InvalidSettingsException.class::isInstance);
        assertThat(failed.description())
                .startsWith(key + ": ")
                .contains(java.util.Objects.requireNonNull(invalid.shown()));
    }

    /** readygate's own settings (the simulator's: {@link #simulatorInvalid}). */
    static List<String> readygateKeys() {
        return SettingsMetadata.load(null).all().stream()
                .map(SettingsMetadata.Setting::key)
                .filter(key -> !key.startsWith("readygate.simulator."))
                .toList();
    }

    @Test
    void everySettingHasAnInvalidValueOrSaysWhyItTakesAny() {
        Set<String> missing = new TreeSet<>(readygateKeys());
        missing.removeAll(INVALID.keySet());
        missing.removeAll(ANY_VALUE.keySet());
        assertThat(missing)
                .as("settings without a value to refuse here: add one to INVALID (or say in ANY_VALUE why it takes"
                        + " any)")
                .isEmpty();
        Set<String> unknown = new TreeSet<>(INVALID.keySet());
        unknown.addAll(ANY_VALUE.keySet());
        unknown.removeAll(readygateKeys());
        assertThat(unknown).as("entries for settings that are none").isEmpty();
    }

    static Stream<Arguments> invalidValues() {
        return readygateKeys().stream().filter(INVALID::containsKey).map(key -> Arguments.of(key, INVALID.get(key)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidValues")
    void invalidValueIsRefusedNamingKeyAndValueWithoutAStackTrace(
            String key, Invalid invalid, CapturedOutput output, @TempDir Path state) {
        String refused = invalid.argument().substring(0, invalid.argument().indexOf('='));
        String value = invalid.argument().substring(invalid.argument().indexOf('=') + 1);
        Outcome outcome = settings().args("--" + invalid.argument()).start();
        String report;
        if (outcome instanceof Outcome.Failed failed) {
            // Refused as the settings are bound: by readygate's failure analyzer, which prints no stack trace.
            assertThat(causes(failed.failure()))
                    .as("refused through InvalidSettingsException, not an exception of its own: "
                            + failed.description())
                    .anyMatch(InvalidSettingsException.class::isInstance);
            report = failed.description();
        } else {
            // It binds: it must be refused when readygate starts to use it, as the jar starts.
            report = startReadygate(invalid.argument(), state, output);
        }
        assertThat(report).as("the refusal names the key").contains(refused + ":");
        if (SECRET.contains(key)) {
            assertThat(report).as("a secret's value is never shown").doesNotContain(value.strip());
        } else if (invalid.shown() instanceof String shown) {
            assertThat(report).as("the refusal shows the value").contains(shown);
        }
    }

    /** Starts readygate as {@code java -jar} does; returns what it printed, asserted free of stack traces. */
    private static String startReadygate(String argument, Path state, CapturedOutput output) {
        try (ConfigurableApplicationContext started = SpringApplication.run(
                ReadygateApplication.class,
                "--server.port=0",
                "--readygate.engine.base-url=http://127.0.0.1:1",
                "--readygate.state-dir=" + state,
                "--" + argument)) {
            fail("readygate started with --" + argument + " (" + started.getId() + ")");
        } catch (RuntimeException expected) {
            // Reported by Spring Boot, read below.
        }
        String printed = output.getAll();
        assertThat(printed).contains("APPLICATION FAILED TO START");
        assertThat(printed)
                .as("no stack trace")
                .doesNotContain("Caused by:", "Exception:")
                .doesNotContainPattern("\n\\s+at [a-z]");
        return printed.substring(printed.indexOf("Description:"));
    }

    private static List<Throwable> causes(Throwable failure) {
        List<Throwable> causes = new ArrayList<>();
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            causes.add(cause);
        }
        return causes;
    }
}
