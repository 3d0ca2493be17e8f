package dev.readygate.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

import com.marcnuri.helm.LintResult;
import dev.readygate.config.ReadygateProperties;
import dev.readygate.config.SettingsStart;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.Rule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Helm chart, rendered by Helm's own library in every mode with monitoring on and off: it lints, every manifest
 * is a valid Kubernetes (or Prometheus Operator) object, the pod's readiness is readygate's {@code /readyz}, the
 * engine and readygate share what readygate reads, readygate runs hardened, and readygate's configuration binds.
 */
class HelmChartTests {

    @TempDir
    Path workDir;

    static Stream<Arguments> releases() {
        return Chart.MODES.stream().flatMap(mode -> Stream.of(Arguments.of(mode, false), Arguments.of(mode, true)));
    }

    List<HasMetadata> render(String mode, boolean monitoring) {
        return StrictManifests.read(Chart.template(workDir, Chart.values(mode, monitoring)));
    }

    @ParameterizedTest(name = "{0}, monitoring {1}")
    @MethodSource("releases")
    void lintWhenStrictReportsNothing(String mode, boolean monitoring) {
        LintResult lint = Chart.lint(workDir, Chart.values(mode, monitoring));
        assertThat(lint.isFailed()).as("%s", lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).noneMatch(message -> message.contains("[WARNING]"));
    }

    @ParameterizedTest(name = "{0}, monitoring {1}")
    @MethodSource("releases")
    void templateWhenRenderedGivesOnlyValidKubernetesObjectsWithTheReleasesLabels(String mode, boolean monitoring) {
        List<HasMetadata> objects = render(mode, monitoring);
        assertThat(objects)
                .extracting(HasMetadata::getKind)
                .contains("ConfigMap", "Deployment", "Service", "ServiceAccount", "PodDisruptionBudget");
        assertThat(objects).allSatisfy(object -> {
            assertThat(object.getMetadata().getNamespace()).isNull();
            assertThat(object.getMetadata().getLabels())
                    .containsEntry("app.kubernetes.io/name", "readygate")
                    .containsEntry("app.kubernetes.io/instance", "qwen")
                    .containsEntry("app.kubernetes.io/managed-by", "Helm")
                    .containsEntry("readygate.dev/mode", mode)
                    .containsKeys("app.kubernetes.io/version", "helm.sh/chart");
        });
        List<String> monitoringKinds = List.of(
                "ServiceMonitor",
                "PodMonitor",
                "PrometheusRule",
                "NetworkPolicy",
                "AnalysisTemplate",
                "MetricTemplate");
        if (monitoring) {
            assertThat(objects).extracting(HasMetadata::getKind).containsAll(monitoringKinds);
            assertThat(objects)
                    .filteredOn(object -> object.getMetadata().getName().equals("qwen-readygate-dashboard"))
                    .singleElement()
                    .satisfies(dashboard ->
                            assertThat(((ConfigMap) dashboard).getData()).containsKey("readygate.json"));
        } else {
            assertThat(objects).extracting(HasMetadata::getKind).doesNotContainAnyElementsOf(monitoringKinds);
            assertThat(objects)
                    .extracting(object -> object.getMetadata().getName())
                    .doesNotContain("qwen-readygate-dashboard");
        }
    }

