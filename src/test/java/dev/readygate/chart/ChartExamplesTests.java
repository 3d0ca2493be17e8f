package dev.readygate.chart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.DocumentedExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The chart's examples, as a user would use them: the chart-values blocks of the docs, the {@code --set-json
 * 'readygate.config=...'} examples, and every {@code e.g.} in the comments of {@code values.yaml} set on the key the
 * comment describes. Each renders in every mode, and the application.yaml it renders starts readygate's
 * configuration with what the example sets under {@code readygate.config} in it.
 */
class ChartExamplesTests {

    @TempDir
    Path workDir;

    /**
     * An example value of the chart.
     *
     * @param where where it is shown
     * @param path the values key it sets ({@code readygate.config})
     * @param value its value, as YAML reads it
     */
    record Example(String where, List<String> path, Object value) {

        Map<String, Object> asValues() {
            Object nested = value;
            for (int i = path.size() - 1; i >= 0; i--) {
                Map<String, Object> level = new LinkedHashMap<>();
                level.put(path.get(i), nested);
                nested = level;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> values = (Map<String, Object>) nested;
            return values;
        }
    }

    @TestFactory
    Stream<DynamicTest> everyChartValuesBlockOfTheDocsRendersAndBindsInEveryMode() {
        List<DocumentedExamples.YamlExample> blocks =
                DocumentedExamples.yamlExamples(DocumentedExamples.Kind.CHART_VALUES);
        assertThat(blocks).isNotEmpty();
        return blocks.stream()
                .flatMap(block -> Chart.MODES.stream()
                        .map(mode -> DynamicTest.dynamicTest(
                                block + " (" + mode + ")", () -> rendersAndBinds(mode, Chart.load(block.yaml())))));
    }

    @TestFactory
    Stream<DynamicTest> everySetJsonOfTheDocsRendersAndBindsInEveryMode() {
        List<String> json = DocumentedExamples.chartConfigJson();
        assertThat(json).isNotEmpty();
        return json.stream()
                .flatMap(config -> Chart.MODES.stream()
                        .map(mode -> DynamicTest.dynamicTest(
                                "readygate.config=" + config + " (" + mode + ")",
                                () -> rendersAndBinds(
                                        mode,
                                        new Example("--set-json", List.of("readygate", "config"), parse(config))
                                                .asValues()))));
    }

    @TestFactory
    Stream<DynamicTest> everyExampleInTheValuesCommentsRendersAndBindsInEveryMode() throws IOException {
        List<Example> examples = valuesComments(Files.readAllLines(Chart.DIRECTORY.resolve("values.yaml")));
        assertThat(examples)
                .extracting(example -> String.join(".", example.path()))
                .contains("readygate.config", "engine.args", "snapshot.volume");
        return examples.stream()
                .flatMap(example -> Chart.MODES.stream()
                        .map(mode -> DynamicTest.dynamicTest(
                                example.where() + " " + String.join(".", example.path()) + ": " + example.value() + " ("
                                        + mode + ")",
                                () -> rendersAndBinds(mode, example.asValues()))));
    }

    @Test
    void valuesCommentsGiveEveryAlternativeOfAnExample() {
        List<Example> examples = valuesComments(List.of(
                "snapshot:",
                "  # Where it lies, e.g. {hostPath: {path: /a}} or",
                "  # {persistentVolumeClaim: {claimName: b}} on a local volume.",
                "  volume: {}",
                "  # Prefixed, e.g. https://example.com/x/",
                "  runbookBaseUrl: \"\""));
        assertThat(examples)
                .extracting(Example::path, Example::value)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(
                                List.of("snapshot", "volume"), Map.of("hostPath", Map.of("path", "/a"))),
                        org.assertj.core.groups.Tuple.tuple(
                                List.of("snapshot", "volume"),
                                Map.of("persistentVolumeClaim", Map.of("claimName", "b"))),
                        org.assertj.core.groups.Tuple.tuple(
                                List.of("snapshot", "runbookBaseUrl"), "https://example.com/x/"));
    }

