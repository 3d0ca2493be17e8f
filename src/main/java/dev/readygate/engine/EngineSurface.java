package dev.readygate.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What one engine start really offers, found out by asking it ({@link EngineDiscovery}): which dialect it speaks and
 * why readygate thinks so, what each optional endpoint answered, its context length and version and where they came
 * from, and the configuration problems that showed. Immutable; one per engine start.
 *
 * @param dialect the engine's dialect
 * @param dialectEvidence the observation that decided it
 * @param endpoints what each optional endpoint answered, in a fixed order
 * @param maxModelLen the most prompt plus output tokens of one request, or null when nothing says
 * @param maxModelLenSource where {@code maxModelLen} came from, or why it is unknown
 * @param version the engine's version or build, or null
 * @param versionSource where {@code version} came from, or why it is unknown
 * @param metricFamilies the metric name prefixes its {@code /metrics} had ({@code vllm:}, {@code llamacpp:}, ...),
 *     empty when it has none
 * @param problems configuration that does not fit what the engine said, one line each
 * @param slots how many requests it serves at once, where it says (llama.cpp's {@code total_slots}), or null
 */
public record EngineSurface(
        EngineDialect dialect,
        String dialectEvidence,
        Map<Endpoint, Observed> endpoints,
        @Nullable Integer maxModelLen,
        String maxModelLenSource,
        @Nullable String version,
        String versionSource,
        Set<String> metricFamilies,
        List<String> problems,
        @Nullable Integer slots) {

    public EngineSurface {
        endpoints = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(endpoints));
        metricFamilies = Set.copyOf(metricFamilies);
        problems = List.copyOf(problems);
    }

    /** The optional endpoints readygate asks about. */
    public enum Endpoint {
        TOKENIZE("/tokenize"),
        DETOKENIZE("/detokenize"),
        VERSION("/version"),
        SERVER_INFO("server information"),
        METRICS("/metrics");

        private final String path;

        Endpoint(String path) {
            this.path = path;
        }

        /** The key in {@code /status}: {@code tokenize}, {@code serverInfo}, ... */
        public String key() {
            return this == SERVER_INFO ? "serverInfo" : name().toLowerCase(Locale.ROOT);
        }

        public String path() {
            return path;
        }
    }

    /** Whether an endpoint can be used. */
    public enum Availability {
        /** It answered what readygate needs. */
        USABLE,
        /** It answered, but not in a form readygate can use (e.g. 200 with no token ids). */
        UNUSABLE,
        /** This server does not have it (404, 405, 501). */
        MISSING,
        /** Asking failed otherwise (timeout, 5xx): unknown for now. */
        FAILED;

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * What asking one endpoint showed.
     *
     * @param availability whether readygate can use it
     * @param observation what the engine answered, in a few words
     */
    public record Observed(Availability availability, String observation) {

        public boolean usable() {
            return availability == Availability.USABLE;
        }

        /** As {@code /status} shows it: {@code usable: /tokenize {content} gave 11 ids for a 9-word text}. */
        public String describe() {
            return availability.value() + ": " + observation;
        }
    }

    /** What was found out about {@code endpoint}; {@code MISSING} for one not asked about. */
    public Observed endpoint(Endpoint endpoint) {
        Observed observed = endpoints.get(endpoint);
        return observed != null ? observed : new Observed(Availability.MISSING, "not asked");
    }

    /** Whether prompts can be built from the engine's own token ids. */
    public boolean tokenizeUsable() {
        return endpoint(Endpoint.TOKENIZE).usable();
    }

    /** Whether {@code /version} answers (vLLM's; a changed version means another engine). */
    public boolean versionEndpointUsable() {
        return endpoint(Endpoint.VERSION).usable();
    }

    /** Whether {@code /metrics} answers with any series readygate reads. */
    public boolean metricsUsable() {
        return endpoint(Endpoint.METRICS).usable();
    }

    /** {@code card} with this start's context length. */
    public ModelCard applyTo(ModelCard card) {
        return card.maxModelLen() != null || maxModelLen == null ? card : card.withMaxModelLen(maxModelLen);
    }

    /**
     * What readygate can and cannot see of this engine, each with the observation that shows it: busy detection,
     * restart detection, the restart paths. {@code latest} is the latest metrics scrape (null without one).
     */
    public Map<String, String> capabilities(@Nullable EngineMetricsSample latest) {
        Map<String, String> out = new LinkedHashMap<>();
        Set<String> families = latest != null ? latest.families() : metricFamilies;
        boolean metrics = metricsUsable() || latest != null;
        String vllmSeries = families.contains("vllm:") ? "vllm:* series" : "no vllm:* series";
        String engineSeries = dialect != EngineDialect.VLLM
                        && !dialect.metricPrefix().isEmpty()
                        && families.contains(dialect.metricPrefix())
                ? ", " + dialect.metricPrefix() + "* series"
                : "";
        boolean busy = latest != null && latest.requestsRunning() != null && latest.generationTokens() != null;
        out.put(
                "busyDetection",
                !metrics
                        ? "no: " + endpoint(Endpoint.METRICS).describe() + ", so a probe timing out on a busy engine"
                                + " counts as a failure"
                        : busy
                                ? "yes: /metrics has requests running and tokens generated (" + vllmSeries
                                        + engineSeries + ")"
                                : "no: /metrics is reachable but has " + vllmSeries + engineSeries
                                        + " with requests running and tokens generated");
        List<String> restart = new ArrayList<>();
        restart.add("the port closing or refusing (always)");
        boolean processStart = latest != null && latest.processStartTimeSeconds() != null;
        restart.add(
                processStart
                        ? "a new process_start_time_seconds"
                        : "no restart detection by process start: "
                                + (metrics ? "no process_start_time_seconds" : "no /metrics"));
        if (metrics && latest != null && !processStart && latest.generationTokens() != null) {
            restart.add("counters going down ("
                    + (families.contains("vllm:")
                            ? EngineDialect.VLLM.generationTokensSeries()
                            : dialect.generationTokensSeries())
                    + ")");
        }
        restart.add(
                versionEndpointUsable()
                        ? "a changed /version"
                        : "no version-change detection ("
                                + endpoint(Endpoint.VERSION).describe() + ")");
        out.put("restartDetection", String.join("; ", restart));
        out.put(
                "restartPaths",
                dialect == EngineDialect.VLLM
                        ? "cold, preload and snapshot attribution from vLLM's log lines, its vllm:* counters, the"
                                + " preload daemon and the snapshot directory (as configured)"
                        : "vLLM only: " + dialect.value() + " writes none of vLLM's log lines or vllm:* series, so"
                                + " every start is unknown unless a snapshot directory or preload daemon says"
                                + " otherwise");
        return out;
    }

    /** Each endpoint as {@code /status} shows it. */
    public Map<String, String> describeEndpoints() {
        Map<String, String> out = new LinkedHashMap<>();
        endpoints.forEach((endpoint, observed) -> out.put(endpoint.key(), observed.describe()));
        return out;
    }
}
