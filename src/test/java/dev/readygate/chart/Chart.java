package dev.readygate.chart;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The chart in {@code charts/readygate}, driven through Helm's own library (helm-java): rendered or linted as a
 * release named {@code qwen} in namespace {@code llm}, with values given as YAML.
 */
final class Chart {

    static final Path DIRECTORY = Path.of("charts/readygate");

    /** Cluster version for rendering: the oldest the chart supports (Chart.yaml's kubeVersion). */
    static final String KUBE_VERSION = "1.30.0";

    private Chart() {}

    /** {@code helm template qwen charts/readygate -n llm -f values}. */
    static String template(Path workDir, String valuesYaml) {
        return new Helm(DIRECTORY)
                .template()
                .withName("qwen")
                .withNamespace("llm")
                .withKubeVersion(KUBE_VERSION)
                .withValuesFile(
                        write(workDir.resolve("values-" + Math.abs(valuesYaml.hashCode()) + ".yaml"), valuesYaml))
                .call();
    }

    /**
     * {@code helm lint --strict} with {@code valuesYaml} over the chart's values: helm-java's lint takes no values,
     * so it lints a copy of the chart whose values.yaml has them merged in.
     */
    static LintResult lint(Path workDir, String valuesYaml) {
        Path copy = workDir.resolve("lint-" + Math.abs(valuesYaml.hashCode())).resolve("readygate");
        try (Stream<Path> files = Files.walk(DIRECTORY)) {
            for (Path file : files.toList()) {
                Path target = copy.resolve(DIRECTORY.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target);
                }
            }
            Map<String, Object> values = load(Files.readString(DIRECTORY.resolve("values.yaml")));
            merge(values, load(valuesYaml));
            DumperOptions options = new DumperOptions();
            options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
            Files.writeString(copy.resolve("values.yaml"), new Yaml(options).dump(values));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return new Helm(copy).lint().strict().call();
    }

    static Map<String, Object> load(String yaml) {
        Map<String, Object> map = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        return map == null ? new LinkedHashMap<>() : map;
    }

    @SuppressWarnings("unchecked")
    static void merge(Map<String, Object> into, Map<String, Object> over) {
        over.forEach((key, value) -> {
            if (value instanceof Map<?, ?> map && into.get(key) instanceof Map<?, ?> existing) {
                merge((Map<String, Object>) existing, (Map<String, Object>) map);
            } else {
                into.put(key, value);
            }
        });
    }

    private static Path write(Path file, String content) {
        try {
            return Files.writeString(file, content);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * The values of each mode the tests render, with monitoring (and the network policy, GPU reading, the rollout
     * analysis templates) on or off.
     */
    static String values(String mode, boolean monitoring) {
        StringBuilder yaml = new StringBuilder("mode: " + mode + "\n");
        if (mode.equals("snapshot")) {
            yaml.append("""
                    snapshot:
                      volume:
                        hostPath:
                          path: /var/lib/vllm/snapshots/qwen3-0.6b
                          type: Directory
                    """);
        }
        if (monitoring) {
            yaml.append("""
                    monitoring:
                      podAnnotations: true
                      serviceMonitor:
                        enabled: true
                        labels:
                          release: prometheus
                      podMonitor:
                        enabled: true
                      prometheusRule:
                        enabled: true
                        labels:
                          release: prometheus
                        alertLabels:
                          team: llm
                        for:
                          ReadygateNotReadyTooLong: 45m
                        runbookBaseUrl: https://git.example.com/readygate/blob/main/
                      dashboard:
                        enabled: true
                    networkPolicy:
                      enabled: true
                      apiFrom:
                        - podSelector:
                            matchLabels:
                              app: gateway
                    readygate:
                      gpu:
                        enabled: true
                    rollout:
                      argo:
                        enabled: true
                      flagger:
                        enabled: true
                    """);
        }
        return yaml.toString();
    }

    static final List<String> MODES = List.of("plain", "preload", "snapshot");
}