    private void rendersAndBinds(String mode, Map<String, Object> example) {
        Map<String, Object> values = Chart.load(Chart.values(mode, false));
        Chart.merge(values, example);
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        String applicationYaml = HelmChartTests.readygateConfig(
                StrictManifests.read(Chart.template(workDir, new Yaml(options).dump(values))));
        HelmChartTests.bindStrictly(applicationYaml);
        if (example.get("readygate") instanceof Map<?, ?> readygate
                && readygate.get("config") instanceof Map<?, ?> set) {
            // What the example sets is in the rendered configuration, over what the chart sets.
            Object rendered = Chart.load(applicationYaml).get("readygate");
            assertThat(flatten("", rendered)).containsAllEntriesOf(flatten("", set));
        }
    }

    private static Map<String, Object> flatten(String prefix, Object value) {
        Map<String, Object> flat = new LinkedHashMap<>();
        if (value instanceof Map<?, ?> map) {
            map.forEach((key, child) -> flat.putAll(flatten(prefix + key + ".", child)));
        } else {
            flat.put(prefix, value);
        }
        return flat;
    }

    private static final Pattern KEY = Pattern.compile("^( *)([A-Za-z0-9_.-]+):.*$");

    private static final Pattern COMMENT = Pattern.compile("^( *)# ?(.*)$");

    /** Every {@code e.g.} of the comment right above a key, as a value of that key. */
    static List<Example> valuesComments(List<String> lines) {
        List<Example> examples = new ArrayList<>();
        List<String> path = new ArrayList<>();
        List<Integer> indents = new ArrayList<>();
        StringBuilder comment = new StringBuilder();
        int commentLine = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher commented = COMMENT.matcher(line);
            if (commented.matches()) {
                if (comment.isEmpty()) {
                    commentLine = i + 1;
                }
                comment.append(commented.group(2)).append(' ');
                continue;
            }
            Matcher key = KEY.matcher(line);
            if (key.matches()) {
                int indent = key.group(1).length();
                while (!indents.isEmpty() && indents.getLast() >= indent) {
                    indents.removeLast();
                    path.removeLast();
                }
                indents.add(indent);
                path.add(key.group(2));
                for (String example : examplesIn(comment.toString())) {
                    examples.add(new Example("values.yaml:" + commentLine, List.copyOf(path), parse(example)));
                }
            }
            comment.setLength(0);
        }
        return examples;
    }

    /** The examples after each {@code e.g.}: flow YAML ({...}, [...]) with its {@code or} alternatives, or a word. */
    private static List<String> examplesIn(String text) {
        List<String> examples = new ArrayList<>();
        int at = text.indexOf("e.g.");
        while (at >= 0) {
            int start = skipSpaces(text, at + "e.g.".length());
            while (start < text.length() && (text.charAt(start) == '{' || text.charAt(start) == '[')) {
                int end = balanced(text, start);
                examples.add(text.substring(start, end));
                int next = skipSpaces(text, end);
                if (!text.startsWith("or ", next)) {
                    start = text.length();
                    break;
                }
                start = skipSpaces(text, next + "or ".length());
            }
            if (start < text.length()) {
                int end = start;
                while (end < text.length() && !Character.isWhitespace(text.charAt(end))) {
                    end++;
                }
                examples.add(text.substring(start, end).replaceAll("[.,;:)]+$", ""));
            }
            at = text.indexOf("e.g.", at + 1);
        }
        return examples;
    }

    private static int skipSpaces(String text, int from) {
        int at = from;
        while (at < text.length() && text.charAt(at) == ' ') {
            at++;
        }
        return at;
    }

    private static int balanced(String text, int start) {
        int depth = 0;
        char quote = 0;
        for (int i = start; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quote != 0) {
                quote = c == quote ? 0 : quote;
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return i + 1;
            }
        }
        throw new AssertionError("unbalanced example: " + text.substring(start));
    }

    private static Object parse(String flowYaml) {
        return new Yaml(new SafeConstructor(new LoaderOptions())).load(flowYaml);
    }
}
