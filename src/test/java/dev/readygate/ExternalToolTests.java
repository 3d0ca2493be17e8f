package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The tools the tests need are named alike in the three places that must agree: {@link ExternalTool} (where tests
 * find them), the pom's {@code readygate.test.tool-tags} (what {@code -Pjava-only} leaves out) and {@code ./run-tests}
 * (what it installs and hands over); and every test that runs a tool carries its tag, so that {@code -Pjava-only}
 * leaves it out rather than failing it.
 */
class ExternalToolTests {

    static final Path TESTS = Path.of("src/test/java");

    @Test
    void thePomsToolTagsAreTheToolsAndDocker() throws IOException {
        Matcher tags = Pattern.compile("<readygate.test.tool-tags>([^<]*)</readygate.test.tool-tags>")
                .matcher(Files.readString(Path.of("pom.xml")));
        assertThat(tags.find()).isTrue();
        Set<String> expected = new TreeSet<>(toolTags());
        expected.add(ExternalTool.DOCKER_TAG);
        assertThat(new TreeSet<>(Arrays.asList(tags.group(1).split(",")))).isEqualTo(expected);
    }

    /** readygate refuses a system property under {@code readygate.} that is none of its settings (issue 13). */
    @Test
    void theToolPropertiesAreNoneOfReadygatesSettings() {
        for (ExternalTool tool : ExternalTool.values()) {
            assertThat(tool.property()).doesNotStartWith("readygate.");
        }
    }

    @Test
    void runTestsProvidesEveryTool() throws IOException {
        Set<String> provided = Pattern.compile("(?m)^tool (\\S+) (apt|run|optional):\\S+$")
                .matcher(Files.readString(Path.of("run-tests")))
                .results()
                .map(match -> match.group(1))
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(provided).isEqualTo(new TreeSet<>(toolTags()));
    }

    @Test
    void everyTestThatRunsAToolCarriesItsTagAndEveryTagIsATool() throws IOException {
        Set<String> known = new LinkedHashSet<>(toolTags());
        known.add(ExternalTool.DOCKER_TAG);
        try (Stream<Path> files = Files.walk(TESTS)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String source = Files.readString(file);
                Set<String> tags = tags(source);
                assertThat(known).as("the tags of %s", file).containsAll(tags);
                if (!isTestClass(file)) {
                    continue;
                }
                for (ExternalTool tool : ExternalTool.values()) {
                    if (runs(source, tool)) {
                        assertThat(tags).as("%s runs %s", file, tool.tag()).contains(tool.tag());
                    }
                }
                if (source.contains("Testcontainers") || source.contains("GenericContainer")) {
                    assertThat(tags).as("%s runs containers", file).contains(ExternalTool.DOCKER_TAG);
                }
            }
        }
    }

    static List<String> toolTags() {
        return Arrays.stream(ExternalTool.values()).map(ExternalTool::tag).toList();
    }

    static Set<String> tags(String source) {
        Set<String> tags = new TreeSet<>();
        Pattern.compile("@Tag\\(\"([^\"]+)\"\\)").matcher(source).results().forEach(m -> tags.add(m.group(1)));
        if (source.contains("@Tag(ExternalTool.DOCKER_TAG)")) {
            tags.add(ExternalTool.DOCKER_TAG);
        }
        return tags;
    }

    static boolean isTestClass(Path file) {
        String name = file.getFileName().toString();
        return (name.endsWith("Tests.java") || name.endsWith("IT.java")) && !name.equals("ExternalToolTests.java");
    }

    /** Whether a test class runs {@code tool}: through {@link ExternalTool}, or promtool through its helper. */
    static boolean runs(String source, ExternalTool tool) {
        return source.contains("ExternalTool." + tool.name())
                || (tool == ExternalTool.PROMTOOL && source.contains("Promtool.run("));
    }
}
