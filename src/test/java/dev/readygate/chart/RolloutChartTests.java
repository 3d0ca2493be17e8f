package dev.readygate.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.marcnuri.helm.LintResult;
import dev.readygate.chart.RolloutQueries.Flavour;
import dev.readygate.chart.RolloutQueries.Query;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.RelabelConfig;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chart's staged-upgrade and routing templates: the Argo Rollouts AnalysisTemplate and Flagger MetricTemplates
 * meet their CRDs' schemas and run exactly the queries promtool tests ({@link RolloutQueriesTests}), the monitors put
 * the pod-template hash on the series the queries select by, the readiness gate and its patcher's RBAC, and the
 * schema's refusal of snapshot mode beyond TP1.
 */
class RolloutChartTests {

    private static final String ARGO = "rollout:\n  argo:\n    enabled: true\n";
    private static final String FLAGGER = "rollout:\n  flagger:\n    enabled: true\n";
    private static final String GATE =
            "readinessGate:\n  enabled: true\n  patcher:\n    serviceAccount:\n      name: readiness-patcher\n";

    private final RolloutQueries queries = RolloutQueries.load();

    @TempDir
    Path workDir;

    List<HasMetadata> render(String values) {
        return StrictManifests.read(Chart.template(workDir, values));
    }

    @Test
    void rolloutTemplatesAndTheReadinessGateAreOffByDefault() {
        List<HasMetadata> objects = render("");
        assertThat(objects)
                .extracting(HasMetadata::getKind)
                .doesNotContain("AnalysisTemplate", "MetricTemplate", "Role", "RoleBinding");
        assertThat(HelmChartTests.pod(objects).getReadinessGates()).isNullOrEmpty();
    }

    @Test
    void argoAnalysisTemplateMeetsItsCrdSchemaAndRunsTheTestedQueriesWithInconclusiveForNoEvidence() {
        GenericKubernetesResource template = only(render(ARGO), "AnalysisTemplate");
        assertThat(template.getMetadata().getName()).isEqualTo("qwen-readygate");
        Map<String, Object> spec = map(template.getAdditionalProperties().get("spec"));
        assertThat(list(spec.get("args")))
                .extracting(arg -> arg.get("name"))
                .containsExactly("canary-hash", "stable-hash");
        List<Map<String, Object>> metrics = list(spec.get("metrics"));
        assertThat(metrics).extracting(metric -> metric.get("name")).containsExactlyElementsOf(names());
        for (Map<String, Object> metric : metrics) {
            Query query = queries.query((String) metric.get("name"));
            assertThat(metric)
                    .containsEntry("interval", "1m")
                    .containsEntry("count", 5)
                    .containsEntry("failureLimit", 0)
                    .containsEntry("inconclusiveLimit", 3)
                    // An empty result meets neither condition: the measurement is inconclusive.
                    .containsEntry("successCondition", "len(result) > 0 && " + query.successCondition())
                    .containsEntry("failureCondition", "len(result) > 0 && " + query.failureCondition());
            Map<String, Object> prometheus = map(map(metric.get("provider")).get("prometheus"));
            assertThat(prometheus).containsEntry("address", "http://prometheus-operated.monitoring.svc:9090");
            assertThat(((String) prometheus.get("query")).strip())
                    .isEqualTo(queries.rendered(query, Flavour.ARGO, "llm", "1.5"))
                    .contains("rollouts_pod_template_hash=\"{{args.canary-hash}}\"")
                    .doesNotContain("$");
        }
    }

    @Test
    void flaggerMetricTemplatesMeetTheirCrdSchemaAndRunTheTestedQueriesOnTheChartsDeployment() {
        List<HasMetadata> objects = render(FLAGGER);
        List<GenericKubernetesResource> templates = objects.stream()
                .filter(object -> object.getKind().equals("MetricTemplate"))
                .map(GenericKubernetesResource.class::cast)
                .toList();
        assertThat(templates)
                .extracting(template -> template.getMetadata().getName())
                .containsExactlyElementsOf(
                        names().stream().map(name -> "qwen-readygate-" + name).toList());
        for (GenericKubernetesResource template : templates) {
            Query query = queries.query(template.getMetadata().getName().substring("qwen-readygate-".length()));
            Map<String, Object> spec = map(template.getAdditionalProperties().get("spec"));
            assertThat(map(spec.get("provider"))).containsEntry("type", "prometheus");
            assertThat(((String) spec.get("query")).strip())
                    .isEqualTo(queries.rendered(query, Flavour.FLAGGER, "llm", "1.5"))
                    .contains("namespace=\"{{ namespace }}\", pod=~\"{{ target }}-[0-9a-zA-Z]+-[0-9a-zA-Z]+\"")
                    .doesNotContain("$");
            assertThat(template.getMetadata().getAnnotations()).containsKey("readygate.dev/threshold-range");
        }
        // The tests fill {{ target }} with the name of the Deployment Flagger's Canary targets: the chart's.
        assertThat(StrictManifests.only(objects, Deployment.class).getMetadata().getName())
                .isEqualTo(RolloutQueries.CONTROLLER_VARIABLES.get("{{ target }}"));
    }

