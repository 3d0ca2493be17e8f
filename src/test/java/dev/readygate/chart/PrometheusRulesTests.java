package dev.readygate.chart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The chart's alert rules ({@code charts/readygate/files/readygate-rules.yaml}) through {@code promtool}: they are
 * valid, every alert fires on a series that should make it fire and stays quiet on those that should not
 * ({@code src/test/resources/prometheus/readygate-rules-test.yaml}), and each has its runbook section.
 */
@Tag("promtool")
class PrometheusRulesTests {

    static final Path RULES = Chart.DIRECTORY.resolve("files/readygate-rules.yaml");
    static final Path RULES_TEST = Path.of("src/test/resources/prometheus/readygate-rules-test.yaml");

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
    void rulesTestHasAFiringAndAQuietCaseForEveryAlert() throws IOException {
        List<String> alerts = alerts(Chart.load(Files.readString(RULES)));
        Map<String, Object> test = Chart.load(Files.readString(RULES_TEST));
        List<Map<String, Object>> cases = list(test.get("tests")).stream()
                .flatMap(group -> list(group.get("alert_rule_test")).stream())
                .toList();
        Set<Object> firing = cases.stream()
                .filter(c -> !list(c.get("exp_alerts")).isEmpty())
                .map(c -> c.get("alertname"))
                .collect(Collectors.toSet());
        Set<Object> quiet = cases.stream()
                .filter(c -> list(c.get("exp_alerts")).isEmpty())
                .map(c -> c.get("alertname"))
                .collect(Collectors.toSet());
        assertThat(firing).containsExactlyInAnyOrderElementsOf(alerts);
        assertThat(quiet).containsExactlyInAnyOrderElementsOf(alerts);
    }

    @Test
    void everyAlertHasASeveritySummaryDescriptionAndARunbookSectionThatExists() throws IOException {
        Set<String> anchors = Files.readString(Path.of("docs/operations.md"))
                .lines()
                .filter(line -> line.startsWith("#"))
                .map(PrometheusRulesTests::anchor)
                .collect(Collectors.toSet());
        List<Map<String, Object>> rules = rules(Chart.load(Files.readString(RULES)));
        assertThat(rules).hasSize(9).allSatisfy(rule -> {
            assertThat(map(rule.get("labels")).get("severity")).isIn("warning", "critical");
            Map<String, Object> annotations = map(rule.get("annotations"));
            assertThat(annotations).containsKeys("summary", "description");
            assertThat((String) annotations.get("runbook_url")).startsWith("docs/operations.md#");
            assertThat(anchors)
                    .contains(((String) annotations.get("runbook_url")).substring("docs/operations.md#".length()));
        });
    }

    /** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as dashes. */
    static String anchor(String heading) {
        return heading.replaceFirst("^#+\\s*", "")
                .toLowerCase(Locale.ROOT)
                .replaceAll("[^a-z0-9 _-]", "")
                .replace(' ', '-');
    }

    static List<String> alerts(Map<String, Object> rulesFile) {
        return rules(rulesFile).stream().map(rule -> (String) rule.get("alert")).toList();
    }

    static List<Map<String, Object>> rules(Map<String, Object> rulesFile) {
        return list(rulesFile.get("groups")).stream()
                .flatMap(group -> list(group.get("rules")).stream())
                .filter(rule -> rule.containsKey("alert"))
                .toList();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object value) {
        return value == null ? List.of() : (List<Map<String, Object>>) value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }
}
