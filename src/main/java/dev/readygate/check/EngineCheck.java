package dev.readygate.check;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.ModelCard;
import dev.readygate.evidence.DaemonReadyFile;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogSample;
import dev.readygate.evidence.SnapshotManifest;
import dev.readygate.probe.EngineCapabilities;
import dev.readygate.probe.ManifestTrust;
import dev.readygate.probe.OneShotProbes;
import dev.readygate.probe.ProbeReport;
import dev.readygate.restart.EngineArguments;
import dev.readygate.restart.NodeFacts;
import dev.readygate.restart.SnapshotMismatch;
import dev.readygate.restart.SnapshotScope;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * One pass of every probe readygate runs, against a live engine, on the command line's thread: {@code /health} and
 * {@code /v1/models} (waiting up to {@code readygate.check.wait-for-engine} for a starting engine), discovery of what the
 * engine offers, a {@code /metrics} scrape, the representative probe, the canary twice (stable?), and the restart
 * evidence the configuration points at. Writes nothing: the canary never learns a baseline here, it only compares with
 * one readygate learned before. The probes are built exactly as the sidecar builds them.
 */
final class EngineCheck {

    private static final Duration POLL = Duration.ofMillis(200);

    private final ReadygateProperties properties;
    private final EngineClient client;
    private final Clock clock;

    EngineCheck(ReadygateProperties properties, EngineClient client, Clock clock) {
        this.properties = properties;
        this.client = client;
        this.clock = clock;
    }

    CheckReport run() {
        CheckReport.Builder report =
                new CheckReport.Builder(properties.engine().requiredBaseUrl().toString());
        Instant started = clock.instant();
        Instant deadline = started.plus(properties.check().waitForEngine());
        report.section("engine");
        ModelCard card = listedModel(report, started, deadline);
        if (card == null) {
            return report.build();
        }
        // Read before the probes: the canary asks, as the sidecar's does, whether the manifest may vouch for the
        // engine.
        EvidenceSources.Reading now = readEvidence();
        ManifestTrust trust = vllmVersion -> {
            SnapshotManifest manifest = now.manifest();
            List<SnapshotMismatch> mismatches =
                    manifest == null ? List.of() : SnapshotMismatch.of(manifest, nodeFacts(), vllmVersion);
            return mismatches.isEmpty()
                    ? null
                    : mismatches.stream().map(SnapshotMismatch::describe).collect(Collectors.joining("; "));
        };
        OneShotProbes.Result probes = new OneShotProbes(properties, client, trust, clock).run(card);
        surface(report, probes.surface(), probes.sample(), refusedCredentials(probes));
        representative(report, probes);
        canary(report, probes);
        evidence(report, probes.surface(), now);
        probes.surface().problems().forEach(report::problem);
        return report.build();
    }

    /** Waits for {@code /health} 200 and a listed model; null (with a failure) when the engine never got there. */
    private @Nullable ModelCard listedModel(CheckReport.Builder report, Instant started, Instant deadline) {
        EngineCall<Void> health = poll(client::health, deadline);
        if (health instanceof EngineCall.Failure<Void> failed) {
            report.line(
                    "/health",
                    "never 200 within readygate.check.wait-for-engine ("
                            + properties.check().waitForEngine() + "): "
                            + failed.failure().detail());
            report.failure(
                    "the engine never answered /health 200: " + failed.failure().detail());
            return null;
        }
        report.line("/health", "200 in " + health.elapsed().toMillis() + " ms (" + polls(started, health) + ")");
        EngineCall<ModelCard> model = poll(client::model, deadline);
        return switch (model) {
            case EngineCall.Success<ModelCard> listed -> {
                report.line(
                        "/v1/models",
                        listed.value().id()
                                + (listed.value().ownedBy() == null
                                        ? ""
                                        : " (owned_by " + listed.value().ownedBy() + ")"));
                yield listed.value();
            }
            case EngineCall.Failure<ModelCard> failed -> {
                report.line("/v1/models", failed.failure().detail());
                report.failure("the engine lists no model: " + failed.failure().detail());
                yield null;
            }
        };
    }

    /** How long the check waited for the engine before this answer. */
    private String polls(Instant started, EngineCall<?> answer) {
        long waited = Duration.between(started, clock.instant())
                .minus(answer.elapsed())
                .toMillis();
        return waited > POLL.toMillis() ? "after waiting " + waited + " ms for the engine" : "at once";
    }

