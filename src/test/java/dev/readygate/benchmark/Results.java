package dev.readygate.benchmark;

import dev.readygate.simulator.SimulatorProperties;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** What a run measured, and how it is written: {@code results.json}, the chart and {@code benchmarks.md}. */
final class Results {

    final Plan plan;
    final Instant started;
    final Map<String, Object> root = new LinkedHashMap<>();
    final Map<String, Object> details = new LinkedHashMap<>();

    @Nullable
    LagStage lag;

    @Nullable
    FalseReadyStage falseReady;

    @Nullable
    DetectionStage detection;

    @Nullable
    ReadyEngineStage readyEngine;

    @Nullable
    LlamaSaturatedStage llamaSaturated;

    @Nullable
    FootprintStage footprint;

    @Nullable
    StatusFloodStage statusFlood;

    @Nullable
    KilledReadygateStage killedReadygate;

    GatewayStage gateway;
    /** The failure cycle with one replica, then with two, as far as each ran. */
    final List<FailureCycleStage> failureCycles = new ArrayList<>();

    List<Map<String, Object>> noise = List.of();
    Duration took = Duration.ZERO;

    Results(Plan plan, Instant started) {
        this.plan = plan;
        this.started = started;
    }

    void lag(LagStage stage) {
        lag = stage;
        details.put("verification_lag", stage.results());
    }

    void falseReady(FalseReadyStage stage) {
        falseReady = stage;
        details.put("false_ready", stage.results());
    }

    void detection(DetectionStage stage) {
        detection = stage;
        details.put("detection", stage.results());
    }

    void readyEngine(ReadyEngineStage stage) {
        readyEngine = stage;
        details.put("ready_engine", stage.results());
    }

    void llamaSaturated(LlamaSaturatedStage stage) {
        llamaSaturated = stage;
        details.put("saturated_llama_server", stage.results);
    }

    void statusFlood(StatusFloodStage stage) {
        statusFlood = stage;
        Map<String, Object> out = new LinkedHashMap<>(stage.results);
        out.put("failures", stage.failures);
        details.put("status_flood", out);
    }

    void gateway(GatewayStage stage) {
        gateway = stage;
        Map<String, Object> out = new LinkedHashMap<>(stage.results);
        Map<String, Object> legs = new LinkedHashMap<>();
        stage.figures.forEach((leg, byStreams) -> legs.put(leg.label, byStreams));
        out.put("figures", legs);
        out.put("failures", stage.failures);
        details.put("gateway_overhead", out);
    }

    void failureCycle(FailureCycleStage stage) {
        failureCycles.add(stage);
        Map<String, Object> out = new LinkedHashMap<>(stage.results);
        out.put("failed_client_requests", stage.figures());
        out.put("failures", stage.failures);
        details.put(stage.replicas == 1 ? "failure_cycle" : "failure_cycle_" + stage.replicas + "_replicas", out);
    }

    void killedReadygate(KilledReadygateStage stage) {
        killedReadygate = stage;
        details.put("killed_readygate", stage.results);
    }

