package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.gpu.GpuMemory;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.memory.MemoryAssessment;
import dev.readygate.memory.MemorySignal;
import dev.readygate.memory.MemoryWatch;
import dev.readygate.probe.CanaryComparison;
import dev.readygate.probe.EngineCapabilities;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.ProbeHistory;
import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.probe.ProbeSchedule;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.EvidenceSources;
import dev.readygate.restart.MemoryMoment;
import dev.readygate.restart.RestartHistory;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartTracker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.lang.reflect.RecordComponent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code GET /status}: everything an operator needs at 3 a.m. in one JSON document: is the engine ready, why not and
 * since when, the last heavy probes with their measurements (the canary's expected and actual answer), which vLLM
 * endpoints the engine has, and the probe settings. Read from memory; never triggers a probe. Shows no prompt,
 * completion (beyond the canary's few tokens) or key.
 */
@RestController
public class StatusController {

    private final EngineStateMachine machine;
    private final ProbeSchedule schedule;
    private final EngineFacts facts;
    private final ProbeHistory history;
    private final EngineCapabilities capabilities;
    private final CircuitBreaker heavyProbeCircuitBreaker;
    private final ReadygateProperties properties;
    private final RestartTracker restarts;
    private final RestartHistory restartHistory;
    private final EvidenceSources evidenceSources;
    private final GpuMemoryMonitor gpuMemory;
    private final MemoryWatch memoryWatch;
    private final Clock clock;

    public StatusController(
            EngineStateMachine machine,
            ProbeSchedule schedule,
            EngineFacts facts,
            ProbeHistory history,
            EngineCapabilities capabilities,
            CircuitBreaker heavyProbeCircuitBreaker,
            ReadygateProperties properties,
            RestartTracker restarts,
            RestartHistory restartHistory,
            EvidenceSources evidenceSources,
            GpuMemoryMonitor gpuMemory,
            MemoryWatch memoryWatch,
            Clock clock) {
        this.machine = machine;
        this.schedule = schedule;
        this.facts = facts;
        this.history = history;
        this.capabilities = capabilities;
        this.heavyProbeCircuitBreaker = heavyProbeCircuitBreaker;
        this.properties = properties;
        this.restarts = restarts;
        this.restartHistory = restartHistory;
        this.evidenceSources = evidenceSources;
        this.gpuMemory = gpuMemory;
        this.memoryWatch = memoryWatch;
        this.clock = clock;
    }

    /** The JSON document; {@link StatusPage} answers browsers on the same path, hence {@code Vary: Accept}. */
    @GetMapping(path = "/status", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<ResponseEntity<Map<String, Object>>> status() {
        // The daemon and snapshot directory are read now (asynchronously); everything else is in memory.
        return evidenceSources
                .read(Instant.EPOCH)
                .onErrorReturn(EvidenceSources.Reading.none())
                .map(reading -> ResponseEntity.ok().varyBy(HttpHeaders.ACCEPT).body(document(reading)));
    }

    private Map<String, Object> document(EvidenceSources.Reading now) {
        EngineState state = machine.current();
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("ready", state.acceptsTraffic());
        status.putAll(EngineHealthIndicator.details(state));
        status.put("now", clock.instant().toString());
        status.put("engine", engine());
        status.put("probes", probes());
        status.put("restarts", restarts(now));
        status.put("gpu", gpu());
        status.put("memory", memory());
        status.put("settings", settings());
        status.put("configuration", configuration(properties));
        return status;
    }

    /** The whole restart history (every kept file), as JSON, for comparing runs. */
    @GetMapping(path = "/status/restarts.json", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<String> restartsJson() {
        JsonMapper json = JsonMapper.builder().build();
        return Mono.fromCallable(() -> RestartHistory.toJson(restartHistory.load(), json))
                .subscribeOn(Schedulers.boundedElastic());
    }

    /** The whole restart history as CSV, one row per engine start. */
    @GetMapping(path = "/status/restarts.csv", produces = "text/csv")
    public Mono<String> restartsCsv() {
        return Mono.fromCallable(() -> RestartHistory.toCsv(restartHistory.load()))
                .subscribeOn(Schedulers.boundedElastic());
    }

    private Map<String, Object> engine() {
        Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("baseUrl", properties.engine().requiredBaseUrl().toString());
        ModelCard card = facts.card();
        engine.put("model", card == null ? null : card.id());
        engine.put("root", card == null ? null : card.root());
        engine.put("maxModelLen", card == null ? null : card.maxModelLen());
        engine.put("vllmVersion", facts.vllmVersion());
        EngineMetricsSample metrics = facts.lastSample();
        if (metrics != null) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("processStartTimeSeconds", metrics.processStartTimeSeconds());
            m.put("requestsRunning", metrics.requestsRunning());
            m.put("requestsWaiting", metrics.requestsWaiting());
            m.put("kvCacheSizeTokens", metrics.kvCacheSizeTokens());
            engine.put("metrics", m);
        }
        engine.put("endpoints", capabilities.describe());
        return engine;
    }

    private Map<String, Object> probes() {
        Map<String, Object> probes = new LinkedHashMap<>();
        for (ProbeKind kind : ProbeKind.values()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("last", report(history.last(kind)));
            entry.put("lastFailure", report(history.lastFailure(kind)));
            probes.put(kind.value(), entry);
        }
        probes.put(
                "lastHeavyProbeAt",
                schedule.lastHeavy() == null ? null : schedule.lastHeavy().toString());
        probes.put(
                "heavyProbes",
                heavyProbeCircuitBreaker.getState() == CircuitBreaker.State.OPEN
                        ? "suspended after repeated failures"
                        : heavyProbeCircuitBreaker
                                .getState()
                                .name()
                                .toLowerCase(Locale.ROOT)
                                .replace('_', '-'));
        probes.put("lastSkipped", history.lastSkipped());
        return probes;
    }

    private static @Nullable Map<String, Object> report(@Nullable ProbeReport report) {
        if (report == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("at", report.at().toString());
        out.put("outcome", report.outcome().name().toLowerCase(Locale.ROOT));
        out.put("reason", report.reason() == null ? null : report.reason().value());
        out.put("detail", report.detail());
        ProbeReport.Measurement m = report.measurement();
        if (m != null) {
            Map<String, Object> measured = new LinkedHashMap<>();
            measured.put("plannedPromptTokens", m.plannedPromptTokens());
            measured.put("promptTokens", m.promptTokens());
            measured.put("completionTokens", m.completionTokens());
            measured.put("timeToFirstTokenMs", m.timeToFirstToken().toMillis());
            measured.put("maxInterTokenLatencyMs", m.maxInterTokenLatency().toMillis());
            measured.put("meanInterTokenLatencyMs", m.meanInterTokenLatency().toMillis());
            measured.put("totalMs", m.total().toMillis());
            out.put("measurement", measured);
        }
        CanaryComparison canary = report.canary();
        if (canary != null) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("expectedFrom", canary.source().value());
            c.put(
                    "expected",
                    canary.expected() == null ? null : canary.expected().describe());
            c.put("actual", canary.actual().describe());
            c.put("matches", canary.matches());
            out.put("canary", c);
        }
        return out;
    }

    private Map<String, Object> restarts(EvidenceSources.Reading now) {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> current = new LinkedHashMap<>();
        current.put("provisionalPath", restarts.provisionalPath().value());
        Map<String, String> phases = new LinkedHashMap<>();
        restarts.currentPhases().entrySet().stream()
                .sorted(Map.Entry.comparingByValue())
                .forEach(phase -> phases.put(phase.getKey(), phase.getValue().toString()));
        current.put("phases", phases);
        out.put("current", current);
        out.put("restartLoop", restarts.restartLoop());
        out.put(
                "history",
                restarts.history().reversed().stream()
                        .map(StatusController::record)
                        .toList());
        out.put("evidence", evidence(now));
        return out;
    }

    private Map<String, Object> evidence(EvidenceSources.Reading now) {
        ReadygateProperties.Evidence evidence = properties.evidence();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(
                "engineLog",
                evidence.engineLog() == null
                        ? "not configured"
                        : evidence.engineLog().toString());
        out.put(
                "daemonHealthUrl",
                evidence.daemonHealthUrl() == null
                        ? "not configured"
                        : evidence.daemonHealthUrl().toString());
        out.put(
                "daemonSocketDir",
                evidence.daemonSocketDir() == null
                        ? "not configured"
                        : evidence.daemonSocketDir().toString());
        out.put(
                "snapshotDir",
                evidence.snapshotDir() == null
                        ? "not configured"
                        : evidence.snapshotDir().toString());
        // What the preload daemon and the snapshot directory say right now.
        if (now.daemonHealthy() != null) {
            out.put("daemonNow", now.daemonHealthy() ? "serving (/health 200)" : "not serving");
        }
        if (now.daemonSockets() >= 0) {
            out.put("daemonSocketsNow", now.daemonSockets());
        }
        if (evidence.daemonLog() != null) {
            out.put(
                    "daemonReadyLoggedAt",
                    now.daemonReadyAt() == null
                            ? "not yet"
                            : now.daemonReadyAt().toString());
        }
        if (evidence.snapshotDir() != null) {
            out.put(
                    "snapshotReleasedAt",
                    now.snapshotReleasedAt() == null
                            ? "never (no release.json)"
                            : now.snapshotReleasedAt().toString());
        }
        return out;
    }

    /** One restart record as {@code /status} shows it: durations in seconds, phases as offsets from engine start. */
    static Map<String, Object> record(RestartRecord record) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", record.id());
        out.put("engineStart", record.engineStart().toString());
        out.put("engineStartSource", record.engineStartSource());
        out.put("firstSeen", record.firstSeen());
        out.put("path", record.path().value());
        out.put("evidence", record.evidence());
        out.put("fallbackReason", record.fallbackReason());
        out.put("wrongWeightsFromCache", record.wrongWeightsFromCache());
        out.put("outcome", record.outcome());
        out.put("notReadyReason", record.notReadyReason());
        out.put(
                "readinessLatencySeconds",
                record.readinessLatency() == null
                        ? null
                        : record.readinessLatency().toMillis() / 1000.0);
        Map<String, Double> phases = new LinkedHashMap<>();
        for (String phase : RestartTracker.PHASES) {
            Instant at = record.phases().get(phase);
            if (at != null) {
                phases.put(phase, Duration.between(record.engineStart(), at).toMillis() / 1000.0);
            }
        }
        out.put("phaseOffsetsSeconds", phases);
        out.put("loggedDurations", record.loggedDurations());
        out.put("vllmVersion", record.vllmVersion());
        out.put("model", record.model());
        out.put("modelRoot", record.modelRoot());
        out.put("revision", record.revision());
        out.put("maxModelLen", record.maxModelLen());
        out.put("kvCacheSizeTokens", record.kvCacheSizeTokens());
        out.put("engineArgs", record.engineArgs());
        out.put("probeConfigHash", record.probeConfigHash());
        out.put("readygateVersion", record.readygateVersion());
        out.put("node", record.node());
        Map<String, Object> memory = new LinkedHashMap<>();
        memory.put("beforeStart", moment(record.memory().beforeStart()));
        memory.put("atReady", moment(record.memory().atReady()));
        memory.put("afterStop", moment(record.memory().afterStop()));
        out.put("memory", memory);
        return out;
    }

    private static @Nullable Map<String, Object> moment(@Nullable MemoryMoment moment) {
        if (moment == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("at", moment.at().toString());
        out.put("usedMiB", mib(moment.usedBytes()));
        Map<String, Long> owners = new LinkedHashMap<>();
        moment.byOwner().forEach((owner, bytes) -> owners.put(owner, mib(bytes)));
        out.put("byOwnerMiB", owners);
        out.put(
                "processes",
                moment.processes().stream()
                        .map(holder -> Map.of("pid", holder.pid(), "owner", holder.owner(), "MiB", mib(holder.bytes())))
                        .toList());
        return out;
    }

    private static long mib(long bytes) {
        return Math.round(bytes / 1048576.0);
    }

    /** The memory signals: what each shows now, and whether it fires. */
    private Map<String, Object> memory() {
        MemoryAssessment assessment = memoryWatch.assessment();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("signals", assessment.active().stream().map(MemorySignal::value).toList());
        MemoryAssessment.Drift drift = assessment.drift();
        out.put(
                MemorySignal.LEAK_ACROSS_RESTARTS.value(),
                drift == null
                        ? "fewer than " + properties.memory().leakCycles()
                                + " measured ready cycles with the same configuration and path"
                        : drift);
        MemoryAssessment.HeldAfterStop held = assessment.heldAfterStop();
        out.put(MemorySignal.HELD_AFTER_STOP.value(), held == null ? "no stop measured yet" : held);
        MemoryAssessment.StaleCache stale = assessment.staleCache();
        out.put(
                MemorySignal.STALE_CACHE.value(),
                stale == null
                        ? "nothing shows the preload daemon holds another checkpoint than the one served (no preload"
                                + " hit or fingerprint mismatch since readygate started or the daemon last changed)"
                        : stale);
        MemoryAssessment.KvCache kv = assessment.kvCache();
        out.put(
                MemorySignal.KV_CACHE_SHRINKING.value(),
                kv == null ? "fewer than 2 ready cycles with the same configuration and a known KV cache size" : kv);
        return out;
    }

    /**
     * The configuration in effect, {@code readygate.*} as bound. It holds no secret: the API key is read from a file
     * or an environment variable, and only their names appear here.
     */
    static @Nullable Object configuration(@Nullable Object value) {
        if (value == null || value instanceof Boolean || value instanceof Number) {
            return value;
        }
        if (value instanceof Record record) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (RecordComponent component : record.getClass().getRecordComponents()) {
                try {
                    out.put(
                            kebab(component.getName()),
                            configuration(component.getAccessor().invoke(record)));
                } catch (ReflectiveOperationException ex) {
                    out.put(kebab(component.getName()), "(unreadable)");
                }
            }
            return out;
        }
        if (value instanceof Collection<?> values) {
            return values.stream().map(StatusController::configuration).toList();
        }
        return value.toString();
    }

    private static String kebab(String name) {
        return name.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    /** Who holds how much GPU memory, from the last reading, or why it could not be read. */
    private Map<String, Object> gpu() {
        Map<String, Object> out = new LinkedHashMap<>();
        GpuMemoryView view = gpuMemory.last();
        if (view == null) {
            out.put("state", "not read yet");
            return out;
        }
        out.put("at", view.at().toString());
        Map<String, Object> failures = new LinkedHashMap<>();
        view.sourceFailures()
                .forEach((source, failure) ->
                        failures.put(source, Map.of("reason", failure.reason().value(), "detail", failure.detail())));
        if (view.failure() != null) {
            out.put("failure", view.failure().value());
            out.put("detail", view.failureDetail());
            out.put("sourceFailures", failures);
            return out;
        }
        out.put("source", view.source());
        out.put("sourceFailures", failures);
        List<Map<String, Object>> gpus = new java.util.ArrayList<>();
        for (GpuMemory memory : view.gpus()) {
            Map<String, Object> gpu = new LinkedHashMap<>();
            gpu.put("uuid", memory.uuid());
            gpu.put("name", memory.name());
            gpu.put("totalBytes", memory.totalBytes());
            gpu.put("usedBytes", memory.usedBytes());
            gpu.put("freeBytes", memory.freeBytes());
            Map<String, Long> owners = new LinkedHashMap<>();
            view.byOwner()
                    .getOrDefault(memory.uuid(), Map.of())
                    .forEach((owner, bytes) -> owners.put(owner.value(), bytes));
            gpu.put("byOwnerBytes", owners);
            gpus.add(gpu);
        }
        out.put("gpus", gpus);
        out.put(
                "processes",
                view.processes().stream()
                        .map(process -> Map.of(
                                "pid",
                                process.pid(),
                                "owner",
                                process.owner().value(),
                                "gpu",
                                process.gpuUuid(),
                                "MiB",
                                mib(process.usedBytes())))
                        .toList());
        return out;
    }

    private Map<String, Object> settings() {
        ReadygateProperties.Probe probe = properties.probe();
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("successThreshold", probe.successThreshold());
        settings.put("failureThreshold", probe.failureThreshold());
        settings.put("notReadyInterval", probe.notReadyInterval().toString());
        settings.put("downInterval", probe.downInterval().toString());
        settings.put("readyInterval", probe.readyInterval().toString());
        settings.put("healthInterval", probe.healthInterval().toString());
        settings.put("heavyInterval", probe.heavyInterval().toString());
        settings.put("heavyTimeout", probe.heavyTimeout().toString());
        settings.put(
                "representative",
                probe.representative().enabled()
                        ? probe.representative().promptTokens() + " prompt + "
                                + probe.representative().outputTokens() + " output tokens"
                        : "disabled");
        settings.put("canary", probe.canary().enabled() ? probe.canary().maxTokens() + " token(s)" : "disabled");
        return settings;
    }
}
