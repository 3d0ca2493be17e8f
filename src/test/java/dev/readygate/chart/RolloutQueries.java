package dev.readygate.chart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The canary analysis queries of {@code charts/readygate/files/rollout-queries.yaml}, expanded the way the chart's
 * templates expand them ({@code readygate.rolloutQuery} in {@code _helpers.tpl}), and then filled in the way Argo
 * Rollouts and Flagger fill in their variables for a release {@code qwen} in namespace {@code llm}.
 */
final class RolloutQueries {

    static final Path FILE = Chart.DIRECTORY.resolve("files/rollout-queries.yaml");

    /** What the analysis controllers fill in: the release's target, namespace and pod-template hashes. */
    static final Map<String, String> CONTROLLER_VARIABLES = Map.of(
            "{{args.canary-hash}}", "6f7d9c8b5",
            "{{args.stable-hash}}", "5c8d7b6f9",
            "{{ namespace }}", "llm",
            "{{ target }}", "qwen-readygate");

    /** The two analysis controllers the chart renders queries for. */
    enum Flavour {
        ARGO("argo"),
        FLAGGER("flagger");

        final String key;

        Flavour(String key) {
            this.key = key;
        }
    }

    /** A query: its name, PromQL with placeholders, Argo conditions and Flagger threshold range. */
    record Query(
            String name, String expr, String successCondition, String failureCondition, Map<String, Object> range) {}

    private final Map<String, Object> file;

    private RolloutQueries(Map<String, Object> file) {
        this.file = file;
    }

    static RolloutQueries load() {
        try {
            return new RolloutQueries(Chart.load(Files.readString(FILE)));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @SuppressWarnings("unchecked")
    List<Query> queries() {
        return ((List<Map<String, Object>>) file.get("queries"))
                .stream()
                        .map(query -> {
                            Map<String, Object> argo = (Map<String, Object>) query.get("argo");
                            Map<String, Object> flagger = (Map<String, Object>) query.get("flagger");
                            return new Query(
                                    (String) query.get("name"),
                                    (String) query.get("expr"),
                                    (String) argo.get("successCondition"),
                                    (String) argo.get("failureCondition"),
                                    (Map<String, Object>) flagger.get("thresholdRange"));
                        })
                        .toList();
    }

    Query query(String name) {
        return queries().stream()
                .filter(query -> query.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no query " + name + " in " + FILE));
    }

    /** The query as the chart renders it for this flavour, release namespace and latency ratio. */
    @SuppressWarnings("unchecked")
    String rendered(Query query, Flavour flavour, String namespace, String maxLatencyRatio) {
        Map<String, String> selectors = ((Map<String, Map<String, String>>) file.get("selectors")).get(flavour.key);
        return query.expr()
                .replace("$verified", (String) file.get("verified"))
                .replace("$canary", selectors.get("canary"))
                .replace("$stable", selectors.get("stable"))
                .replace("$namespace", namespace)
                .replace("$maxLatencyRatio", maxLatencyRatio);
    }

    /** The rendered query as the analysis controller runs it, with its variables filled in. */
    static String filled(String rendered) {
        String filled = rendered;
        for (Map.Entry<String, String> variable : CONTROLLER_VARIABLES.entrySet()) {
            filled = filled.replace(variable.getKey(), variable.getValue());
        }
        return filled;
    }
}
