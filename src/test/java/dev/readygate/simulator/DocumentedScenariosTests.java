package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.DocumentedExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** Every scenario the project shows parses as written: the docs' scenario blocks and the files in the jar. */
class DocumentedScenariosTests {

    @TestFactory
    Stream<DynamicTest> everyScenarioBlockOfTheDocsParses() {
        List<DocumentedExamples.YamlExample> blocks =
                DocumentedExamples.yamlExamples(DocumentedExamples.Kind.SIMULATOR_SCENARIO);
        assertThat(blocks).isNotEmpty();
        return blocks.stream()
                .map(block -> DynamicTest.dynamicTest(
                        block.toString(),
                        () -> assertThat(Scenario.parse(
                                                new Yaml(new SafeConstructor(new LoaderOptions())).load(block.yaml()),
                                                block.toString())
                                        .steps())
                                .isNotEmpty()));
    }

    /** The scenarios that ship in the jar ({@code src/main/resources/simulator}), read as the simulator reads them. */
    @TestFactory
    Stream<DynamicTest> everyScenarioFileParses() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("src/main/resources/simulator"))) {
            List<Path> scenarios = files.filter(file -> file.toString().endsWith(".yaml"))
                    .sorted()
                    .toList();
            assertThat(scenarios).isNotEmpty();
            return scenarios.stream()
                    .map(file -> "classpath:simulator/" + file.getFileName())
                    .map(location -> DynamicTest.dynamicTest(
                            location,
                            () -> assertThat(Scenario.load(location).steps()).isNotEmpty()));
        }
    }
}