    void footprint(FootprintStage stage) {
        footprint = stage;
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> startup = new LinkedHashMap<>();
        for (FootprintStage.Variant variant : stage.variants()) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("description", variant.description());
            v.put("jvm_flags", variant.jvm());
            v.put("app_args", variant.app());
            Series series = stage.startup.get(variant.name());
            v.put("seconds", series == null ? Map.of() : series.summary());
            v.put("rss_mib_at_livez_max", Samples.round(stage.rssAtLivez.getOrDefault(variant.name(), Double.NaN)));
            startup.put(variant.name(), v);
        }
        out.put("startup_to_livez", startup);
        out.put("recommended_variant", FootprintStage.recommended());
        out.put("profiles", stage.profiles);
        out.put("probe_cost", probeCost(stage));
        out.put("failures", stage.failures);
        details.put("footprint", out);
    }

    void noise(List<Map<String, Object>> stages) {
        noise = stages;
        details.put("machine_noise", stages);
    }

    void finish(Duration duration) {
        took = duration;
    }

    /** The simulator's default timings: the latency model the engine-capacity figures use. */
    static SimulatorProperties simulatorDefaults() {
        return new Binder(new MapConfigurationPropertySource(Map.of()))
                .bindOrCreate("readygate.simulator", SimulatorProperties.class);
    }

    /**
     * The engine's capacity under the simulator's latency model with its default timings: as many concurrent
     * sequences as vLLM's "Maximum concurrency" ({@code kv-cache-size-tokens / max-model-len}), each a request shaped
     * like the representative probe (512 + 64 tokens), every step stretched by the batch.
     */
    static Map<String, Double> engineCapacity() {
        SimulatorProperties defaults = simulatorDefaults();
        SimulatorProperties.Timing t = defaults.timing();
        double concurrency =
                (double) defaults.model().kvCacheSizeTokens() / defaults.model().maxModelLen();
        double stretch = 1 + t.batchSlowdown() * (concurrency - 1);
        double ttft = (t.ttftBase().toNanos() + 512 * t.prefillPerToken().toNanos()) / 1e9 * stretch;
        double decode = 63 * t.decodePerToken().toNanos() / 1e9 * stretch;
        double requestSeconds = ttft + decode;
        Map<String, Double> out = new LinkedHashMap<>();
        out.put("concurrency", concurrency);
        out.put("request_seconds_at_full_batch", requestSeconds);
        out.put("tokens_per_hour", concurrency * 576 / requestSeconds * 3600);
        out.put("sequence_seconds_per_hour", concurrency * 3600);
        return out;
    }

    private Map<String, Object> probeCost(FootprintStage stage) {
        Map<String, Object> out = new LinkedHashMap<>(stage.probeCost);
        Map<String, Double> capacity = engineCapacity();
        out.put("engine_capacity_model", roundAll(capacity));
        Object tokens = stage.probeCost.get("idle_probe_tokens_per_hour");
        Object seconds = stage.probeCost.get("idle_probe_engine_seconds_per_hour");
        if (tokens instanceof Double t && seconds instanceof Double s) {
            out.put("idle_token_fraction", Samples.round(t / capacity.get("tokens_per_hour")));
            out.put("idle_engine_time_fraction", Samples.round(s / capacity.get("sequence_seconds_per_hour")));
            out.put("idle_wall_time_fraction_at_batch_1", Samples.round(s / 3600));
        }
        Object busyTokens = stage.probeCost.get("busy_probe_tokens_per_hour");
        Object busySeconds = stage.probeCost.get("busy_probe_engine_seconds_per_hour");
        if (busyTokens instanceof Double t && busySeconds instanceof Double s) {
            out.put("busy_token_fraction", Samples.round(t / capacity.get("tokens_per_hour")));
            out.put("busy_engine_time_fraction", Samples.round(s / capacity.get("sequence_seconds_per_hour")));
        }
        Duration heavy = plan.footprintHeavyInterval();
        out.put("heavy_interval_seconds", heavy.toSeconds());
        Object perVerification = stage.probeCost.get("idle_tokens_per_verification");
        Object secondsPerVerification = stage.probeCost.get("idle_engine_seconds_per_verification");
        if (perVerification instanceof Double t && secondsPerVerification instanceof Double s) {
            double perHour = 3600.0 / heavy.toSeconds();
            out.put("cadence_tokens_per_hour_idle", Samples.round(t * perHour));
            out.put("cadence_engine_seconds_per_hour_idle", Samples.round(s * perHour));
            out.put(
                    "cadence_engine_time_fraction_idle",
                    Samples.round(s * perHour / capacity.get("sequence_seconds_per_hour")));
        }
        return out;
    }

    private static Map<String, Object> roundAll(Map<String, Double> values) {
        Map<String, Object> out = new LinkedHashMap<>();
        values.forEach((k, v) -> out.put(k, Samples.round(v)));
        return out;
    }

    /** The headline figures: the keys the issue asks for, then the stage details. */
    Map<String, Object> json() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", plan.mode());
        Map<String, Object> machine = Benchmark.machine(started);
        machine.put("run_seconds", took.toSeconds());
        machine.put("repeats", plan.repeats());
        out.put("machine", machine);
        Headline h = headline();
        out.putAll(h.figures);
        out.put("goals", h.goals);
        out.put("intervals", intervals().toMap());
        out.put("details", details);
        return out;
    }

    /** The figures and each goal's verdict. */
    record Headline(Map<String, Object> figures, Map<String, Object> goals) {}

    Headline headline() {
        Map<String, Object> f = new LinkedHashMap<>();
        Map<String, Object> goals = new LinkedHashMap<>();
        if (lag != null) {
            put(f, "verification_lag_overhead_p99_ms", lag.overheadAll.pooled().p99());
            put(f, "verification_lag_overhead_p50_ms", lag.overheadAll.pooled().p50());
            put(f, "verification_lag_overhead_max_ms", lag.overheadAll.pooled().max());
            put(f, "baseline_verification_lag_p99_ms", lag.baselineAll.pooled().p99());
            put(f, "baseline_verification_lag_p50_ms", lag.baselineAll.pooled().p50());
            goals.put(
                    "verification_lag_overhead_p99_ms <= 20",
                    lag.overheadAll.pooled().p99() <= 20);
        }
        if (falseReady != null) {
            put(f, "false_ready_seconds", falseReady.readygateTotalSeconds());
            put(f, "baseline_false_ready_seconds", falseReady.baselineTotalSeconds());
            goals.put("false_ready_seconds == 0", falseReady.readygateTotalSeconds() == 0);
        }
        if (detection != null) {
            Samples dead = pooled(detection.readygate, "crash", "engine-dead");
            Samples deadBaseline = pooled(detection.baseline, "crash", "engine-dead");
            put(f, "dead_engine_detection_p99_ms", dead.p99());
            put(f, "dead_engine_detection_p50_ms", dead.p50());
            put(f, "dead_engine_detection_max_ms", dead.max());
            put(f, "baseline_dead_engine_detection_p99_ms", deadBaseline.p99());
            Samples hang = detection.readygate.get("frozen").pooled();
            put(f, "hang_detection_p99_ms", hang.p99());
            put(f, "hang_detection_p50_ms", hang.p50());
            put(
                    f,
                    "baseline_hang_detection_p99_ms",
                    detection.baseline.get("frozen").pooled().p99());
            Samples inference = detection.readygate.get("inference-hang").pooled();
            if (!inference.isEmpty()) {
                put(f, "inference_hang_detection_max_ms", inference.max());
            }
            goals.put("dead_engine_detection_p99_ms <= 100", dead.p99() <= 100);
            goals.put("hang_detection_p99_ms <= heavy-timeout (3 s here) + 500", hang.p99() <= 3500);
        }
        saturated(f, goals);
        if (footprint != null) {
            Map<String, Object> recommended = footprint.profiles.get(FootprintStage.recommended());
            Map<String, Object> standard = footprint.profiles.get("default");
            Double idle = figure(recommended, "idle", "rss_mib_median");
            Double loaded = figure(recommended, "load", "rss_mib_max");
            Double idleCpu = figure(recommended, "idle", "cpu_cores");
            put(f, "idle_rss_mib", idle);
            put(f, "loaded_rss_mib", loaded);
            put(f, "idle_working_set_mib", figure(recommended, "idle", "working_set_mib_median"));
            put(f, "loaded_working_set_mib", figure(recommended, "load", "working_set_mib_max"));
            put(f, "default_jvm_idle_working_set_mib", figure(standard, "idle", "working_set_mib_median"));
            put(f, "default_jvm_idle_rss_mib", figure(standard, "idle", "rss_mib_median"));
            put(f, "default_jvm_loaded_rss_mib", figure(standard, "load", "rss_mib_max"));
            Series start = footprint.startup.get(FootprintStage.recommended());
            Series startDefault = footprint.startup.get("default");
            put(
                    f,
                    "startup_to_livez_seconds",
                    start == null ? null : start.pooled().p50());
            put(
                    f,
                    "startup_to_livez_seconds_max",
                    start == null ? null : start.pooled().max());
            put(
                    f,
                    "default_jvm_startup_to_livez_seconds",
                    startDefault == null ? null : startDefault.pooled().p50());
            if (footprint.readyzLatency != null) {
                put(f, "readyz_p99_ms", footprint.readyzLatency.p99());
                put(f, "readyz_p50_ms", footprint.readyzLatency.p50());
                put(f, "readyz_max_ms", footprint.readyzLatency.max());
            }
            put(f, "idle_cpu_fraction_of_a_core", idleCpu);
            Map<String, Object> cost = probeCost(footprint);
            put(f, "probe_engine_time_fraction", (Double) cost.get("idle_engine_time_fraction"));
            put(f, "probe_token_fraction", (Double) cost.get("idle_token_fraction"));
            put(f, "probe_tokens_per_hour_idle", (Double) cost.get("idle_probe_tokens_per_hour"));
            put(f, "probe_tokens_per_hour_busy", (Double) cost.get("busy_probe_tokens_per_hour"));
            goals.put("idle_rss_mib <= 100", idle != null && idle <= 100);
            goals.put(
                    "startup_to_livez_seconds <= 1.0",
                    start != null && start.pooled().p50() <= 1.0);
            goals.put("readyz_p99_ms <= 2", footprint.readyzLatency != null && footprint.readyzLatency.p99() <= 2);
            Object fraction = cost.get("idle_engine_time_fraction");
            goals.put("probe_engine_time_fraction <= 0.001", fraction instanceof Double d && d <= 0.001);
            Object busy = stage(footprint.probeCost, "busy_heavy_verifications");
            goals.put("no heavy probe while real traffic succeeds", busy instanceof Double d && d == 0);
        }
        return new Headline(f, goals);
    }

    /** The headline percentiles' intervals (see {@link FigureIntervals}); the keys are the figures'. */
    FigureIntervals intervals() {
        FigureIntervals out = new FigureIntervals();
        if (lag != null) {
            out.put("verification_lag_overhead_p99_ms", lag.overheadAll, 0.99, "lag");
            out.put("verification_lag_overhead_p50_ms", lag.overheadAll, 0.50, "lag");
            out.put("baseline_verification_lag_p99_ms", lag.baselineAll, 0.99, "lag");
            out.put("baseline_verification_lag_p50_ms", lag.baselineAll, 0.50, "lag");
        }
        if (detection != null) {
            Samples dead = pooled(detection.readygate, "crash", "engine-dead");
            out.put("dead_engine_detection_p99_ms", dead, 0.99, "detection");
            out.put("dead_engine_detection_p50_ms", dead, 0.50, "detection");
            out.put("hang_detection_p99_ms", detection.readygate.get("frozen"), 0.99, "detection");
            out.put("hang_detection_p50_ms", detection.readygate.get("frozen"), 0.50, "detection");
        }
        if (footprint != null) {
            Map<String, Object> recommended = footprint.profiles.get(FootprintStage.recommended());
            out.put("idle_rss_mib", interval(recommended, "idle", "rss_mib_median_ci95"), "footprint: recommended");
            out.put(
                    "idle_working_set_mib",
                    interval(recommended, "idle", "working_set_mib_median_ci95"),
                    "footprint: recommended");
            Series start = footprint.startup.get(FootprintStage.recommended());
            if (start != null) {
                out.put("startup_to_livez_seconds", start, 0.50, "footprint: start-up");
            }
            Series startDefault = footprint.startup.get("default");
            if (startDefault != null) {
                out.put("default_jvm_startup_to_livez_seconds", startDefault, 0.50, "footprint: start-up");
            }
            if (footprint.readyzLatency != null) {
                out.put("readyz_p99_ms", footprint.readyzLatency, 0.99, "footprint: recommended");
                out.put("readyz_p50_ms", footprint.readyzLatency, 0.50, "footprint: recommended");
            }
        }
        return out;
    }

    private static @Nullable Interval interval(@Nullable Map<String, Object> profile, String window, String key) {
        if (profile != null && profile.get(window) instanceof Map<?, ?> w && w.get(key) instanceof Map<?, ?> m) {
            return Interval.fromMap(m);
        }
        return null;
    }

    /** Flaps and false not-ready seconds on a saturated engine with no fault: the simulator's, llama-server's. */
    private void saturated(Map<String, Object> f, Map<String, Object> goals) {
        Map<String, Map<String, Object>> engines = new LinkedHashMap<>();
        if (readyEngine != null && !readyEngine.saturated.isEmpty()) {
            engines.put("simulator", readyEngine.saturated);
        }
        if (llamaSaturated != null && llamaSaturated.skipped() == null) {
            engines.put("llama_server", llamaSaturated.figures(LlamaSaturatedStage.Variant.SLOT_SATURATED));
            engines.put(
                    "llama_server_http_threads_default",
                    llamaSaturated.figures(LlamaSaturatedStage.Variant.HTTP_THREADS_DEFAULT));
        }
        boolean none = true;
        for (var engine : engines.entrySet()) {
            for (String judge : List.of("readygate", "kubelet")) {
                for (String figure : List.of("flaps", "false_not_ready_s")) {
                    Object value = engine.getValue().get(judge + "_" + figure);
                    String key = (judge.equals("kubelet") ? "baseline_" : "") + "saturated_" + engine.getKey() + "_"
                            + figure;
                    put(f, key, value instanceof Number n ? n.doubleValue() : null);
                    // The goal is readygate's on a saturated slot; an engine out of HTTP threads answers no judge.
                    if (judge.equals("readygate") && !engine.getKey().endsWith("_http_threads_default")) {
                        none &= value instanceof Number n && n.doubleValue() == 0;
                    }
                }
            }
        }
        if (!engines.isEmpty()) {
            goals.put("saturated: zero flaps and zero false not-ready seconds", none);
        }
    }

    private static @Nullable Object stage(Map<String, Object> map, String key) {
        return map.get(key);
    }

    static Samples pooled(Map<String, Series> series, String... kinds) {
        Samples out = new Samples(String.join("+", kinds), "ms");
        for (String kind : kinds) {
            out.addAll(series.get(kind).pooled());
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static @Nullable Double figure(@Nullable Map<String, Object> profile, String window, String key) {
        if (profile == null || !(profile.get(window) instanceof Map<?, ?> w)) {
            return null;
        }
        Object value = ((Map<String, Object>) w).get(key);
        return value instanceof Double d ? d : null;
    }

    private static void put(Map<String, Object> map, String key, @Nullable Double value) {
        if (value != null && !Double.isNaN(value)) {
            map.put(key, Samples.round(value));
        }
    }

    /** The headline figures of the run written there before this one (same mode), to show how much they move. */
    Map<String, Object> previous = Map.of();

    /** That run's intervals, where it recorded them. */
    Map<String, Interval> previousIntervals = Map.of();

    /** A quick run: its figures against the last published full run's ({@code benchmark.full-results}). */
    List<FigureIntervals.Agreement> agreementWithFull = List.of();

    /** Where the full run was read from, and when it started; empty when none was compared. */
    String fullRun = "";

    @SuppressWarnings("unchecked")
    private void compareWithFull(Path file, JsonMapper json) {
        if (!plan.mode().equals("quick") || !Files.exists(file)) {
            return;
        }
        try {
            Map<String, Object> full = json.readValue(file.toFile(), Map.class);
            if (!"full".equals(full.get("mode"))) {
                return;
            }
            agreementWithFull =
                    intervals().compare(headline().figures(), full, FigureIntervals.read(full.get("intervals")), noise);
            fullRun =
                    file + (full.get("machine") instanceof Map<?, ?> m ? " (started " + m.get("started_at") + ")" : "");
            details.put(
                    "agreement_with_full_run",
                    Map.of(
                            "full_run",
                            fullRun,
                            "figures",
                            agreementWithFull.stream()
                                    .map(FigureIntervals.Agreement::toMap)
                                    .toList()));
            for (FigureIntervals.Agreement a : agreementWithFull) {
                Benchmark.progress(
                        "%s %s: quick %s %s vs full %s %s, others busy %s cores",
                        a.verdict().toUpperCase(java.util.Locale.ROOT),
                        a.figure(),
                        Report.f(a.value()),
                        Report.bounds(a.interval()),
                        Report.f(a.other()),
                        Report.bounds(a.otherInterval()),
                        a.othersBusyCores() == null ? "n/a" : Report.f(a.othersBusyCores()));
            }
        } catch (RuntimeException ex) {
            Benchmark.progress("full results unreadable (%s): not compared", ex.getMessage());
        }
    }

    @SuppressWarnings("unchecked")
    private void readPrevious(Path file, JsonMapper json) {
        if (!Files.exists(file)) {
            return;
        }
        try {
            Map<String, Object> before = json.readValue(file.toFile(), Map.class);
            if (!plan.mode().equals(before.get("mode"))) {
                return;
            }
            Map<String, Object> figures = new LinkedHashMap<>();
            if (before.get("machine") instanceof Map<?, ?> machine) {
                figures.put("started_at", machine.get("started_at"));
            }
            if (before.get("details") instanceof Map<?, ?> d && d.get("footprint") instanceof Map<?, ?> fp) {
                figures.put("recommended_variant", fp.get("recommended_variant"));
            }
            before.forEach((key, value) -> {
                if (value instanceof Number) {
                    figures.put(key, value);
                }
            });
            previous = figures;
            previousIntervals = FigureIntervals.read(before.get("intervals"));
        } catch (RuntimeException ex) {
            Benchmark.progress("previous results unreadable (%s): not compared", ex.getMessage());
        }
    }

    void write(Path out) throws IOException {
        Path dir = out.resolve("benchmarks");
        Files.createDirectories(dir);
        JsonMapper json =
                JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
        readPrevious(dir.resolve("results.json"), json);
        compareWithFull(Path.of(System.getProperty("benchmark.full-results", "docs/benchmarks/results.json")), json);
        if (!previous.isEmpty()) {
            details.put("previous_run", previous);
        }
        Files.writeString(dir.resolve("results.json"), json.writeValueAsString(json()) + "\n");
        Files.writeString(dir.resolve("latency.svg"), chart().svg(chartTitle()));
        if (lag != null) {
            Files.write(dir.resolve("lag-starts.csv"), lag.startsCsv());
        }
        Files.writeString(out.resolve("benchmarks.md"), new Report(this).markdown());
    }

    String chartTitle() {
        return "readygate vs the kubelet's /health probe (" + plan.mode() + " run, "
                + started.toString().substring(0, 10) + ")";
    }

    LatencyChart chart() {
        LatencyChart chart = new LatencyChart();
        if (lag != null) {
            chart.section("Verification lag: engine able to serve -> /readyz 200");
            for (var entry : lag.overhead.entrySet()) {
                chart.row(
                        "readygate overhead, " + entry.getKey().value(),
                        entry.getValue().pooled(),
                        LatencyChart.READYGATE);
            }
            for (var entry : lag.lag.entrySet()) {
                chart.row(
                        "readygate lag incl. probes, " + entry.getKey().value(),
                        entry.getValue().pooled(),
                        LatencyChart.READYGATE);
            }
            chart.row("kubelet lag, all paths", lag.baselineAll.pooled(), LatencyChart.BASELINE);
        }
        if (detection != null) {
            chart.section("Failure detection: failure -> /readyz 503 (kubelet: not ready)");
            for (String kind :
                    List.of("crash", "engine-dead", "frozen", "inference-hang", "generation-fails-while-ready")) {
                chart.row("readygate, " + kind, detection.readygate.get(kind).pooled(), LatencyChart.READYGATE);
                chart.row("kubelet, " + kind, detection.baseline.get(kind).pooled(), LatencyChart.BASELINE);
            }
        }
        if (footprint != null && footprint.readyzLatency != null) {
            chart.section("readygate's own endpoints under 1000 /readyz/s + 10 /status/s (from intended send time)");
            chart.row("/readyz latency", footprint.readyzLatency, LatencyChart.LOAD);
            if (footprint.statusLatency != null) {
                chart.row("/status latency", footprint.statusLatency, LatencyChart.LOAD);
            }
        }
        return chart;
    }

    List<String> goalLines() {
        List<String> lines = new ArrayList<>();
        headline()
                .goals()
                .forEach((goal, met) -> lines.add(goal + ": " + (Boolean.TRUE.equals(met) ? "met" : "NOT met")));
        return lines;
    }
}