    /** Calls until a success or the deadline (a starting engine refuses, or answers 503 while it loads). */
    private <T> EngineCall<T> poll(java.util.function.Supplier<Mono<EngineCall<T>>> call, Instant deadline) {
        while (true) {
            EngineCall<T> result = Objects.requireNonNull(call.get().block());
            if (result instanceof EngineCall.Success<T>
                    || !clock.instant().plus(POLL).isBefore(deadline)) {
                return result;
            }
            Mono.delay(POLL).block();
        }
    }

    /** An HTTP 401 or 403 in what an endpoint or the representative probe got. */
    private static final java.util.regex.Pattern UNAUTHORIZED =
            java.util.regex.Pattern.compile("answered (401|403)\\b");

    /**
     * The HTTP status (401 or 403) the engine refused an endpoint or the representative probe with (it wants an API key
     * readygate did not send, or another), or null: then the missing key is the problem, not what the refused endpoints
     * would have said (the context length).
     */
    static @Nullable String refusedCredentials(OneShotProbes.Result probes) {
        List<String> answers = new java.util.ArrayList<>();
        probes.surface().endpoints().values().forEach(observed -> answers.add(observed.observation()));
        ProbeReport rep = probes.representative();
        if (rep != null && rep.reason() != null) {
            answers.add(rep.detail());
        }
        for (String answer : answers) {
            java.util.regex.Matcher refused = UNAUTHORIZED.matcher(answer);
            if (refused.find()) {
                return refused.group(1);
            }
        }
        return null;
    }

    private void surface(
            CheckReport.Builder report,
            EngineSurface surface,
            @Nullable EngineMetricsSample sample,
            @Nullable String refused) {
        report.line("dialect", surface.dialect().value() + " (" + surface.dialectEvidence() + ")");
        report.line(
                "version",
                (surface.version() == null ? "unknown" : surface.version()) + " (" + surface.versionSource() + ")");
        report.line(
                "max_model_len",
                surface.maxModelLen() == null
                        ? surface.maxModelLenSource()
                        : surface.maxModelLen() + " (" + surface.maxModelLenSource() + ")");
        report.section("endpoints");
        surface.describeEndpoints().forEach(report::line);
        report.section("what readygate can see");
        EngineCapabilities.of(surface).capabilities(sample).forEach((name, what) -> {
            if (!name.equals("promptTokens")) {
                report.line(name, what);
            }
        });
        if (!surface.metricsUsable()) {
            report.problem("no usable /metrics ("
                    + surface.endpoint(EngineSurface.Endpoint.METRICS).describe()
                    + "): no busy detection, so a representative probe that times out on a busy engine counts as a"
                    + " failure; no restart detection by process start"
                    + (surface.dialect() == EngineDialect.LLAMA_CPP
                            ? "; llama-server: start it with --metrics, or with --slots so that readygate sees a"
                                    + " taken slot and sends no light check to wait for it (holding one of the"
                                    + " server's few HTTP threads); with neither, a light check waits for a slot a"
                                    + " client holds (busy up to readygate.probe.heavy-interval, never given up for"
                                    + " another), so a hang that leaves /health answering is seen only after"
                                    + " heavy-interval + failure-threshold x heavy-timeout"
                            : ""));
        }
        if (refused != null) {
            report.problem(
                    "the engine answered " + refused + " to readygate's requests: it wants an API key: set"
                            + " readygate.engine.api-key-file (or readygate.engine.api-key-env) to the key it was started with");
        } else if (surface.maxModelLen() == null) {
            report.problem("the engine reports no context length: set readygate.engine.max-model-len, or"
                    + " readygate.probe.representative.prompt-tokens cannot be a fraction and probe_exceeds_context"
                    + " is only known from the engine's own error");
        }
    }

    private void representative(CheckReport.Builder report, OneShotProbes.Result probes) {
        report.section("representative probe");
        ProbeReport rep = probes.representative();
        if (rep == null) {
            report.line("disabled", "readygate.probe.representative.enabled=false");
            report.problem("the representative probe is disabled: readiness does not prove the engine serves real"
                    + " prompts");
            return;
        }
        report.line("verdict", verdict(rep));
        ProbeReport.Measurement m = rep.measurement();
        if (m != null) {
            report.line(
                    "prompt tokens",
                    "planned " + probes.plannedPromptTokens() + ", sent " + m.plannedPromptTokens()
                            + ", the engine counted " + m.promptTokens());
            report.line(
                    "output tokens",
                    "asked " + properties.probe().representative().outputTokens() + ", the engine generated "
                            + m.completionTokens());
            report.line("TTFT", m.timeToFirstToken().toMillis() + " ms");
            report.line(
                    "ITL",
                    "max " + m.maxInterTokenLatency().toMillis() + " ms, mean "
                            + m.meanInterTokenLatency().toMillis() + " ms; total "
                            + m.total().toMillis() + " ms");
        }
        String proof = probes.capabilities().promptTokens();
        if (proof != null) {
            report.line("token counts", proof);
        }
        if (!rep.passed()) {
            report.failure("representative probe: " + reason(rep));
        }
    }