    @ParameterizedTest(name = "{0}, monitoring {1}")
    @MethodSource("releases")
    void selectorsOfEveryObjectSelectTheReleasesPods(String mode, boolean monitoring) {
        List<HasMetadata> objects = render(mode, monitoring);
        Deployment deployment = StrictManifests.only(objects, Deployment.class);
        Map<String, String> podLabels =
                deployment.getSpec().getTemplate().getMetadata().getLabels();
        assertThat(podLabels)
                .containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
        Service service = StrictManifests.only(objects, Service.class);
        assertThat(podLabels).containsAllEntriesOf(service.getSpec().getSelector());
        assertThat(podLabels)
                .containsAllEntriesOf(StrictManifests.only(objects, PodDisruptionBudget.class)
                        .getSpec()
                        .getSelector()
                        .getMatchLabels());
        List<String> podPorts = pod(objects).getContainers().stream()
                .flatMap(container -> container.getPorts().stream())
                .map(ContainerPort::getName)
                .toList();
        assertThat(service.getSpec().getPorts())
                .allSatisfy(port ->
                        assertThat(podPorts).contains(port.getTargetPort().getStrVal()));
        if (monitoring) {
            ServiceMonitor serviceMonitor = StrictManifests.only(objects, ServiceMonitor.class);
            assertThat(service.getMetadata().getLabels())
                    .containsAllEntriesOf(serviceMonitor.getSpec().getSelector().getMatchLabels());
            assertThat(serviceMonitor.getSpec().getEndpoints()).singleElement().satisfies(endpoint -> {
                assertThat(endpoint.getPort()).isEqualTo("readygate");
                assertThat(endpoint.getPath()).isEqualTo("/actuator/prometheus");
            });
            assertThat(serviceMonitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
            PodMonitor podMonitor = StrictManifests.only(objects, PodMonitor.class);
            assertThat(podLabels)
                    .containsAllEntriesOf(podMonitor.getSpec().getSelector().getMatchLabels());
            assertThat(podPorts)
                    .contains(podMonitor
                            .getSpec()
                            .getPodMetricsEndpoints()
                            .getFirst()
                            .getPort());
            assertThat(podLabels)
                    .containsAllEntriesOf(StrictManifests.only(objects, NetworkPolicy.class)
                            .getSpec()
                            .getPodSelector()
                            .getMatchLabels());
            assertThat(deployment.getSpec().getTemplate().getMetadata().getAnnotations())
                    .containsEntry("prometheus.io/scrape", "true")
                    .containsEntry("prometheus.io/port", "8090")
                    .containsEntry("prometheus.io/path", "/actuator/prometheus");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "preload", "snapshot"})
    void readinessOfThePodIsReadygatesReadyzEverySecond(String mode) {
        PodSpec pod = pod(render(mode, false));
        Container readygate = container(pod, "readygate");
        Container engine = container(pod, "engine");
        // The pod is Ready when all its containers are: the engine container has no readiness of its own, so
        // readygate's verified /readyz alone decides.
        assertThat(engine.getReadinessProbe()).isNull();
        Probe readiness = readygate.getReadinessProbe();
        assertThat(readiness.getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(readiness.getHttpGet().getPort().getStrVal()).isEqualTo("readygate");
        assertThat(readiness.getPeriodSeconds()).isEqualTo(1);
        assertThat(readygate.getPorts())
                .singleElement()
                .satisfies(port -> assertThat(port.getContainerPort()).isEqualTo(8090));
        assertThat(readygate.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/livez");
        assertThat(readygate.getStartupProbe().getHttpGet().getPath()).isEqualTo("/livez");
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "preload", "snapshot"})
    void engineLivenessStaysOnVllmsHealthAndToleratesAMinuteOfFailures(String mode) {
        PodSpec pod = pod(render(mode, false));
        Container engine = container(pod, "engine");
        // With preload the container lives as long as the daemon: an engine crash restarts only the engine.
        String port = mode.equals("preload") ? "daemon-health" : "http";
        for (Probe probe : List.of(engine.getLivenessProbe(), engine.getStartupProbe())) {
            assertThat(probe.getHttpGet().getPath()).isEqualTo("/health");
            assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo(port);
        }
        assertThat(engine.getPorts()).extracting(ContainerPort::getName).contains(port);
        Probe liveness = engine.getLivenessProbe();
        assertThat(liveness.getPeriodSeconds() * liveness.getFailureThreshold()).isGreaterThanOrEqualTo(60);
        assertThat(liveness.getTimeoutSeconds()).isGreaterThanOrEqualTo(5);
        // Sized for long loads (an hour), probed every second so that readiness is not held back by it.
        Probe startup = engine.getStartupProbe();
        assertThat(startup.getPeriodSeconds() * startup.getFailureThreshold()).isGreaterThanOrEqualTo(3600);
        assertThat(startup.getPeriodSeconds()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "preload", "snapshot"})
    void stopWhenPodIsDeletedDrainsBeforeSigtermWithinTheGracePeriod(String mode) {
        PodSpec pod = pod(render(mode, false));
        assertThat(pod.getContainers())
                .allSatisfy(container -> assertThat(
                                container.getLifecycle().getPreStop().getSleep().getSeconds())
                        .isEqualTo(10));
        assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThanOrEqualTo(40);
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "preload", "snapshot"})
    void readygateRunsHardenedWithoutACpuLimit(String mode) {
        PodSpec pod = pod(render(mode, false));
        Container readygate = container(pod, "readygate");
        var security = readygate.getSecurityContext();
        assertThat(security.getRunAsNonRoot()).isTrue();
        assertThat(security.getRunAsUser()).isPositive();
        assertThat(security.getReadOnlyRootFilesystem()).isTrue();
        assertThat(security.getAllowPrivilegeEscalation()).isFalse();
        assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(security.getCapabilities().getAdd()).isNullOrEmpty();
        assertThat(security.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        assertThat(readygate.getResources().getLimits())
                .doesNotContainKey("cpu")
                .containsKey("memory");
        assertThat(readygate.getResources().getRequests()).containsKeys("cpu", "memory");
        // The JVM writes to /tmp: with a read-only root, an emptyDir.
        assertThat(mountPath(readygate, "tmp")).isEqualTo("/tmp");
        assertThat(volume(pod, "tmp").getEmptyDir()).isNotNull();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getShareProcessNamespace()).isNull();
        assertThat(container(pod, "engine").getResources().getLimits()).containsKey("nvidia.com/gpu");
        assertThat(readygate.getResources().getLimits()).doesNotContainKey("nvidia.com/gpu");
    }

    @ParameterizedTest(name = "{0}, monitoring {1}")
    @MethodSource("releases")
    void readygatesConfigurationBindsEveryKeyAndPointsAtWhatTheEngineLeavesOnSharedVolumes(
            String mode, boolean monitoring) throws IOException {
        List<HasMetadata> objects = render(mode, monitoring);
        PodSpec pod = pod(objects);
        Container readygate = container(pod, "readygate");
        Container engine = container(pod, "engine");
        String yaml = readygateConfig(objects);
        ReadygateProperties properties = bindStrictly(yaml);

        assertThat(readygate.getEnv())
                .anySatisfy(env -> {
                    assertThat(env.getName()).isEqualTo("SPRING_CONFIG_ADDITIONAL_LOCATION");
                    assertThat(env.getValue())
                            .isEqualTo("file:" + mountPath(readygate, "config") + "/application.yaml");
                })
                .anySatisfy(env -> {
                    assertThat(env.getName()).isEqualTo("READYGATE_NODE_NAME");
                    assertThat(env.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
                })
                // The pod's UID, from the downward API: a new pod is told from a restart in place by it.
                .anySatisfy(env -> {
                    assertThat(env.getName()).isEqualTo("READYGATE_NODE_PODUID");
                    assertThat(env.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.uid");
                });
        assertThat(properties.engine().baseUrl()).hasToString("http://127.0.0.1:8000");
        assertThat(properties.stateDir()).hasToString(mountPath(readygate, "state"));
        assertThat(properties.restart().readinessObjectives())
                .containsEntry("cold", Duration.ofMinutes(15))
                .containsEntry("preload_hit", Duration.ofMinutes(2))
                .containsEntry("snapshot_restore", Duration.ofMinutes(1))
                .containsEntry("wake", Duration.ofSeconds(30))
                .hasSize(6);

        // The engine writes its log where readygate reads it, on one volume, read-only for readygate.
        var evidence = properties.evidence();
        assertThat(evidence.engineLog()).hasToString(mountPath(readygate, "logs") + "/engine.log");
        assertThat(mountPath(engine, "logs")).isEqualTo(mountPath(readygate, "logs"));
        assertThat(mount(readygate, "logs").getReadOnly()).isTrue();
        assertThat(engine.getEnv())
                .extracting(env -> env.getName() + "=" + env.getValue())
                .contains("READYGATE_MODE=" + mode)
                .contains("READYGATE_ENGINE_LOG=" + evidence.engineLog())
                .contains("READYGATE_CONTAINER_FILE=" + evidence.engineContainerFile())
                .contains("READYGATE_LOG_MAX_BYTES=52428800");
        // The container's start id beside the log, on the volume both share.
        assertThat(evidence.engineContainerFile()).hasToString(mountPath(readygate, "logs") + "/engine-container.json");
        assertThat(engine.getCommand()).containsExactly("/bin/bash", "/opt/readygate/engine-entrypoint.sh");
        assertThat(engine.getArgs()).startsWith("Qwen/Qwen3-0.6B", "--host", "0.0.0.0", "--port", "8000");
        // No VLLM_* variable from the chart: a snapshot's identity includes them.
        assertThat(engine.getEnv()).noneMatch(env -> env.getName().matches("(VLLM|CUDA|NCCL|TORCH|TRITON)_.*"));

        switch (mode) {
            case "plain" -> {
                assertThat(evidence.daemonHealthUrl()).isNull();
                assertThat(evidence.snapshotDir()).isNull();
                assertThat(pod.getVolumes())
                        .extracting(Volume::getName)
                        .doesNotContain("weight-cache-sockets", "snapshot");
            }
            case "preload" -> {
                assertThat(evidence.daemonHealthUrl()).hasToString("http://127.0.0.1:8001/health");
                assertThat(evidence.daemonLog()).hasToString(mountPath(readygate, "logs") + "/daemon.log");
                assertThat(evidence.daemonSocketDir()).hasToString(mountPath(readygate, "weight-cache-sockets"));
                assertThat(mountPath(engine, "weight-cache-sockets"))
                        .isEqualTo(mountPath(readygate, "weight-cache-sockets"));
                assertThat(volume(pod, "weight-cache-sockets").getEmptyDir()).isNotNull();
                assertThat(engine.getEnv())
                        .extracting(env -> env.getName() + "=" + env.getValue())
                        .contains("READYGATE_DAEMON_LOG=" + evidence.daemonLog())
                        .contains("READYGATE_SOCKET_DIR=" + evidence.daemonSocketDir())
                        .contains("READYGATE_DAEMON_HEALTH_PORT="
                                + evidence.daemonHealthUrl().getPort());
                // The engine maps the daemon's weights from the socket directory both share.
                assertThat(engine.getArgs())
                        .containsSubsequence("--load-format", "ipc_cache", "--model-loader-extra-config")
                        .contains("{\"fallback\":true,\"mode\":\"zero_copy\",\"socket_dir\":\""
                                + evidence.daemonSocketDir() + "\"}")
                        .contains("::preload::");
            }
            case "snapshot" -> {
                // readygate (another user) reads the copies the entrypoint keeps of the root-only snapshot files.
                assertThat(evidence.snapshotDir()).hasToString(mountPath(readygate, "snapshot-view"));
                assertThat(mountPath(engine, "snapshot-view")).isEqualTo(mountPath(readygate, "snapshot-view"));
                assertThat(readygate.getVolumeMounts())
                        .extracting(VolumeMount::getName)
                        .doesNotContain("snapshot");
                assertThat(engine.getEnv())
                        .extracting(env -> env.getName() + "=" + env.getValue())
                        .contains("READYGATE_SNAPSHOT_DIR=" + mountPath(engine, "snapshot"))
                        .contains("READYGATE_SNAPSHOT_VIEW=" + evidence.snapshotDir());
                assertThat(volume(pod, "snapshot").getHostPath().getPath())
                        .isEqualTo("/var/lib/vllm/snapshots/qwen3-0.6b");
                assertThat(engine.getSecurityContext().getPrivileged()).isTrue();
            }
            default -> throw new IllegalArgumentException(mode);
        }
        if (monitoring) {
            assertThat(properties.gpu().nvidiaSmi()).hasToString("nvidia-smi");
            assertThat(pod.getShareProcessNamespace()).isTrue();
        }
    }

    @Test
    void prometheusRuleIsTheRulesFileWithTheReleasesLabelsWaitsAndRunbooks() throws IOException {
        PrometheusRule rule = StrictManifests.only(render("plain", true), PrometheusRule.class);
        assertThat(rule.getMetadata().getLabels()).containsEntry("release", "prometheus");
        Map<String, Object> file = Chart.load(Files.readString(Chart.DIRECTORY.resolve("files/readygate-rules.yaml")));
        List<String> fileAlerts = PrometheusRulesTests.alerts(file);
        List<Rule> rules = rule.getSpec().getGroups().stream()
                .filter(group -> group.getName().equals("readygate"))
                .flatMap(group -> group.getRules().stream())
                .toList();
        assertThat(rules).extracting(Rule::getAlert).containsExactlyElementsOf(fileAlerts);
        // Beside the alerts, the recording rules that compare restarts across the fleet, as the file has them.
        Map<String, Object> comparison =
                Chart.load(Files.readString(Chart.DIRECTORY.resolve("files/readygate-comparison-rules.yaml")));
        List<Rule> records = rule.getSpec().getGroups().stream()
                .filter(group -> group.getName().equals("readygate-comparison"))
                .flatMap(group -> group.getRules().stream())
                .toList();
        assertThat(records)
                .extracting(Rule::getRecord)
                .containsExactlyElementsOf(ComparisonRulesTests.records(comparison));
        assertThat(records)
                .allSatisfy(recorded -> assertThat(recorded.getAlert()).isNull());
        assertThat(rules).allSatisfy(alert -> {
            assertThat(alert.getLabels()).containsEntry("team", "llm").containsKey("severity");
            assertThat(alert.getAnnotations().get("runbook_url"))
                    .startsWith("https://git.example.com/readygate/blob/main/docs/operations.md#");
            assertThat(alert.getAnnotations()).containsKeys("summary", "description");
        });
        assertThat(rules)
                .filteredOn(alert -> alert.getAlert().equals("ReadygateNotReadyTooLong"))
                .singleElement()
                .satisfies(alert -> assertThat(alert.getFor()).isEqualTo("45m"));
        assertThat(rules)
                .filteredOn(alert -> alert.getAlert().equals("ReadygateRestartLoop"))
                .singleElement()
                .satisfies(alert -> assertThat(alert.getFor()).isEqualTo("1m"));
        // The expressions are the file's, character for character.
        assertThat(rules.getFirst().getExpr().getStrVal())
                .isEqualTo("readygate_engine_ready == 0\n"
                        + "unless ignoring (state) readygate_engine_state{state=~\"shutting_down|sleeping\"} == 1\n");
    }

    @Test
    void schemaListsEveryAlertTheRulesFileHasForItsWaits() throws IOException {
        Map<String, Object> schema = Chart.load(Files.readString(Chart.DIRECTORY.resolve("values.schema.json")));
        Object names = dig(
                schema,
                "properties",
                "monitoring",
                "properties",
                "prometheusRule",
                "properties",
                "for",
                "propertyNames",
                "enum");
        Map<String, Object> file = Chart.load(Files.readString(Chart.DIRECTORY.resolve("files/readygate-rules.yaml")));
        assertThat(names)
                .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
                .containsExactlyInAnyOrderElementsOf(PrometheusRulesTests.alerts(file));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "engine:\n  modle: Qwen/Qwen3-8B\n",
                "mode: fast\n",
                "readygate:\n  readinessProbe:\n    periodSecond: 2\n",
                "readygate:\n  readinessObjectives:\n    cold: fifteen minutes\n",
                "monitoring:\n  prometheusRule:\n    for:\n      ReadygateNotReadyForLong: 45m\n",
                "podDisruptionBudget:\n  maxUnavailble: 1\n",
                "gateway:\n  enabled: yes please\n",
                "gateway:\n  port: 70000\n"
            })
    void templateWhenAValueIsMisspelledOrInvalidFailsOnTheSchema(String values) {
        assertThat(catchThrowable(() -> Chart.template(workDir, values)))
                .isNotNull()
                .hasMessageContaining("values don't meet the specifications of the schema");
    }

    @Test
    void templateWhenSnapshotModeHasNoSnapshotVolumeFailsSayingSo() {
        assertThat(catchThrowable(() -> Chart.template(workDir, "mode: snapshot\n")))
                .hasMessageContaining("mode snapshot needs snapshot.volume");
    }

    @Test
    void engineApiKeyReachesTheEngineAsEnvironmentAndReadygateAsAFile() throws IOException {
        List<HasMetadata> objects =
                StrictManifests.read(Chart.template(workDir, "engine:\n  apiKey:\n    secretName: vllm-key\n"));
        PodSpec pod = pod(objects);
        Container engine = container(pod, "engine");
        assertThat(engine.getEnv()).anySatisfy(env -> {
            assertThat(env.getName()).isEqualTo("VLLM_API_KEY");
            assertThat(env.getValueFrom().getSecretKeyRef().getName()).isEqualTo("vllm-key");
        });
        ReadygateProperties properties = bindStrictly(readygateConfig(objects));
        assertThat(properties.engine().apiKeyFile())
                .hasToString(mountPath(container(pod, "readygate"), "engine-api-key") + "/api-key");
        assertThat(volume(pod, "engine-api-key").getSecret().getSecretName()).isEqualTo("vllm-key");
        assertThat(catchThrowable(() -> Chart.template(
                        workDir, Chart.values("snapshot", false) + "engine:\n  apiKey:\n    secretName: vllm-key\n")))
                .hasMessageContaining("vLLM restores snapshots of unauthenticated servers only");
    }

    /**
     * Gateway mode (issue 27, item 7): the Service's API port goes to readygate's traffic port, readygate's
     * configuration turns the gateway on at that port, and the probes, {@code /status} and the metrics stay on readygate's
     * own port, never sharing one with traffic. Off by default: the Service goes straight to the engine.
     */
    @Test
    void gatewayModeSendsTheServiceThroughReadygatesTrafficPortAndKeepsTheProbesOnTheirOwn() throws IOException {
        List<HasMetadata> byDefault =
                StrictManifests.read(Chart.template(workDir, "networkPolicy:\n  enabled: true\n"));
        assertThat(StrictManifests.only(byDefault, Service.class).getSpec().getPorts())
                .filteredOn(port -> port.getName().equals("http"))
                .singleElement()
                .satisfies(port -> assertThat(port.getTargetPort().getStrVal()).isEqualTo("http"));
        assertThat(bindStrictly(readygateConfig(byDefault)).gateway().enabled()).isFalse();
        assertThat(container(pod(byDefault), "readygate").getPorts())
                .extracting(ContainerPort::getName)
                .containsExactly("readygate");

        List<HasMetadata> objects = StrictManifests.read(
                Chart.template(workDir, "gateway:\n  enabled: true\n  port: 8080\nnetworkPolicy:\n  enabled: true\n"));

        assertThat(StrictManifests.only(objects, Service.class).getSpec().getPorts())
                .extracting(port -> port.getName() + "->" + port.getTargetPort().getStrVal())
                .containsExactly("http->traffic", "readygate->readygate");
        Container readygate = container(pod(objects), "readygate");
        assertThat(readygate.getPorts())
                .extracting(port -> port.getName() + ":" + port.getContainerPort())
                .containsExactly("readygate:8090", "traffic:8080");
        ReadygateProperties properties = bindStrictly(readygateConfig(objects));
        assertThat(properties.gateway().enabled()).isTrue();
        assertThat(properties.gateway().port()).isEqualTo(8080);
        assertThat(properties.gateway().hold()).isFalse();
        assertThat(properties.gateway().retryBeforeFirstByte()).isFalse();
        ReadygateProperties holding = bindStrictly(readygateConfig(StrictManifests.read(
                Chart.template(workDir, "gateway:\n  enabled: true\n  hold: true\n  retryBeforeFirstByte: true\n"))));
        assertThat(holding.gateway().hold()).isTrue();
        assertThat(holding.gateway().retryBeforeFirstByte()).isTrue();
        // The kubelet's probes stay on readygate's own port, never the traffic port.
        for (Probe probe :
                List.of(readygate.getReadinessProbe(), readygate.getLivenessProbe(), readygate.getStartupProbe())) {
            assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("readygate");
        }
        // From outside, the API is reachable through the gateway only: the engine's own port is not let in.
        assertThat(StrictManifests.only(objects, NetworkPolicy.class).getSpec().getIngress())
                .flatExtracting(rule -> rule.getPorts())
                .extracting(port -> port.getPort().getStrVal())
                .containsExactly("traffic", "readygate");
        assertThat(Chart.lint(workDir, "gateway:\n  enabled: true\n").isFailed())
                .isFalse();
        // In the traffic path readygate runs gateway mode's JVM flags (C2 too), which replace the image's whole; the
        // sidecar alone keeps the image's (C1 alone); an empty gateway.jdkJavaOptions keeps them in gateway mode too.
        assertThat(readygate.getEnv())
                .filteredOn(env -> env.getName().equals("JDK_JAVA_OPTIONS"))
                .singleElement()
                .satisfies(env -> assertThat(env.getValue())
                        .contains("-XX:ReservedCodeCacheSize=64m")
                        .doesNotContain("TieredStopAtLevel"));
        assertThat(container(pod(byDefault), "readygate").getEnv())
                .extracting(EnvVar::getName)
                .doesNotContain("JDK_JAVA_OPTIONS");
        assertThat(container(
                                pod(StrictManifests.read(Chart.template(
                                        workDir, "gateway:\n  enabled: true\n  jdkJavaOptions: \"\"\n"))),
                                "readygate")
                        .getEnv())
                .extracting(EnvVar::getName)
                .doesNotContain("JDK_JAVA_OPTIONS");
    }

    /**
     * With the gateway on, the pod's readiness follows the engine by default ({@code /readyz}), or, with
     * {@code gateway.podReadiness: gateway}, readygate's traffic port ({@code /readyz/gateway}), on readygate's own port
     * either way; the latter without the gateway is refused, naming both values.
     */
    @Test
    void thePodsReadinessFollowsTheEngineOrWithGatewayPodReadinessTheTrafficPort() throws IOException {
        Probe byDefault = container(
                        pod(StrictManifests.read(Chart.template(workDir, "gateway:\n  enabled: true\n"))), "readygate")
                .getReadinessProbe();
        assertThat(byDefault.getHttpGet().getPath()).isEqualTo("/readyz");

        Probe onTheGateway = container(
                        pod(StrictManifests.read(
                                Chart.template(workDir, "gateway:\n  enabled: true\n  podReadiness: gateway\n"))),
                        "readygate")
                .getReadinessProbe();
        assertThat(onTheGateway.getHttpGet().getPath()).isEqualTo("/readyz/gateway");
        assertThat(onTheGateway.getHttpGet().getPort().getStrVal()).isEqualTo("readygate");
        assertThat(onTheGateway.getPeriodSeconds()).isEqualTo(byDefault.getPeriodSeconds());

        assertThat(catchThrowable(() -> Chart.template(workDir, "gateway:\n  podReadiness: gateway\n")))
                .hasMessageContaining("gateway.podReadiness gateway needs gateway.enabled");
        assertThat(catchThrowable(() -> Chart.template(workDir, "gateway:\n  enabled: true\n  podReadiness: pod\n")))
                .hasMessageContaining("podReadiness");
    }

    /**
     * Gateway mode's stop (issue 27, item 4) fits the pod's: readygate forwards as before through its preStop sleep
     * ({@code gateway.preStopSeconds}, while endpoints and clients forget the pod), then on SIGTERM drains for
     * {@code readygate.gateway.drain-timeout}; the two together are shorter than the engine's preStop, during which the
     * engine still serves, itself shorter than the grace period; values that do not fit are refused, naming them.
     */
    @Test
    void gatewayModesDrainFitsWithinTheEnginesDrainWithinTheGracePeriodAndValuesThatDoNotFitAreRefused()
            throws IOException {
        List<HasMetadata> objects = StrictManifests.read(Chart.template(workDir, "gateway:\n  enabled: true\n"));
        PodSpec pod = pod(objects);
        Duration drain = bindStrictly(readygateConfig(objects)).gateway().drainTimeout();
        Duration forwarding = Duration.ofSeconds(container(pod, "readygate")
                .getLifecycle()
                .getPreStop()
                .getSleep()
                .getSeconds());
        Duration engineDrain = Duration.ofSeconds(
                container(pod, "engine").getLifecycle().getPreStop().getSleep().getSeconds());
        Duration grace = Duration.ofSeconds(pod.getTerminationGracePeriodSeconds());

        assertThat(forwarding).isEqualTo(Duration.ofSeconds(2));
        assertThat(drain).isEqualTo(Duration.ofSeconds(7));
        assertThat(forwarding.plus(drain)).isLessThan(engineDrain);
        assertThat(engineDrain).isLessThan(grace);
        // preStopSeconds 0: SIGTERM at once, no lifecycle on readygate's container.
        assertThat(container(
                                pod(StrictManifests.read(
                                        Chart.template(workDir, "gateway:\n  enabled: true\n  preStopSeconds: 0\n"))),
                                "readygate")
                        .getLifecycle())
                .isNull();
        // Without the gateway, readygate keeps watching the engine through the engine's drain, as before.
        assertThat(container(pod(StrictManifests.read(Chart.template(workDir, ""))), "readygate")
                        .getLifecycle()
                        .getPreStop()
                        .getSleep()
                        .getSeconds())
                .isEqualTo(10L);

        assertThat(catchThrowable(() -> Chart.template(workDir, "gateway:\n  enabled: true\n  drainSeconds: 8\n")))
                .hasMessageContaining(
                        "gateway.preStopSeconds (2) + gateway.drainSeconds (8) must be shorter than engine.drainSeconds (10)");
        assertThat(catchThrowable(() -> Chart.template(workDir, "gateway:\n  enabled: true\n  preStopSeconds: -1\n")))
                .hasMessageContaining("preStopSeconds");
        assertThat(catchThrowable(() ->
                        Chart.template(workDir, "gateway:\n  enabled: true\nterminationGracePeriodSeconds: 10\n")))
                .hasMessageContaining(
                        "engine.drainSeconds (10) must be shorter than terminationGracePeriodSeconds (10)");
        // Longer drains fit when every value is raised together.
        assertThat(bindStrictly(readygateConfig(StrictManifests.read(Chart.template(
                                workDir,
                                "gateway:\n  enabled: true\n  drainSeconds: 15\nengine:\n  drainSeconds: 18\n"))))
                        .gateway()
                        .drainTimeout())
                .isEqualTo(Duration.ofSeconds(15));
    }

    @Test
    void listenAddressIsEveryInterfaceByDefaultAndCanBeThePodIp() throws IOException {
        String byDefault = readygateConfig(StrictManifests.read(Chart.template(workDir, "")));
        assertThat(Chart.load(byDefault))
                .extractingByKey("server")
                .asInstanceOf(MAP)
                .doesNotContainKey("address");
        List<HasMetadata> objects =
                StrictManifests.read(Chart.template(workDir, "readygate:\n  listenAddress: \"${POD_IP}\"\n"));
        assertThat(Chart.load(readygateConfig(objects)))
                .extractingByKey("server")
                .asInstanceOf(MAP)
                .containsEntry("address", "${POD_IP}")
                .containsEntry("port", 8090);
        assertThat(container(pod(objects), "readygate").getEnv()).anySatisfy(env -> {
            assertThat(env.getName()).isEqualTo("POD_IP");
            assertThat(env.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");
        });
        // The server settings go through readygate.config and bind.
        ReadygateProperties properties = bindStrictly(readygateConfig(StrictManifests.read(Chart.template(
                workDir,
                "readygate:\n  config:\n    server:\n      max-connections: 512\n      idle-timeout: 30s\n"))));
        assertThat(properties.server().maxConnections()).isEqualTo(512);
        assertThat(properties.server().idleTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void strictReadingWhenADeploymentHasAMisspelledFieldFails() {
        Map<String, Object> deployment = renderedDocument("Deployment");
        Map<String, Object> container = firstContainer(deployment);
        container.put("readinesProbe", container.remove("readinessProbe"));
        assertThat(catchThrowable(() -> StrictManifests.read(deployment)))
                .hasMessageContaining("Deployment")
                .hasMessageContaining("readinesProbe");
    }

    @Test
    void strictReadingWhenAnEnvironmentValueIsANumberFails() {
        Map<String, Object> deployment = renderedDocument("Deployment");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> env =
                (List<Map<String, Object>>) firstContainer(deployment).get("env");
        env.getFirst().put("value", 8000);
        assertThat(catchThrowable(() -> StrictManifests.read(deployment))).hasMessageContaining("Deployment");
    }

    @Test
    void strictReadingWhenAPrometheusRuleHasAMisspelledFieldFails() {
        Map<String, Object> prometheusRule = renderedDocument("PrometheusRule");
        @SuppressWarnings("unchecked")
        Map<String, Object> first = ((List<Map<String, Object>>)
                        ((List<Map<String, Object>>) ((Map<String, Object>) prometheusRule.get("spec")).get("groups"))
                                .getFirst()
                                .get("rules"))
                .getFirst();
        first.put("anotations", first.remove("annotations"));
        assertThat(catchThrowable(() -> StrictManifests.read(prometheusRule)))
                .hasMessageContaining("PrometheusRule")
                .hasMessageContaining("anotations");
    }

    @Test
    void strictReadingWhenAServiceMonitorHasAMisspelledFieldFails() {
        Map<String, Object> serviceMonitor = renderedDocument("ServiceMonitor");
        @SuppressWarnings("unchecked")
        Map<String, Object> spec = (Map<String, Object>) serviceMonitor.get("spec");
        spec.put("endpoint", spec.remove("endpoints"));
        assertThat(catchThrowable(() -> StrictManifests.read(serviceMonitor))).hasMessageContaining("endpoint");
    }

    private Map<String, Object> renderedDocument(String kind) {
        List<Map<String, Object>> documents =
                StrictManifests.documents(Chart.template(workDir, Chart.values("preload", true)));
        Map<String, Object> document = documents.stream()
                .filter(candidate -> kind.equals(candidate.get("kind")))
                .findFirst()
                .orElseThrow();
        // As rendered, it reads.
        assertThat(StrictManifests.read(document).getKind()).isEqualTo(kind);
        return document;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> firstContainer(Map<String, Object> deployment) {
        Object containers = dig(deployment, "spec", "template", "spec", "containers");
        return ((List<Map<String, Object>>) containers).getFirst();
    }

    @SuppressWarnings("unchecked")
    private static Object dig(Map<String, Object> map, String... path) {
        Object at = map;
        for (String key : path) {
            at = ((Map<String, Object>) at).get(key);
        }
        return at;
    }

    /**
     * Binds readygate.* from the rendered application.yaml as readygate's start does (the YAML read by Spring Boot,
     * readygate's converters, its unknown-setting check), failing on any key it does not know.
     */
    static ReadygateProperties bindStrictly(String applicationYaml) {
        return SettingsStart.settings()
                .yaml(applicationYaml)
                .withoutDefaultEngine()
                .start()
                .started()
                .readygate();
    }

    /** The application.yaml readygate reads, from its ConfigMap (the dashboard has another). */
    static String readygateConfig(List<HasMetadata> objects) {
        return objects.stream()
                .filter(object -> object instanceof ConfigMap
                        && object.getMetadata().getName().equals("qwen-readygate"))
                .map(object -> ((ConfigMap) object).getData().get("application.yaml"))
                .findFirst()
                .orElseThrow();
    }

    static PodSpec pod(List<HasMetadata> objects) {
        return StrictManifests.only(objects, Deployment.class)
                .getSpec()
                .getTemplate()
                .getSpec();
    }

    static Container container(PodSpec pod, String name) {
        return pod.getContainers().stream()
                .filter(container -> container.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no container " + name));
    }

    static Volume volume(PodSpec pod, String name) {
        return pod.getVolumes().stream()
                .filter(volume -> volume.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name));
    }

    static VolumeMount mount(Container container, String volume) {
        return container.getVolumeMounts().stream()
                .filter(mount -> mount.getName().equals(volume))
                .findFirst()
                .orElseThrow(() -> new AssertionError(container.getName() + " does not mount " + volume));
    }

    static String mountPath(Container container, String volume) {
        return Objects.requireNonNull(mount(container, volume).getMountPath());
    }
}