    @Test
    void maxLatencyRatioReachesOnlyTheLatencyQuery() {
        GenericKubernetesResource template = only(render(ARGO + "  maxLatencyRatio: 2\n"), "AnalysisTemplate");
        List<Map<String, Object>> metrics =
                list(map(template.getAdditionalProperties().get("spec")).get("metrics"));
        assertThat(metrics).allSatisfy(metric -> {
            String query =
                    (String) map(map(metric.get("provider")).get("prometheus")).get("query");
            assertThat(query.contains(") * 2\n")).isEqualTo(metric.get("name").equals("readiness-latency"));
        });
        assertThat(catchThrowable(() -> Chart.template(workDir, ARGO + "  maxLatencyRatio: 0.5\n")))
                .hasMessageContaining("values don't meet the specifications of the schema");
    }

    @Test
    void argoLimitsWhenNotBelowTheCountFailSayingWhy() {
        assertThat(catchThrowable(() -> Chart.template(workDir, ARGO + "    count: 3\n    inconclusiveLimit: 3\n")))
                .hasMessageContaining("inconclusiveLimit must be below rollout.argo.count");
        assertThat(catchThrowable(() -> Chart.template(
                        workDir, ARGO + "    count: 2\n    failureLimit: 2\n    inconclusiveLimit: 1\n")))
                .hasMessageContaining("failureLimit must be below rollout.argo.count");
    }

    @Test
    void crdSchemaWhenAnAnalysisTemplateHasAMisspelledOrMistypedFieldFails() {
        Map<String, Object> template = renderedDocument(ARGO, "AnalysisTemplate");
        Map<String, Object> metric =
                list(map(template.get("spec")).get("metrics")).getFirst();
        metric.put("succesCondition", metric.remove("successCondition"));
        assertThat(catchThrowable(() -> StrictManifests.read(template)))
                .hasMessageContaining("does not meet its CRD's schema")
                .hasMessageContaining("succesCondition");

        Map<String, Object> mistyped = renderedDocument(ARGO, "AnalysisTemplate");
        list(map(mistyped.get("spec")).get("metrics")).getFirst().put("interval", 60);
        assertThat(catchThrowable(() -> StrictManifests.read(mistyped)))
                .hasMessageContaining("does not meet its CRD's schema")
                .hasMessageContaining("interval");

        Map<String, Object> provider = renderedDocument(ARGO, "AnalysisTemplate");
        Map<String, Object> prometheus = map(
                map(list(map(provider.get("spec")).get("metrics")).getFirst().get("provider"))
                        .get("prometheus"));
        prometheus.put("adress", prometheus.remove("address"));
        assertThat(catchThrowable(() -> StrictManifests.read(provider))).hasMessageContaining("adress");
    }

    @Test
    void crdSchemaWhenAMetricTemplateHasAnUnknownProviderOrFieldFails() {
        Map<String, Object> template = renderedDocument(FLAGGER, "MetricTemplate");
        map(map(template.get("spec")).get("provider")).put("type", "prom");
        assertThat(catchThrowable(() -> StrictManifests.read(template)))
                .hasMessageContaining("does not meet its CRD's schema")
                .hasMessageContaining("prom");

        Map<String, Object> misspelled = renderedDocument(FLAGGER, "MetricTemplate");
        Map<String, Object> spec = map(misspelled.get("spec"));
        spec.put("querry", spec.remove("query"));
        assertThat(catchThrowable(() -> StrictManifests.read(misspelled))).hasMessageContaining("querry");
    }

    @ParameterizedTest
    @ValueSource(strings = {"serviceMonitor", "podMonitor"})
    void monitorsCopyTheRolloutsPodTemplateHashOntoTheSeries(String monitor) {
        List<HasMetadata> objects = render("monitoring:\n  " + monitor + ":\n    enabled: true\n");
        List<RelabelConfig> relabelings = monitor.equals("serviceMonitor")
                ? StrictManifests.only(objects, ServiceMonitor.class)
                        .getSpec()
                        .getEndpoints()
                        .getFirst()
                        .getRelabelings()
                : StrictManifests.only(objects, PodMonitor.class)
                        .getSpec()
                        .getPodMetricsEndpoints()
                        .getFirst()
                        .getRelabelings();
        assertThat(relabelings).singleElement().satisfies(relabeling -> {
            assertThat(relabeling.getSourceLabels())
                    .containsExactly("__meta_kubernetes_pod_label_rollouts_pod_template_hash");
            assertThat(relabeling.getTargetLabel()).isEqualTo("rollouts_pod_template_hash");
            assertThat(relabeling.getAction()).isEqualTo("replace");
            assertThat(relabeling.getRegex()).isEqualTo("(.+)");
        });
    }

