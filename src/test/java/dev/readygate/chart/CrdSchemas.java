package dev.readygate.chart;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.dialect.Dialect;
import com.networknt.schema.dialect.Dialects;
import com.networknt.schema.keyword.NonValidationKeyword;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@code openAPIV3Schema} that Argo Rollouts and Flagger publish for the custom resources the chart renders
 * ({@code src/test/resources/crds}, with where each came from), as JSON Schemas that validate as strictly as the API
 * server's strict field validation: an object schema that lists {@code properties} admits no other field, unless it
 * has {@code additionalProperties} or {@code x-kubernetes-preserve-unknown-fields}.
 */
final class CrdSchemas {

    static final Path DIRECTORY = Path.of("src/test/resources/crds");

    /** apiVersion/kind of each custom resource, and the CRD file that defines it. */
    private static final Map<String, String> FILES = Map.of(
            "argoproj.io/v1alpha1/AnalysisTemplate", "argo-rollouts-analysistemplate-crd.yaml",
            "flagger.app/v1beta1/MetricTemplate", "flagger-metrictemplate-crd.yaml");

    private static final JsonMapper json = JsonMapper.builder().build();

    /**
     * JSON Schema draft 4, which OpenAPI 3.0's schema objects follow, knowing the Kubernetes extensions: the two that
     * change what validates are applied by {@link #closed}, the rest say nothing about validity.
     */
    private static final Dialect KUBERNETES = Dialect.builder(Dialects.getDraft4())
            .keyword(new NonValidationKeyword("x-kubernetes-int-or-string"))
            .keyword(new NonValidationKeyword("x-kubernetes-preserve-unknown-fields"))
            .keyword(new NonValidationKeyword("x-kubernetes-list-type"))
            .keyword(new NonValidationKeyword("x-kubernetes-list-map-keys"))
            .build();

    private static final Map<String, Schema> schemas = new LinkedHashMap<>();

    private CrdSchemas() {}

    /** Whether a CRD here defines {@code apiVersion/kind}. */
    static boolean defines(String type) {
        return FILES.containsKey(type);
    }

    /** What the CRD's schema finds wrong with {@code document} (of {@code apiVersion/kind} {@code type}): none if valid. */
    static List<String> violations(String type, Map<String, Object> document) {
        return schema(type).validate(json.valueToTree(document)).stream()
                .map(Error::toString)
                .toList();
    }

    private static synchronized Schema schema(String type) {
        return schemas.computeIfAbsent(type, CrdSchemas::load);
    }

    private static Schema load(String type) {
        String file = FILES.get(type);
        if (file == null) {
            throw new IllegalArgumentException("no CRD here defines " + type);
        }
        String version = type.substring(type.indexOf('/') + 1, type.lastIndexOf('/'));
        try {
            JsonNode crd = json.valueToTree(Chart.load(Files.readString(DIRECTORY.resolve(file))));
            JsonNode openApi = Optional.ofNullable(crd.path("spec").path("versions"))
                    .flatMap(versions -> versions.valueStream()
                            .filter(candidate ->
                                    version.equals(candidate.path("name").asString()))
                            .findFirst())
                    .map(served -> served.path("schema").path("openAPIV3Schema"))
                    .filter(JsonNode::isObject)
                    .orElseThrow(() -> new IllegalStateException(file + " has no openAPIV3Schema for " + version));
            return SchemaRegistry.withDefaultDialect(KUBERNETES).getSchema(closed(openApi.deepCopy()));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The schema with every object that lists its properties closed to others, as the API server reads it. */
    static JsonNode closed(JsonNode schema) {
        if (schema instanceof ObjectNode object) {
            if (object.has("properties")
                    && !object.has("additionalProperties")
                    && !object.path("x-kubernetes-preserve-unknown-fields").asBoolean(false)) {
                object.put("additionalProperties", false);
            }
            object.forEachEntry((name, child) -> closed(child));
        } else if (schema.isArray()) {
            schema.forEach(CrdSchemas::closed);
        }
        return schema;
    }
}