    private void canary(CheckReport.Builder report, OneShotProbes.Result probes) {
        report.section("canary");
        ProbeReport first = probes.firstCanary();
        ProbeReport second = probes.secondCanary();
        if (first == null || second == null) {
            report.line("disabled", "readygate.probe.canary.enabled=false");
            report.problem("the canary is disabled: wrong weights (a preload cache hit of another checkpoint) go"
                    + " unnoticed");
            return;
        }
        report.line("first run", verdict(first));
        report.line("second run", verdict(second));
        Boolean stable = probes.canaryStable();
        if (stable == null || first.canary() == null || second.canary() == null) {
            report.failure("canary: " + reason(first.passed() ? second : first));
            return;
        }
        report.line(
                "stable",
                stable
                        ? "yes: " + first.canary().actual().describe() + " both times"
                        : "NO: " + first.canary().actual().describe() + ", then "
                                + second.canary().actual().describe());
        report.line("expected", probes.canaryExpected());
        if (!stable) {
            report.failure("canary: two runs at temperature 0 gave different answers, so a canary mismatch would not"
                    + " mean wrong weights");
        } else if (!first.passed()) {
            report.failure("canary: " + reason(first));
        } else if (!second.passed()) {
            report.failure("canary: " + reason(second));
        }
    }

    private static String verdict(ProbeReport report) {
        return report.passed()
                ? "passed: " + report.detail()
                : "FAILED " + Objects.requireNonNull(report.reason()).value() + ": " + report.detail();
    }

    private static String reason(ProbeReport report) {
        return report.reason() == null ? report.detail() : report.reason().value() + " (" + report.detail() + ")";
    }

    /** What the preload daemon and the snapshot directory say now. */
    private EvidenceSources.Reading readEvidence() {
        ReadygateProperties.Evidence evidence = properties.evidence();
        EvidenceSources sources = new EvidenceSources(
                evidence.snapshotDir(),
                evidence.daemonHealthUrl(),
                evidence.daemonSocketDir(),
                null,
                null,
                HttpClient.newBuilder()
                        .connectTimeout(evidence.daemonHealthTimeout())
                        .build(),
                JsonMapper.builder().build(),
                Schedulers.boundedElastic(),
                evidence.daemonHealthTimeout(),
                Schedulers.parallel());
        return Objects.requireNonNullElse(
                sources.read(Instant.EPOCH).block(Duration.ofSeconds(10)), EvidenceSources.Reading.none());
    }

    /** The node's GPU and driver as configured ({@code readygate.node.*}), compared with a snapshot's manifest. */
    private Map<String, String> nodeFacts() {
        Map<String, String> node = new LinkedHashMap<>();
        if (!properties.node().gpuUuid().isBlank()) {
            node.put(NodeFacts.GPU_UUID, properties.node().gpuUuid());
        }
        if (!properties.node().driverVersion().isBlank()) {
            node.put(NodeFacts.DRIVER_VERSION, properties.node().driverVersion());
        }
        return node;
    }

