package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.ModelCard;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.SnapshotManifest;
import dev.readygate.evidence.StartLog;
import dev.readygate.gpu.GpuMemory;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.MemoryMoment;
import dev.readygate.memory.MemoryAssessment;
import dev.readygate.memory.MemorySignal;
import dev.readygate.memory.MemoryWatch;
import dev.readygate.probe.CanaryComparison;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.probe.MetricsEvidence;
import dev.readygate.probe.ProbeHistory;
import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.EngineArguments;
import dev.readygate.restart.HostFacts;
import dev.readygate.restart.RestartComparison;
import dev.readygate.restart.RestartExport;
import dev.readygate.restart.RestartHistory;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecordView;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.RestartTracker;
import dev.readygate.restart.SnapshotMismatch;
import dev.readygate.restart.SnapshotScope;
import dev.readygate.restart.Stop;
import dev.readygate.secret.SecretRedaction;
import dev.readygate.statedir.StateDir;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.ratelimiter.RateLimiter;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code GET /status}: everything an operator needs at 3 a.m. in one JSON document: is the engine ready, why not and
 * since when, the last heavy probes with their measurements (the canary's expected and actual answer), which vLLM
 * endpoints the engine has, and the configuration in effect. Read from memory; never triggers a probe. Shows no prompt,
 * completion (beyond the canary's few tokens) or key.
 */
@RestController
class StatusController {

    /** The comparison of the whole restart history, as CSV. */
    static final String COMPARISON_CSV = "/status/comparison.csv";

    /** What {@code /status} and the docs say of requests in flight when an engine goes away. */
    static final String RESUMES_NOTHING = "No restart path resumes requests in flight: a preload hit maps weights and a"
            + " snapshot restores an initialized engine (weights, KV cache, compiled graphs), never the requests the"
            + " engine was serving when it went away. Clients must retry them; each stop records how many were running"
            + " and waiting at readygate's last look.";

    static final String RESTARTS_JSON = "/status/restarts.json";
    static final String RESTARTS_CSV = "/status/restarts.csv";

    /** How many of the latest starts {@code /status} shows; the exports hold them all. */
    static final int HISTORY_SHOWN = 100;

    private static final MediaType CSV = MediaType.parseMediaType("text/csv");

    private final EngineStateMachine machine;
    private final EngineFactsHolder facts;
    private final ProbeHistory history;
    private final CircuitBreaker heavyProbeCircuitBreaker;
    private final RateLimiter heavyProbeRateLimiter;
    private final ReadygateProperties properties;
    private final RestartTracker restarts;
    private final RestartRecords records;
    private final RestartHistory restartHistory;
    private final RestartExport restartExport;
    private final EvidenceSources evidenceSources;
    private final GpuMemoryMonitor gpuMemory;
    private final MemoryWatch memoryWatch;
    private final HostFacts hosts;
    private final StartLog startLog;
    private final StateDir stateDir;
    private final Clock clock;
    private final JsonMapper json;
    private final CoalescedStatus coalesced;

    public StatusController(
            EngineStateMachine machine,
            EngineFactsHolder facts,
            ProbeHistory history,
            CircuitBreaker heavyProbeCircuitBreaker,
            RateLimiter heavyProbeRateLimiter,
            ReadygateProperties properties,
            RestartTracker restarts,
            RestartRecords records,
            RestartHistory restartHistory,
            EvidenceSources evidenceSources,
            GpuMemoryMonitor gpuMemory,
            MemoryWatch memoryWatch,
            HostFacts hosts,
            StartLog startLog,
            StateDir stateDir,
            Clock clock,
            JsonMapper json) {
        this.machine = machine;
        this.facts = facts;
        this.history = history;
        this.heavyProbeCircuitBreaker = heavyProbeCircuitBreaker;
        this.heavyProbeRateLimiter = heavyProbeRateLimiter;
        this.properties = properties;
        this.restarts = restarts;
        this.records = records;
        this.restartHistory = restartHistory;
        this.restartExport = new RestartExport(restartHistory, Schedulers.boundedElastic());
        this.evidenceSources = evidenceSources;
        this.gpuMemory = gpuMemory;
        this.memoryWatch = memoryWatch;
        this.hosts = hosts;
        this.startLog = startLog;
        this.stateDir = stateDir;
        this.clock = clock;
        this.json = json;
        this.coalesced = new CoalescedStatus(machine::current, this::render, clock);
    }

    /**
     * The JSON document; {@link StatusPage} answers browsers on the same path, hence {@code Vary: Accept}. Polls share
     * one rendering ({@link CoalescedStatus}): {@code Age} says how long ago the body was rendered (its {@code now}),
     * and {@code Cache-Control: max-age} how long it is answered again.
     */
    @GetMapping(path = "/status", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<ResponseEntity<byte[]>> status() {
        return coalesced
                .body()
                .map(body -> ResponseEntity.ok()
                        .contentType(MediaType.APPLICATION_JSON)
                        .varyBy(HttpHeaders.ACCEPT)
                        .cacheControl(CacheControl.maxAge(CoalescedStatus.FRESH_FOR))
                        .header(
                                HttpHeaders.AGE,
                                String.valueOf(body.age(clock.instant()).toSeconds()))
                        .body(body.json()));
    }

    /**
     * The JSON document of {@code /status}, from the rendering the polls share ({@link CoalescedStatus}), which the page
     * ({@link StatusPage}) renders too: a browser's page costs no rendering of its own.
     */
    Mono<byte[]> shared() {
        return coalesced.body().map(CoalescedStatus.Body::json);
    }

    /** A new rendering of the JSON document, shared by the polls that join it ({@link CoalescedStatus}). */
    private Mono<CoalescedStatus.Body> render() {
        return reading().map(reading -> {
            EngineState state = machine.current();
            Instant at = clock.instant();
            return new CoalescedStatus.Body(json.writeValueAsBytes(document(reading, state, at)), at, state);
        });
    }

    /**
     * The daemon and snapshot directory, read now (asynchronously); everything else is in memory. The document is
     * then built and serialized off the event loop, where the probes are answered (at most
     * readygate.server.max-heavy-requests at once).
     */
    private Mono<EvidenceSources.Reading> reading() {
        return evidenceSources
                .read(Instant.EPOCH)
                .onErrorReturn(EvidenceSources.Reading.none())
                .publishOn(Schedulers.boundedElastic());
    }

    private Map<String, Object> document(EvidenceSources.Reading now, EngineState state, Instant at) {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("ready", state.acceptsTraffic());
        status.putAll(EngineHealthIndicator.details(state));
        status.put("now", at.toString());
        EngineFacts engine = facts.current();
        status.put("engine", engine(engine));
        status.put("probes", probes(engine));
        status.put("restarts", restarts(now));
        status.put("gpu", gpu());
        status.put("memory", memory());
        status.put("stateDir", stateDir());
        status.put("configuration", configuration(properties));
        return status;
    }

    /**
     * The restart history (every kept file) as a JSON array, streamed record by record, for comparing runs.
     * {@code since} (an instant, or the id of the last record already read) and {@code limit} pick the records; a
     * {@code Link: <...>; rel="next"} header gives the next page when {@code limit} left some out.
     */
    @GetMapping(path = RESTARTS_JSON, produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<ResponseEntity<Flux<DataBuffer>>> restartsJson(
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable String limit) {
        return export(RestartExport.Format.JSON, RESTARTS_JSON, MediaType.APPLICATION_JSON, since, limit);
    }

    /** The restart history as CSV, one row per engine start, streamed; {@code since} and {@code limit} as for JSON. */
    @GetMapping(path = RESTARTS_CSV, produces = "text/csv")
    public Mono<ResponseEntity<Flux<DataBuffer>>> restartsCsv(
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable String limit) {
        return export(RestartExport.Format.CSV, RESTARTS_CSV, CSV, since, limit);
    }

    private Mono<ResponseEntity<Flux<DataBuffer>>> export(
            RestartExport.Format format, String path, MediaType type, @Nullable String since, @Nullable String limit) {
        RestartExport.Query query;
        try {
            query = RestartExport.Query.of(since, limit);
        } catch (IllegalArgumentException ex) {
            return Mono.just(badRequest(ex.getMessage()));
        }
        return restartExport
                .export(format, query)
                .map(streamed -> {
                    ResponseEntity.BodyBuilder response = ResponseEntity.ok()
                            .contentType(type)
                            .header("X-Readygate-Records", String.valueOf(streamed.records()));
                    if (streamed.fromMemory() > 0) {
                        // The state directory refused their writes: the body has them, the history's files do not.
                        response.header("X-Readygate-Records-Not-Written", String.valueOf(streamed.fromMemory()));
                    }
                    if (streamed.continueAfter() != null) {
                        response.header(
                                HttpHeaders.LINK,
                                "<" + path + "?since=" + streamed.continueAfter() + "&limit=" + query.limit()
                                        + ">; rel=\"next\"");
                    }
                    return response.body(streamed.body());
                })
                .onErrorResume(
                        RestartExport.UnknownRecordException.class, ex -> Mono.just(badRequest(ex.getMessage())));
    }

    private static ResponseEntity<Flux<DataBuffer>> badRequest(String message) {
        return ResponseEntity.badRequest()
                .contentType(MediaType.TEXT_PLAIN)
                .body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(
                        (message + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8))));
    }

    /**
     * The comparison of the restart history (every kept file) as CSV, one row per version, revision, configuration,
     * path and recovery kind: the records are read one by one and folded in (only the figures are held), then the rows
     * are streamed. {@code since} and {@code limit} pick the records as for the exports.
     */
    @GetMapping(path = COMPARISON_CSV, produces = "text/csv")
    public Mono<ResponseEntity<Flux<DataBuffer>>> comparisonCsv(
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable String limit) {
        RestartExport.Query query;
        try {
            query = RestartExport.Query.of(since, limit);
        } catch (IllegalArgumentException ex) {
            return Mono.just(badRequest(ex.getMessage()));
        }
        return restartExport
                .comparison(query)
                .map(comparison -> ResponseEntity.ok()
                        .contentType(CSV)
                        .body(Flux.fromIterable(comparison.csvLines())
                                .<DataBuffer>map(line -> DefaultDataBufferFactory.sharedInstance.wrap(
                                        line.getBytes(StandardCharsets.UTF_8)))))
                .onErrorResume(
                        RestartExport.UnknownRecordException.class, ex -> Mono.just(badRequest(ex.getMessage())));
    }

    private Map<String, Object> engine(EngineFacts facts) {
        Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("baseUrl", SecretRedaction.redact(properties.engine().requiredBaseUrl()));
        ModelCard card = facts.card();
        EngineSurface surface = facts.capabilities().surface();
        engine.put("dialect", surface == null ? null : surface.dialect().value());
        engine.put("dialectEvidence", surface == null ? null : surface.dialectEvidence());
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
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("processStartTimeSeconds", metrics.processStartTimeSeconds());
            m.put("requestsRunning", metrics.requestsRunning());
            m.put("requestsWaiting", metrics.requestsWaiting());
            m.put("kvCacheSizeTokens", metrics.kvCacheSizeTokens());
            Instant sampled = evidence.lastUsableAt();
            m.put("sampledAt", sampled == null ? null : sampled.toString());
            // The values above are of the last usable scrape: say so when the latest gave nothing usable.
            m.put("stale", !evidence.usable());
            m.put("families", List.copyOf(new java.util.TreeSet<>(metrics.families())));
            engine.put("metrics", m);
        }
        Map<String, String> endpoints = new LinkedHashMap<>(facts.capabilities().describe());
        Map<String, String> capabilities =
                new LinkedHashMap<>(facts.capabilities().capabilities(metrics));
        MetricsEvidence.Loss whole = evidence.lost().get(MetricsEvidence.Part.METRICS);
        if (whole != null && endpoints.containsKey("metrics")) {
            String lost = "lost since " + whole.since() + ": " + whole.why();
            endpoints.put("metrics", lost);
            // What readygate can see was read from the last usable scrape: not while nothing usable comes.
            capabilities.computeIfPresent("busyDetection", (key, was) -> "no, for now: /metrics " + lost);
            capabilities.computeIfPresent(
                    "restartDetection", (key, was) -> "nothing from /metrics for now (" + lost + "); otherwise " + was);
        }
        engine.put("endpoints", endpoints);
        engine.put("capabilities", capabilities);
        engine.put("problems", surface == null ? List.of() : surface.problems());
        engine.put("lostEvidence", lostEvidence(evidence));
        return engine;
    }

    /** What restart and busy detection lost from {@code /metrics}: each part, since when, why, what it costs. */
    private static List<Map<String, String>> lostEvidence(MetricsEvidence evidence) {
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

    private Map<String, Object> probes(EngineFacts facts) {
        Map<String, Object> probes = new LinkedHashMap<>();
        for (ProbeKind kind : ProbeKind.values()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("last", report(history.last(kind)));
            entry.put("lastFailure", report(history.lastFailure(kind)));
            probes.put(kind.value(), entry);
        }
        Instant lastHeavy = facts.lastHeavy();
        probes.put("lastHeavyProbeAt", lastHeavy == null ? null : lastHeavy.toString());
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
        probes.put("circuitBreaker", circuitBreaker());
        probes.put("tokenBudget", tokenBudget());
        return probes;
    }

    /** The heavy probes' circuit breaker: its state and the failures it counts. */
    private Map<String, Object> circuitBreaker() {
        CircuitBreaker.Metrics metrics = heavyProbeCircuitBreaker.getMetrics();
        Map<String, Object> breaker = new LinkedHashMap<>();
        breaker.put("state", heavyProbeCircuitBreaker.getState().name().toLowerCase(Locale.ROOT));
        breaker.put("failedVerifications", metrics.getNumberOfFailedCalls());
        breaker.put("suspendAfterFailures", properties.probe().suspendAfterFailures());
        breaker.put("suspension", properties.probe().suspension().toString());
        breaker.put("refusedVerifications", metrics.getNumberOfNotPermittedCalls());
        return breaker;
    }

    /** The heavy probes' token budget: what is left of this minute's. */
    private Map<String, Object> tokenBudget() {
        Map<String, Object> budget = new LinkedHashMap<>();
        budget.put("tokensPerMinute", properties.probe().maxTokensPerMinute());
        budget.put(
                "tokensLeftThisMinute",
                Math.max(0, heavyProbeRateLimiter.getMetrics().getAvailablePermissions()));
        return budget;
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
                .forEach(phase ->
                        phases.put(phase.getKey().value(), phase.getValue().toString()));
        current.put("phases", phases);
        out.put("current", current);
        out.put("restartLoop", restarts.restartLoop());
        List<RestartRecord> latest = records.history().reversed();
        EngineStart running = machine.start();
        List<Map<String, Object>> shown = latest.stream()
                .limit(HISTORY_SHOWN)
                .map(record -> new RestartRecordView(record)
                        .status(running != null && running.id().equals(record.id())))
                .toList();
        out.put("history", shown);
        // The whole history is in the exports; this page shows the latest only, and says how many it leaves out.
        long kept = Math.max(restartHistory.count(), latest.size());
        out.put("historyShown", shown.size());
        out.put("historyOmitted", Math.max(0, kept - shown.size()));
        out.put("historyExport", Map.of("json", RESTARTS_JSON, "csv", RESTARTS_CSV));
        out.put("comparison", comparison());
        out.put("workLost", workLost());
        out.put("snapshot", snapshot(now));
        out.put("evidence", evidence(now));
        return out;
    }

    /** Restarts side by side, over the starts kept at hand; the CSV export has the whole history. */
    private Map<String, Object> comparison() {
        List<RestartRecord> kept = records.history();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("over", "the last " + kept.size() + " recorded starts (the CSV export compares the whole history)");
        out.put("csv", COMPARISON_CSV);
        out.putAll(RestartComparison.of(kept).status());
        return out;
    }

    /** What no restart path does, and what the latest stop lost. */
    private Map<String, Object> workLost() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("resumesInFlight", false);
        out.put("statement", RESUMES_NOTHING);
        RestartRecord stopped = records.history().reversed().stream()
                .filter(record -> record.stop() != null)
                .findFirst()
                .orElse(null);
        Stop stop = stopped == null ? null : stopped.stop();
        if (stop == null) {
            out.put("lastStop", null);
        } else {
            Map<String, Object> last = new LinkedHashMap<>();
            last.put("start", stopped.id());
            last.put("path", stopped.pathEvidence().path().value());
            last.put("at", stop.at().toString());
            last.put("how", stop.how().value());
            last.put("requestsRunning", stop.requestsRunning());
            last.put("requestsWaiting", stop.requestsWaiting());
            last.put(
                    "observedAt",
                    stop.observedAt() == null ? null : stop.observedAt().toString());
            out.put("lastStop", last);
        }
        return out;
    }

    /**
     * The snapshot directory's manifest against the engine and node now (a mismatch is named before the manifest is
     * trusted), and an engine configuration snapshots cannot restore (wider than one GPU).
     */
    private Map<String, Object> snapshot(EvidenceSources.Reading now) {
        Map<String, Object> out = new LinkedHashMap<>();
        boolean configured = properties.evidence().snapshotDir() != null;
        out.put("configured", configured);
        EngineStart start = machine.start();
        String args = start == null ? null : startLog.findings(start.id()).engineArgs();
        if (args == null) {
            args = records.history().reversed().stream()
                    .map(record -> record.engine().engineArgs())
                    .filter(java.util.Objects::nonNull)
                    .findFirst()
                    .orElse(null);
        }
        List<String> unsupported = SnapshotScope.unsupported(EngineArguments.parse(args), configured);
        out.put("supported", unsupported.isEmpty());
        out.put("unsupported", unsupported);
        SnapshotManifest manifest = now.manifest();
        if (manifest == null) {
            out.put("manifest", configured ? "none readable in the snapshot directory" : null);
            return out;
        }
        Map<String, Object> read = new LinkedHashMap<>();
        read.put("createdAt", manifest.createdAt());
        read.put("modelRevision", manifest.modelRevision());
        read.put("vllmVersion", manifest.vllmVersion());
        read.put("gpuUuid", manifest.gpuUuid());
        read.put("gpuName", manifest.gpuName());
        read.put("driverVersion", manifest.driverVersion());
        out.put("manifest", read);
        List<SnapshotMismatch> mismatches =
                SnapshotMismatch.of(manifest, hosts.latest(), facts.current().vllmVersion());
        out.put("matchesThisEngine", mismatches.isEmpty());
        out.put(
                "mismatches",
                mismatches.stream().map(SnapshotMismatch::describe).toList());
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
                        : SecretRedaction.redact(evidence.daemonHealthUrl()));
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
     * The state directory: whether this readygate writes it (or runs read-only beside another), and how each store's
     * writes stand; {@code degraded} names what fails ({@code state_dir_read_only}, {@code state_dir_full}, ...).
     * Readiness never depends on it.
     */
    private Map<String, Object> stateDir() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", stateDir.directory().toString());
        out.put(
                "mode",
                stateDir.readOnly()
                        ? "read_only: another readygate holds the lock"
                                + (stateDir.holder() == null ? "" : " (" + stateDir.holder() + ")")
                        : "writer");
        Map<String, Object> stores = new LinkedHashMap<>();
        java.util.Set<String> degraded = new java.util.LinkedHashSet<>();
        stateDir.status().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(entry -> {
            StateDir.StoreStatus store = entry.getValue();
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("file", entry.getKey().file());
            s.put("status", store.problem() == null ? "ok" : "failing");
            if (store.problem() != null) {
                degraded.add(store.problem().value());
                s.put("reason", store.problem().value());
                s.put("since", store.since().toString());
                s.put("detail", store.detail());
            }
            s.put(
                    "lastWrite",
                    store.lastWrite() == null ? null : store.lastWrite().toString());
            stores.put(entry.getKey().value(), s);
        });
        out.put("degraded", List.copyOf(degraded));
        out.put("stores", stores);
        return out;
    }

    /**
     * The configuration in effect, {@code readygate.*} as bound, without secrets: the API key is read from a file or
     * an environment variable, and only their names appear here; a setting whose name says it is a secret shows
     * {@value SecretRedaction#REDACTED}, and every other value is shown through {@link SecretRedaction} (a URL's user
     * information, a query's token).
     */
    static @Nullable Object configuration(@Nullable Object value) {
        if (value == null || value instanceof Boolean || value instanceof Number) {
            return value;
        }
        if (value instanceof Record record) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (RecordComponent component : record.getClass().getRecordComponents()) {
                try {
                    Object setting = component.getAccessor().invoke(record);
                    out.put(
                            kebab(component.getName()),
                            setting != null && SecretRedaction.isSecretName(component.getName())
                                    ? SecretRedaction.REDACTED
                                    : configuration(setting));
                } catch (ReflectiveOperationException ex) {
                    out.put(kebab(component.getName()), "(unreadable)");
                }
            }
            return out;
        }
        if (value instanceof Collection<?> values) {
            return values.stream().map(StatusController::configuration).toList();
        }
        if (value instanceof Map<?, ?> entries) {
            Map<String, Object> out = new LinkedHashMap<>();
            entries.forEach((key, entry) -> out.put(
                    String.valueOf(key),
                    entry != null && SecretRedaction.isSecretName(String.valueOf(key))
                            ? SecretRedaction.REDACTED
                            : configuration(entry)));
            return out;
        }
        return SecretRedaction.redact(value.toString());
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
                                MemoryMoment.mib(process.usedBytes())))
                        .toList());
        return out;
    }
}
