package dev.readygate.chart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.chart.RolloutQueries.Flavour;
import dev.readygate.chart.RolloutQueries.Query;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The canary analysis queries ({@code charts/readygate/files/rollout-queries.yaml}) through {@code promtool}, as the
 * chart renders them for Argo Rollouts and for Flagger and as those fill in their variables: each on series that pass,
 * that fail and that say nothing yet ({@code src/test/resources/prometheus/rollout-queries-test.yaml}), and the Argo
 * conditions and Flagger threshold ranges agree on every value the tests expect.
 */
@Tag("promtool")
class RolloutQueriesTests {

    static final Path TEST = Path.of("src/test/resources/prometheus/rollout-queries-test.yaml");

    private static final Pattern CONDITION = Pattern.compile("result\\[0] (==|<=|>=|<|>) (-?[0-9.]+)");

    private final RolloutQueries queries = RolloutQueries.load();

    @TempDir
    Path workDir;

    @Test
    void promtoolTestRulesPassesOnEveryQueryAsTheChartRendersIt() throws IOException {
        Promtool.Result test =
                Promtool.run("", "test", "rules", expanded(test()).toString());
        assertThat(test.exitCode()).as(test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }

    @Test
    void promtoolTestRulesFailsWhenAnExpectationIsWrong() throws IOException {
        Map<String, Object> test = test();
        Map<String, Object> first = cases(test).getFirst();
        // The first case expects no sample at 0m; at 2m the canary is loading (0.5).
        assertThat(first).containsEntry("exp_samples", List.of());
        first.put("eval_time", "2m");
        Promtool.Result wrong = Promtool.run("", "test", "rules", expanded(test).toString());
        assertThat(wrong.exitCode()).isNotZero();
        assertThat(wrong.output()).contains("FAILED").contains("got: {} 5E-01");
    }

    @Test
    void everyQueryIsTestedOnSeriesThatPassThatFailAndThatSayNothingYetForBothControllers() throws IOException {
        List<Map<String, Object>> cases = cases(test());
        for (Query query : queries.queries()) {
            List<Map<String, Object>> own = cases.stream()
                    .filter(c -> ((String) c.get("expr")).endsWith("/" + query.name()))
                    .toList();
            assertThat(own).as(query.name()).isNotEmpty();
            assertThat(own)
                    .as("%s: a case with no sample (no evidence yet)", query.name())
                    .anySatisfy(c -> assertThat(samples(c)).isEmpty());
            assertThat(values(own))
                    .as("%s: a value that passes", query.name())
                    .anyMatch(value -> holds(query.successCondition(), value));
            assertThat(values(own))
                    .as("%s: a value that fails", query.name())
                    .anyMatch(value -> holds(query.failureCondition(), value));
        }
        for (Flavour flavour : Flavour.values()) {
            assertThat(cases).as(flavour.key).anyMatch(c -> ((String) c.get("expr")).startsWith(flavour.key + "/"));
        }
    }

    @Test
    void flaggerThresholdRangePassesExactlyWhatArgosSuccessConditionPasses() throws IOException {
        List<Map<String, Object>> cases = cases(test());
        for (Query query : queries.queries()) {
            List<Double> tested = values(cases.stream()
                    .filter(c -> ((String) c.get("expr")).endsWith("/" + query.name()))
                    .toList());
            assertThat(tested).allSatisfy(value -> {
                assertThat(inRange(query.range(), value))
                        .as("%s at %s", query.name(), value)
                        .isEqualTo(holds(query.successCondition(), value));
                assertThat(holds(query.successCondition(), value) && holds(query.failureCondition(), value))
                        .as("%s at %s both passes and fails", query.name(), value)
                        .isFalse();
            });
        }
    }

    /** The test file with each FLAVOUR/NAME expr replaced by that query as the controller runs it. */
    private Path expanded(Map<String, Object> test) throws IOException {
        for (Map<String, Object> c : cases(test)) {
            String[] reference = ((String) c.get("expr")).split("/", 2);
            Flavour flavour = Flavour.valueOf(reference[0].toUpperCase(Locale.ROOT));
            c.put("expr", RolloutQueries.filled(queries.rendered(queries.query(reference[1]), flavour, "llm", "1.5")));
        }
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        return Files.writeString(workDir.resolve("rollout-queries-test.yaml"), new Yaml(options).dump(test));
    }

    private static Map<String, Object> test() throws IOException {
        return Chart.load(Files.readString(TEST));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> cases(Map<String, Object> test) {
        return ((List<Map<String, Object>>) test.get("tests"))
                .stream()
                        .flatMap(group -> ((List<Map<String, Object>>) group.get("promql_expr_test")).stream())
                        .toList();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> samples(Map<String, Object> c) {
        return (List<Map<String, Object>>) c.get("exp_samples");
    }

    private static List<Double> values(List<Map<String, Object>> cases) {
        List<Double> values = new ArrayList<>();
        for (Map<String, Object> c : cases) {
            samples(c).forEach(sample -> values.add(((Number) sample.get("value")).doubleValue()));
        }
        return values;
    }

    /** Whether an Argo condition of the form {@code result[0] OP NUMBER} holds for {@code value}. */
    static boolean holds(String condition, double value) {
        Matcher matcher = CONDITION.matcher(condition);
        if (!matcher.matches()) {
            throw new IllegalArgumentException("not of the form result[0] OP NUMBER: " + condition);
        }
        double bound = Double.parseDouble(matcher.group(2));
        return switch (matcher.group(1)) {
            case "==" -> value == bound;
            case "<=" -> value <= bound;
            case ">=" -> value >= bound;
            case "<" -> value < bound;
            case ">" -> value > bound;
            default -> throw new IllegalArgumentException(condition);
        };
    }

    /** Flagger's thresholdRange: min and max, each inclusive, each optional. */
    static boolean inRange(Map<String, Object> range, double value) {
        Object min = range.get("min");
        Object max = range.get("max");
        return (min == null || value >= ((Number) min).doubleValue())
                && (max == null || value <= ((Number) max).doubleValue());
    }
}