    @Test
    void podMonitorSelectsFlaggersPrimaryPodsToo() {
        List<HasMetadata> objects = render("monitoring:\n  podMonitor:\n    enabled: true\n");
        Map<String, String> primaryPodLabels = new HashMap<>(StrictManifests.only(objects, Deployment.class)
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getLabels());
        // Flagger's primary Deployment: the same pod labels, its selector label (app.kubernetes.io/name) renamed.
        primaryPodLabels.put("app.kubernetes.io/name", "readygate-primary");
        assertThat(primaryPodLabels)
                .containsAllEntriesOf(StrictManifests.only(objects, PodMonitor.class)
                        .getSpec()
                        .getSelector()
                        .getMatchLabels());
    }

    @Test
    void readinessGateAddsTheConditionToThePodAndLetsOnlyThePatcherSetIt() {
        List<HasMetadata> objects = render(GATE);
        assertThat(HelmChartTests.pod(objects).getReadinessGates())
                .extracting(PodReadinessGate::getConditionType)
                .containsExactly("readygate.dev/engine-verified");
        Role role = StrictManifests.only(objects, Role.class);
        assertThat(role.getRules())
                .anySatisfy(rule -> {
                    assertThat(rule.getResources()).containsExactly("pods/status");
                    assertThat(rule.getVerbs()).containsExactly("patch");
                })
                .allSatisfy(rule -> assertThat(rule.getApiGroups()).containsExactly(""))
                .flatExtracting(PolicyRule::getVerbs)
                .doesNotContain("create", "update", "delete", "*");
        RoleBinding binding = StrictManifests.only(objects, RoleBinding.class);
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(subject -> {
            assertThat(subject.getKind()).isEqualTo("ServiceAccount");
            assertThat(subject.getName()).isEqualTo("readiness-patcher");
            assertThat(subject.getNamespace()).isEqualTo("llm");
        });
        // readygate's own container still carries the pod's readiness: the gate can only hold a pod back.
        assertThat(HelmChartTests.container(HelmChartTests.pod(objects), "readygate")
                        .getReadinessProbe()
                        .getHttpGet()
                        .getPath())
                .isEqualTo("/readyz");
    }

    @Test
    void readinessGateWithoutAPatcherFailsOnTheSchema() {
        assertThat(catchThrowable(() -> Chart.template(workDir, "readinessGate:\n  enabled: true\n")))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining("serviceAccount");
        assertThat(catchThrowable(() -> Chart.template(workDir, GATE + "  conditionType: engine verified\n")))
                .hasMessageContaining("conditionType");
    }

