package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.ModelCard;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.MetricsEvidence;
import dev.readygate.secret.SecretRedaction;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * {@code /status}'s {@code engine} section: where the engine is (its base URL without secrets), what it serves, its
 * last usable {@code /metrics} sample, its endpoints and capabilities, and what of {@code /metrics} is lost.
 */
@Component
final class EngineSection {

    /**
     * The endpoints and capabilities shown: each as the engine's surface describes it, unless the whole of
     * {@code /metrics} is lost, when what readygate reads from it says so.
     */
    record Seen(Map<String, String> endpoints, Map<String, String> capabilities) {}

    private final ReadygateProperties properties;

    EngineSection(ReadygateProperties properties) {
        this.properties = properties;
    }

    Map<String, Object> of(EngineFacts facts) {
        Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("baseUrl", SecretRedaction.redact(properties.engine().requiredBaseUrl()));
        ModelCard card = facts.card();
        EngineSurface surface = facts.capabilities().surface();
        engine.put("dialect", surface == null ? null : surface.dialect().value());
        engine.put("dialectEvidence", surface == null ? null : surface.dialectEvidence());
        // What readygate cannot see of this engine (issue 29 item 6: SGLang's, and every dialect's).
        engine.put("unseen", surface == null ? List.of() : surface.dialect().unseen());
        engine.put("model", card == null ? null : card.id());
        engine.put("root", card == null ? null : card.root());
        engine.put("maxModelLen", card == null ? null : card.maxModelLen());
        engine.put("maxModelLenSource", surface == null ? null : surface.maxModelLenSource());
        engine.put("version", surface == null ? facts.vllmVersion() : surface.version());
        engine.put("versionSource", surface == null ? null : surface.versionSource());
        engine.put("vllmVersion", facts.vllmVersion());
        EngineMetricsSample metrics = facts.lastSample();
        MetricsEvidence evidence = facts.metricsEvidence();
        if (metrics != null) {
            engine.put("metrics", metrics(metrics, evidence));
        }
        Seen seen = seen(
                facts.capabilities().describe(),
                facts.capabilities().capabilities(metrics),
                evidence.lost().get(MetricsEvidence.Part.METRICS));
        engine.put("endpoints", seen.endpoints());
        engine.put("capabilities", seen.capabilities());
        engine.put("problems", surface == null ? List.of() : surface.problems());
        engine.put("lostEvidence", lostEvidence(evidence));
        return engine;
    }

    private static Map<String, Object> metrics(EngineMetricsSample metrics, MetricsEvidence evidence) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("processStartTimeSeconds", metrics.processStartTimeSeconds());
        m.put("requestsRunning", metrics.requestsRunning());
        m.put("requestsWaiting", metrics.requestsWaiting());
        m.put("kvCacheSizeTokens", metrics.kvCacheSizeTokens());
        Instant sampled = evidence.lastUsableAt();
        m.put("sampledAt", sampled == null ? null : sampled.toString());
        // The values above are of the last usable scrape: say so when the latest gave nothing usable.
        m.put("stale", !evidence.usable());
        m.put("families", List.copyOf(new TreeSet<>(metrics.families())));
        return m;
    }

    /**
     * The endpoints and capabilities to show, given the whole of {@code /metrics} lost ({@code whole}) or not: what
     * readygate can see was read from the last usable scrape, so not while nothing usable comes.
     */
    static Seen seen(Map<String, String> described, Map<String, String> capable, MetricsEvidence.@Nullable Loss whole) {
        Map<String, String> endpoints = new LinkedHashMap<>(described);
        Map<String, String> capabilities = new LinkedHashMap<>(capable);
        if (whole != null && endpoints.containsKey("metrics")) {
            String lost = "lost since " + whole.since() + ": " + whole.why();
            endpoints.put("metrics", lost);
            capabilities.computeIfPresent("busyDetection", (key, was) -> "no, for now: /metrics " + lost);
            capabilities.computeIfPresent(
                    "restartDetection", (key, was) -> "nothing from /metrics for now (" + lost + "); otherwise " + was);
        }
        return new Seen(endpoints, capabilities);
    }

    /** What restart and busy detection lost from {@code /metrics}: each part, since when, why, what it costs. */
    static List<Map<String, String>> lostEvidence(MetricsEvidence evidence) {
        return evidence.lost().entrySet().stream()
                .map(lost -> {
                    Map<String, String> out = new LinkedHashMap<>();
                    out.put("evidence", lost.getKey().value());
                    out.put("source", lost.getKey().source());
                    out.put("since", lost.getValue().since().toString());
                    out.put("why", lost.getValue().why());
                    out.put("readygateCannot", lost.getKey().cannot());
                    return out;
                })
                .toList();
    }
}
