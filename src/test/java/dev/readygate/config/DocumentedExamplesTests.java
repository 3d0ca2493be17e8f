package dev.readygate.config;

import static dev.readygate.config.SettingsStart.settings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.DocumentedExamples.Kind;
import dev.readygate.config.SettingsStart.Outcome.Started;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * Every configuration example the project shows starts readygate's configuration exactly as written: the YAML
 * blocks of README.md and docs/*.md ({@link DocumentedExamples}; chart values and scenarios are bound by
 * {@code ChartExamplesTests} and {@code ScenarioTests}), their command lines, {@code config/application.yaml} as it
 * is and with its commented example uncommented, the packaged {@code application*.yaml}, and the defaults of the
 * settings table in docs/readiness.md.
 */
class DocumentedExamplesTests {

    @TempDir
    Path dir;

    @Test
    void everyYamlBlockOfTheDocsIsAnExampleOfAKindTheTestsBind() {
        // yamlExamples() fails on a marker it does not understand; every kind is bound by one of the tests.
        assertThat(DocumentedExamples.yamlExamples())
                .extracting(DocumentedExamples.YamlExample::kind)
                .contains(Kind.CHART_VALUES, Kind.SIMULATOR_SCENARIO);
    }

    @TestFactory
    Stream<DynamicTest> everyApplicationYamlBlockOfTheDocsBinds() {
        return DocumentedExamples.yamlExamples().stream()
                .filter(example -> example.kind() == Kind.APPLICATION || example.kind() == Kind.FRAGMENT)
                .map(example -> DynamicTest.dynamicTest(
                        example.toString(),
                        () -> settings()
                                .yaml(dir, example.asApplicationYaml())
                                .start()
                                .started()));
    }

    @TestFactory
    Stream<DynamicTest> everyCommandLineOfTheDocsBinds() {
        List<DocumentedExamples.CommandLine> commands = DocumentedExamples.commandLines();
        assertThat(commands)
                .anySatisfy(command -> assertThat(command.settings())
                        .containsExactly("--readygate.engine.base-url=http://127.0.0.1:8000"))
                .anySatisfy(command -> assertThat(command.simulator()).isTrue());
        return commands.stream()
                .map(command -> DynamicTest.dynamicTest(command.toString(), () -> {
                    SettingsStart start = settings().args(command.settings().toArray(String[]::new));
                    // A sidecar command must name its engine itself; the simulator's needs none.
                    (command.simulator() ? start : start.withoutDefaultEngine())
                            .start()
                            .started();
                }));
    }

    @Test
    void configApplicationYamlBindsWithTheReadmesCommand() {
        // Run from the repository root, `java -jar target/readygate.jar --readygate.engine.base-url=...` reads it.
        Started started = settings()
                .location("file:config/application.yaml")
                .args("--readygate.engine.base-url=http://127.0.0.1:8000")
                .withoutDefaultEngine()
                .start()
                .started();
        assertThat(started.readygate().engine().baseUrl()).isEqualTo(URI.create("http://127.0.0.1:8000"));
    }

    @Test
    void configApplicationYamlsCommentedExampleBindsUncommented() throws IOException {
        String example = uncommented(Files.readAllLines(Path.of("config/application.yaml")));
        assertThat(example).startsWith("readygate:\n");
        ReadygateProperties readygate = settings()
                .yaml(dir, example)
                .withoutDefaultEngine()
                .start()
                .started()
                .readygate();
        assertThat(readygate.engine().baseUrl()).isEqualTo(URI.create("http://127.0.0.1:8000"));
        assertThat(readygate.stateDir()).isEqualTo(Path.of("/var/lib/readygate"));
        assertThat(readygate.gpu().uuids()).containsExactly("GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da");
        assertThat(readygate.memory().leakCycles()).isEqualTo(3);
    }

    /** The commented {@code # readygate:} block of a YAML file, as a user uncomments it. */
    static String uncommented(List<String> lines) {
        StringBuilder yaml = new StringBuilder();
        boolean inside = false;
        for (String line : lines) {
            if (line.equals("# readygate:")) {
                inside = true;
            } else if (inside && !line.startsWith("#   ")) {
                break;
            }
            if (inside) {
                yaml.append(line.substring(2)).append('\n');
            }
        }
        return yaml.toString();
    }

    @Test
    void packagedApplicationYamlBinds() {
        settings().location("classpath:/application.yaml").start().started();
    }

    @Test
    void packagedDemoProfileBindsWithoutAnythingElse() {
        Started demo = settings()
                .location("classpath:/application.yaml")
                .profiles("demo")
                .withoutDefaultEngine()
                .start()
                .started();
        assertThat(demo.readygate().engine().baseUrl()).isEqualTo(URI.create("http://127.0.0.1:18000"));
        assertThat(demo.readygate().gpu().interval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(demo.simulator().port()).isEqualTo(18000);
        assertThat(demo.simulator().timing().warmupRequests()).isEqualTo(2);
    }

    private static final Pattern TABLE_ROW =
            Pattern.compile("^\\| `(readygate\\.[^`]+)`[^|]*\\| *(`([^`]*)`)? *[^|]*\\|");

    @TestFactory
    Stream<DynamicTest> settingsTableOfTheReadinessDocNamesKnownSettingsWithTheirDefaults() throws IOException {
        SettingsMetadata metadata = SettingsMetadata.load(getClass().getClassLoader());
        List<DynamicTest> rows = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("docs/readiness.md"))) {
            Matcher row = TABLE_ROW.matcher(line);
            if (!row.find()) {
                continue;
            }
            String key = row.group(1).replace(".<path>", "");
            String documentedDefault = row.group(3);
            rows.add(DynamicTest.dynamicTest(key, () -> {
                assertThat(metadata.isKnown(ConfigurationPropertyName.of(key)))
                        .as("%s is a setting", key)
                        .isTrue();
                if (documentedDefault != null) {
                    assertThat(metadata.setting(ConfigurationPropertyName.of(key)))
                            .hasValueSatisfying(setting -> assertThat(setting.defaultValue())
                                    .as("default of %s", key)
                                    .isEqualToIgnoringCase(documentedDefault));
                    settings()
                            .args("--" + key + "=" + documentedDefault)
                            .start()
                            .started();
                }
            }));
        }
        assertThat(rows).hasSizeGreaterThan(30);
        return rows.stream();
    }
}
