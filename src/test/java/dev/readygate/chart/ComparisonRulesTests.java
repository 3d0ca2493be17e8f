package dev.readygate.chart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The recording rules that compare restarts across a fleet ({@code charts/readygate/files/readygate-comparison-rules.yaml})
 * through {@code promtool}: valid, each tested on series of pods of two releases
 * ({@code src/test/resources/prometheus/readygate-comparison-rules-test.yaml}), a wrong expectation fails; and the
 * Grafana dashboard's comparison panels query what the rules record, in PromQL {@code promtool} accepts.
 */
@Tag("promtool")
class ComparisonRulesTests {

    static final Path RULES = Chart.DIRECTORY.resolve("files/readygate-comparison-rules.yaml");
    static final Path RULES_TEST = Path.of("src/test/resources/prometheus/readygate-comparison-rules-test.yaml");
    static final Path DASHBOARD = Chart.DIRECTORY.resolve("files/grafana-dashboard.json");

    /** A recording rule's name: {@code level:metric:operations}. */
    private static final Pattern RECORDED = Pattern.compile("\\b[a-z_]+:[a-z_]+:[a-z_0-9]+\\b");

    @TempDir
    Path workDir;

    @Test
    void promtoolCheckRulesFindsEveryRuleValid() {
        Promtool.Result check = Promtool.run("", "check", "rules", RULES.toString());
        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: 9 rules found");
    }

    @Test
    void promtoolTestRulesPasses() {
        Promtool.Result test = Promtool.run("", "test", "rules", RULES_TEST.toString());
        assertThat(test.exitCode()).as(test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }

    @Test
    void promtoolTestRulesFailsWhenAnExpectationIsWrong() throws IOException {
        Map<String, Object> test = Chart.load(Files.readString(RULES_TEST));
        // The preload hit's speed-up over cold: 12.5 s over 3.5 s, not 3.
        Map<String, Object> speedup = cases(test).stream()
                .filter(c -> c.get("expr").equals("release_path:readygate_readiness_speedup_over_cold:p50_1h")
                        && "60m".equals(c.get("eval_time")))
                .findFirst()
                .orElseThrow();
        samples(speedup).get(1).put("value", 3);
        test.put("rule_files", List.of(RULES.toAbsolutePath().toString()));
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        Path wrong = Files.writeString(workDir.resolve("wrong.yaml"), new Yaml(options).dump(test));

        Promtool.Result result = Promtool.run("", "test", "rules", wrong.toString());

        assertThat(result.exitCode()).isNotZero();
        assertThat(result.output()).contains("FAILED").contains("3.5714285714285716");
    }

    @Test
    void everyRecordingRuleIsTestedByName() throws IOException {
        Map<String, Object> test = Chart.load(Files.readString(RULES_TEST));
        String tested = cases(test).stream().map(c -> (String) c.get("expr")).collect(Collectors.joining("\n"));
        List<String> untested = records(Chart.load(Files.readString(RULES))).stream()
                .filter(record -> !record.endsWith("_bucket:increase1h") && !record.endsWith("_count:increase1h"))
                .filter(record -> !tested.contains(record))
                .toList();
        // The bucket and count sums are what the tested quantiles and failures are made of.
        assertThat(untested).isEmpty();
    }

    @Test
    void dashboardComparisonPanelsQueryWhatTheRulesRecordInValidPromql() throws IOException {
        JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
        Set<String> recorded = Set.copyOf(records(Chart.load(Files.readString(RULES))));
        Map<String, String> exprs = new LinkedHashMap<>();
        List<String> used = new ArrayList<>();
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.path("targets")) {
                String expr = target.get("expr").asString();
                exprs.put(panel.get("id").asInt() + target.get("refId").asString(), expr);
                Matcher matcher = RECORDED.matcher(expr);
                while (matcher.find()) {
                    used.add(matcher.group());
                }
            }
        }
        assertThat(used)
                .as("the comparison table reads the recorded series")
                .contains(
                        "release_path:readygate_engine_starts:increase1h",
                        "release_path:readygate_readiness_latency_seconds:p50_1h",
                        "release_path:readygate_readiness_speedup_over_cold:p50_1h");
        assertThat(recorded).containsAll(used);
        assertThat(dashboard
                        .get("panels")
                        .valueStream()
                        .map(panel -> panel.get("title").asString()))
                .contains(
                        "Restarts compared by release and path (last hour)",
                        "Engine starts by what they recovered from");
        // Every panel's query parses: promtool checks each as a recording rule (Grafana's variables filled in).
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        exprs.forEach((name, expr) -> rules.append("      - record: dashboard:panel_")
                .append(name.toLowerCase(java.util.Locale.ROOT))
                .append(":expr\n        expr: '")
                .append(expr.replace("$namespace", ".*")
                        .replace("$job", ".*")
                        .replace("$__rate_interval", "5m")
                        .replace("'", "''"))
                .append("'\n"));
        Path file = Files.writeString(workDir.resolve("dashboard-rules.yaml"), rules.toString());
        Promtool.Result check = Promtool.run("", "check", "rules", file.toString());
        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: " + exprs.size() + " rules found");
    }

    static List<String> records(Map<String, Object> rulesFile) {
        return list(rulesFile.get("groups")).stream()
                .flatMap(group -> list(group.get("rules")).stream())
                .map(rule -> (String) rule.get("record"))
                .filter(java.util.Objects::nonNull)
                .toList();
    }

    private static List<Map<String, Object>> cases(Map<String, Object> test) {
        return list(test.get("tests")).stream()
                .flatMap(group -> list(group.get("promql_expr_test")).stream())
                .toList();
    }

    private static List<Map<String, Object>> samples(Map<String, Object> c) {
        return list(c.get("exp_samples"));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object value) {
        return value == null ? List.of() : (List<Map<String, Object>>) value;
    }
}
