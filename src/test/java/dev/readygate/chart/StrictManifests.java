package dev.readygate.chart;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.JacksonAnnotationIntrospector;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Reads rendered manifests into fabric8's Kubernetes and Prometheus Operator models, strictly: a field the API
 * does not have, or a value of the wrong type, fails instead of landing in the models' catch-all
 * {@code additionalProperties} (fabric8 keeps unknown fields there through {@code @JsonAnySetter}, which this reader
 * turns off). Argo Rollouts' and Flagger's custom resources, which fabric8 has no models for, are validated against
 * their CRDs' schemas ({@link CrdSchemas}) and read as generic resources, their metadata strictly. Every kind the
 * chart renders is listed; any other kind fails too.
 */
final class StrictManifests {

    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.ofEntries(
            Map.entry("v1/ConfigMap", ConfigMap.class),
            Map.entry("v1/Service", Service.class),
            Map.entry("v1/ServiceAccount", ServiceAccount.class),
            Map.entry("apps/v1/Deployment", Deployment.class),
            Map.entry("policy/v1/PodDisruptionBudget", PodDisruptionBudget.class),
            Map.entry("networking.k8s.io/v1/NetworkPolicy", NetworkPolicy.class),
            Map.entry("monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor.class),
            Map.entry("monitoring.coreos.com/v1/PodMonitor", PodMonitor.class),
            Map.entry("monitoring.coreos.com/v1/PrometheusRule", PrometheusRule.class),
            Map.entry("rbac.authorization.k8s.io/v1/Role", Role.class),
            Map.entry("rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding.class));

    private static final ObjectMapper strict = strictMapper();

    private StrictManifests() {}

    private static ObjectMapper strictMapper() {
        JsonMapper mapper = JsonMapper.builder()
                .annotationIntrospector(new JacksonAnnotationIntrospector() {
                    @Override
                    public Boolean hasAnySetter(Annotated annotated) {
                        return false;
                    }
                })
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                // The API server takes no "8090" for a number, nor 8090 or true for a string.
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .build();
        mapper.coercionConfigFor(LogicalType.Textual)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        return mapper;
    }

    /** The YAML documents of a manifest stream, as plain maps (empty documents left out). */
    static List<Map<String, Object>> documents(String yaml) {
        List<Map<String, Object>> documents = new ArrayList<>();
        for (Object document : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) {
            if (document != null) {
                @SuppressWarnings("unchecked")
                Map<String, Object> map = (Map<String, Object>) document;
                documents.add(map);
            }
        }
        return documents;
    }

    /** Every document of {@code yaml} as its Kubernetes object; fails on the first that is not one, naming it. */
    static List<HasMetadata> read(String yaml) {
        return documents(yaml).stream().map(StrictManifests::read).toList();
    }

    static HasMetadata read(Map<String, Object> document) {
        String type = document.get("apiVersion") + "/" + document.get("kind");
        if (CrdSchemas.defines(type)) {
            return readCustom(type, document);
        }
        Class<? extends HasMetadata> kind = Objects.requireNonNull(
                KINDS.get(type), () -> "the chart renders a kind these tests do not know: " + type);
        try {
            return strict.convertValue(document, kind);
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(
                    type + " is not a valid " + kind.getSimpleName() + ": " + ex.getMessage(), ex);
        }
    }

    private static HasMetadata readCustom(String type, Map<String, Object> document) {
        List<String> violations = CrdSchemas.violations(type, document);
        if (!violations.isEmpty()) {
            throw new IllegalArgumentException(type + " does not meet its CRD's schema: " + violations);
        }
        try {
            strict.convertValue(document.get("metadata"), ObjectMeta.class);
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(type + " has invalid metadata: " + ex.getMessage(), ex);
        }
        // The spec was checked above; a generic resource keeps it as it is.
        return new ObjectMapper().convertValue(document, GenericKubernetesResource.class);
    }

    /** The single object of {@code type} in {@code objects}. */
    static <T extends HasMetadata> T only(List<HasMetadata> objects, Class<T> type) {
        List<T> found =
                objects.stream().filter(type::isInstance).map(type::cast).toList();
        if (found.size() != 1) {
            throw new AssertionError("expected one " + type.getSimpleName() + ", found " + found.size());
        }
        return found.getFirst();
    }
}