    @Test
    void lintWhenStrictWithEveryTemplateOnReportsNothing() {
        LintResult lint = Chart.lint(
                workDir,
                Chart.values("preload", true)
                        + GATE
                        + "rollout:\n  argo:\n    enabled: true\n  flagger:\n    enabled: true\n");
        assertThat(lint.isFailed()).as("%s", lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).noneMatch(message -> message.contains("[WARNING]"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "[\"--tensor-parallel-size=2\"]",
                "[\"--tensor-parallel-size\", \"2\"]",
                "[\"-tp\", \"4\"]",
                "[\"-tp=8\"]",
                "[\"--data-parallel-size\", \"2\"]",
                "[\"--max-model-len\", \"512\", \"-dp=2\"]",
                "[\"--pipeline-parallel-size=2\"]"
            })
    void schemaWhenSnapshotModeIsWiderThanTp1RefusesItSayingWhy(String args) {
        assertThat(catchThrowable(() ->
                        Chart.template(workDir, Chart.values("snapshot", false) + "engine:\n  args: " + args + "\n")))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining("/engine/args/")
                .hasMessageContaining("vLLM 0.31 snapshots restore a TP1 engine and nothing wider");
    }

    @Test
    void schemaWhenSnapshotModeAsksForMoreThanOneGpuRefusesIt() {
        assertThat(catchThrowable(() -> Chart.template(
                        workDir,
                        Chart.values("snapshot", false)
                                + "engine:\n  resources:\n    limits:\n      nvidia.com/gpu: 2\n")))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining("nvidia.com~1gpu");
    }

    @Test
    void schemaLetsSnapshotModeSayTp1AndOtherModesGoWider() {
        assertThat(render(Chart.values("snapshot", false)
                        + "engine:\n  args: [\"--tensor-parallel-size=1\", \"--max-model-len\", \"2\"]\n"))
                .extracting(HasMetadata::getKind)
                .contains("Deployment");
        for (String mode : List.of("plain", "preload")) {
            assertThat(render("mode: " + mode + "\nengine:\n  args: [\"--tensor-parallel-size\", \"2\"]\n"
                            + "  resources:\n    limits:\n      nvidia.com/gpu: 2\n"))
                    .extracting(HasMetadata::getKind)
                    .contains("Deployment");
        }
    }

    @Test
    void upgradesDocsRolloutPassesTheTemplatesArgumentsFromThePodTemplateHashes() throws IOException {
        Map<String, Object> rollout = docsExample("Rollout");
        Map<String, Object> spec = map(rollout.get("spec"));
        assertThat(map(spec.get("workloadRef"))).containsEntry("name", "qwen-readygate");
        assertThat(map(map(spec.get("selector")).get("matchLabels")))
                .containsEntry("app.kubernetes.io/name", "readygate")
                .containsEntry("app.kubernetes.io/instance", "qwen");
        Map<String, Object> analysis = list(
                        map(map(spec.get("strategy")).get("canary")).get("steps"))
                .stream()
                .filter(step -> step.containsKey("analysis"))
                .map(step -> map(step.get("analysis")))
                .findFirst()
                .orElseThrow();
        String templateName =
                only(render(ARGO), "AnalysisTemplate").getMetadata().getName();
        assertThat(list(analysis.get("templates")))
                .singleElement()
                .satisfies(template -> assertThat(template).containsEntry("templateName", templateName));
        assertThat(list(analysis.get("args")))
                .extracting(
                        arg -> arg.get("name") + "=" + map(arg.get("valueFrom")).get("podTemplateHashValue"))
                .containsExactly("canary-hash=Latest", "stable-hash=Stable");
    }

    @Test
    void upgradesDocsCanaryNamesEveryMetricTemplateWithItsChecksThresholdRange() throws IOException {
        Map<String, Object> canary = docsExample("Canary");
        Map<String, Object> spec = map(canary.get("spec"));
        assertThat(map(spec.get("targetRef")))
                .containsEntry(
                        "name",
                        StrictManifests.only(render(FLAGGER), Deployment.class)
                                .getMetadata()
                                .getName());
        // Not the chart's Service, which Flagger would take over.
        assertThat(map(spec.get("service")).get("name")).isNotEqualTo("qwen-readygate");
        List<Map<String, Object>> metrics = list(map(spec.get("analysis")).get("metrics"));
        assertThat(metrics).extracting(metric -> metric.get("name")).containsExactlyElementsOf(names());
        for (Map<String, Object> metric : metrics) {
            Query query = queries.query((String) metric.get("name"));
            assertThat(map(metric.get("templateRef"))).containsEntry("name", "qwen-readygate-" + query.name());
            assertThat(map(metric.get("thresholdRange"))).isEqualTo(query.range());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"docs/upgrades.md:rollout", "docs/routing.md:readinessGate"})
    void valuesExamplesOfTheDocsRenderAndReadStrictly(String example) throws IOException {
        String[] where = example.split(":");
        String values = yamlBlocks(Path.of(where[0])).stream()
                .filter(block -> Chart.load(block).containsKey(where[1]))
                .findFirst()
                .orElseThrow(() -> new AssertionError(where[0] + " has no values example of " + where[1]));
        assertThat(render(values)).extracting(HasMetadata::getKind).contains("Deployment");
    }

    /** The YAML block of docs/upgrades.md whose kind is {@code kind}. */
    private static Map<String, Object> docsExample(String kind) throws IOException {
        return yamlBlocks(Path.of("docs/upgrades.md")).stream()
                .map(Chart::load)
                .filter(document -> kind.equals(document.get("kind")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("docs/upgrades.md has no " + kind));
    }

    private static List<String> yamlBlocks(Path markdown) throws IOException {
        Matcher blocks = Pattern.compile("```yaml\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(markdown));
        List<String> found = new ArrayList<>();
        while (blocks.find()) {
            found.add(blocks.group(1).stripIndent());
        }
        return found;
    }

    private List<String> names() {
        return queries.queries().stream().map(Query::name).toList();
    }

    private Map<String, Object> renderedDocument(String values, String kind) {
        Map<String, Object> document = StrictManifests.documents(Chart.template(workDir, values)).stream()
                .filter(candidate -> kind.equals(candidate.get("kind")))
                .findFirst()
                .orElseThrow();
        // As rendered, it reads.
        assertThat(StrictManifests.read(document).getKind()).isEqualTo(kind);
        return document;
    }

    private static GenericKubernetesResource only(List<HasMetadata> objects, String kind) {
        List<HasMetadata> found =
                objects.stream().filter(object -> object.getKind().equals(kind)).toList();
        assertThat(found).as(kind).hasSize(1);
        return (GenericKubernetesResource) found.getFirst();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object value) {
        return (List<Map<String, Object>>) value;
    }
}