    private void evidence(CheckReport.Builder report, EngineSurface surface, EvidenceSources.Reading now) {
        ReadygateProperties.Evidence evidence = properties.evidence();
        report.section("restart evidence");
        LogSample engineLog = logEvidence(report, "engine log", "readygate.evidence.engine-log", evidence.engineLog());
        logEvidence(report, "daemon log", "readygate.evidence.daemon-log", evidence.daemonLog());
        report.line(
                "daemon health",
                evidence.daemonHealthUrl() == null
                        ? "not configured (readygate.evidence.daemon-health-url)"
                        : evidence.daemonHealthUrl() + ": "
                                + (Boolean.TRUE.equals(now.daemonHealthy()) ? "200 (serving)" : "not serving"));
        report.line(
                "daemon sockets",
                evidence.daemonSocketDir() == null
                        ? "not configured (readygate.evidence.daemon-socket-dir)"
                        : now.daemonSockets() + " weight-cache socket(s) in " + evidence.daemonSocketDir());
        for (DaemonReadyFile ready : now.daemonReadyFiles()) {
            report.line("daemon ready file", ready.describe());
        }
        Path snapshotDir = evidence.snapshotDir();
        report.line(
                "snapshot",
                snapshotDir == null
                        ? "not configured (readygate.evidence.snapshot-dir)"
                        : snapshotDir + ": "
                                + (Files.isReadable(snapshotDir.resolve("manifest.json"))
                                        ? "manifest.json (its oracle is the canary's expected answer when the canary"
                                                + " is vLLM's own request)"
                                        : "no manifest.json")
                                + (now.snapshotReleasedAt() == null
                                        ? ""
                                        : ", release.json at " + now.snapshotReleasedAt()));
        if (snapshotDir != null) {
            snapshot(report, engineLog, now.manifest(), surface.version());
        }
        if (surface.dialect() != EngineDialect.VLLM) {
            report.line(
                    "restart paths",
                    "vLLM only: " + surface.dialect().value()
                            + " starts are recorded as unknown, with what was missing");
        }
    }

    /**
     * What a snapshot can restore of this engine (one GPU only: {@link SnapshotScope}) and whether the snapshot
     * directory's manifest was taken on this GPU, driver and vLLM version: each concern a problem, as {@code /status}
     * names them. The engine's arguments are its log's latest {@code non-default args}, else the manifest's argv (a
     * restored engine logs none).
     */
    private void snapshot(
            CheckReport.Builder report,
            @Nullable LogSample engineLog,
            @Nullable SnapshotManifest manifest,
            @Nullable String vllmVersion) {
        EngineArguments arguments = EngineArguments.parse(engineLog == null ? null : engineLog.lastEngineArgs());
        if (arguments.unknown() && manifest != null) {
            arguments = EngineArguments.ofArgv(manifest.engineArgv());
        }
        if (arguments.unknown()) {
            report.line(
                    "snapshot scope",
                    "not known: no non-default args in the engine log, no engine_argv in the manifest");
        } else {
            List<String> unsupported = SnapshotScope.unsupported(arguments, true);
            if (unsupported.isEmpty()) {
                report.line(
                        "snapshot scope",
                        "one GPU (tensor, pipeline and data parallel size 1): a snapshot can restore this engine");
            } else {
                report.line("snapshot scope", "NOT supported: " + String.join("; ", unsupported));
                unsupported.forEach(line -> report.problem("unsupported snapshot configuration: " + line));
            }
        }
        if (manifest != null) {
            List<SnapshotMismatch> mismatches =
                    SnapshotMismatch.of(manifest, nodeFacts(), Objects.requireNonNullElse(vllmVersion, "unknown"));
            if (mismatches.isEmpty()) {
                report.line("snapshot manifest", "taken on this GPU, driver and vLLM version, as far as known");
            } else {
                String named =
                        mismatches.stream().map(SnapshotMismatch::describe).collect(Collectors.joining("; "));
                report.line("snapshot manifest", "NOT trusted: " + named);
                report.problem("the snapshot manifest does not match this engine (" + named + "): vLLM refuses such a"
                        + " restore, and its oracle is not the canary's expected answer");
            }
        }
    }

    /**
     * What a configured log file holds (how many of vLLM's lines readygate recognizes in its last 4 MB), as the line
     * {@code label}; the sample read, or null when none was.
     */
    private @Nullable LogSample logEvidence(CheckReport.Builder report, String label, String key, @Nullable Path file) {
        if (file == null) {
            report.line(label, "not configured (" + key + ")");
            return null;
        }
        if (!Files.isReadable(file)) {
            report.problem(key + " is " + file + ", which does not exist or cannot be read");
            report.line(label, file + ": cannot be read");
            return null;
        }
        LogSample sample;
        try {
            sample = LogSample.of(file, clock);
        } catch (IOException e) {
            report.problem(key + " is " + file + ", which cannot be read: " + e.getMessage());
            report.line(label, file + ": cannot be read");
            return null;
        }
        report.line(
                label,
                file + ": " + sample.lines() + " lines, "
                        + (sample.recognized().isEmpty()
                                ? "none of them vLLM's (restart paths cannot be told from it)"
                                : "vLLM's lines: " + sample.recognized()));
        return sample;
    }
}
