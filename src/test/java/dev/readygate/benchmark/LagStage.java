package dev.readygate.benchmark;

import dev.readygate.readiness.EngineState;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Verification lag: the engine is restarted along each path in turn; for every start, the instant it became able to
 * serve (the simulator's {@code ableToServeSince}: listening, no blocking fault, the configured weights, warmed up) is
 * compared with readygate's transition to {@code ready} and with the kubelet baseline's.
 *
 * <p>readygate's lag includes its own verifying probes (a representative completion of 512 + 64 tokens and the
 * canary); their durations, as readygate measured them (request sent to {@code [DONE]}), are subtracted to give the
 * overhead: the time readygate took to notice the engine and to start and judge the probes. Prompt planning
 * ({@code /tokenize}) is not subtracted: it counts as overhead.
 *
 * <p>Each start's overhead is also taken apart ({@link Part}), from readygate's own state changes and the probes'
 * verdicts on one clock with the simulator's, and every start's parts go to {@code lag-starts.csv}: the
 * figure's tail is then a tail of one part or another, not a guess.
 */
final class LagStage {

    /**
     * The parts of a start from the engine's listening to readygate's {@code ready}. The overhead is the sum of the
     * first five less {@link #WARM_UP} (the engine listens before it can serve; readygate's work in that time is not
     * lag).
     */
    enum Part {
        /**
         * The engine listens → readygate's first state of a listening engine ({@code listening} or {@code healthy}):
         * the refused connects every {@code down-interval}, then {@code /health}.
         */
        NOTICE("the engine listens → readygate: `healthy` (`down-interval` polls, `/health`)"),
        /** → {@code model_listed} (or {@code verifying}): {@code /metrics} with {@code /v1/models}. */
        CHEAP_CHECK("→ `model_listed` (`/metrics`, `/v1/models`)"),
        /** → the representative probe sent: discovery and planning the prompt ({@code /tokenize}). */
        PLAN("→ the representative probe sent (discovery, `/tokenize`)"),
        /** The representative's verdict → the canary sent (the canary's {@code /metrics} scrapes). */
        BETWEEN_PROBES("its verdict → the canary's verdict, less the canary's request (its `/metrics` scrapes)"),
        /** The canary's verdict → {@code ready}. */
        JUDGE("the canary's verdict → `/readyz` 200"),
        /** The engine listens → it can serve (its own warm-up: not readygate's, subtracted). */
        WARM_UP("less: the engine listens → it can serve (its warm-up)");

        /** What the report's table calls it. */
        final String label;

        Part(String label) {
            this.label = label;
        }

        String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Simulated start durations long enough that readygate's 200 ms health check always sees the engine go. */
    static final List<String> ENGINE = List.of(
            "load-time=600ms",
            "timing.preload-hit-load-time=800ms",
            "timing.snapshot-restore-time=600ms",
            "timing.fallback-detect-time=50ms",
            "timing.shutdown-time=10ms");

    /** How many measured starts count as the first ones, whose code is still being compiled. */
    static final int EARLY_STARTS = 40;

    static final StartupPath[] PATHS = {
        StartupPath.COLD, StartupPath.PRELOAD_HIT, StartupPath.PRELOAD_FALLBACK, StartupPath.SNAPSHOT_RESTORE
    };

    private final Plan plan;
    private final Path dir;
    private final Clock clock = Clock.systemUTC();
    final Map<StartupPath, Series> overhead = new LinkedHashMap<>();
    final Map<StartupPath, Series> lag = new LinkedHashMap<>();
    final Map<StartupPath, Series> probes = new LinkedHashMap<>();
    final Map<StartupPath, Series> baselineLag = new LinkedHashMap<>();
    final Series overheadAll = new Series("readygate verification overhead, all paths", "ms");
    final Series baselineAll = new Series("kubelet /health lag, all paths", "ms");
    final Map<Part, Series> parts = new EnumMap<>(Part.class);
    private final List<String> startRows = new ArrayList<>();
    /** Measured starts in which a verifying probe failed before the one that passed (a second try). */
    int retried;

    int starts;
    int timeouts;
    int wrongPath;
    int readyBeforeAble;

    LagStage(Plan plan, Path dir) {
        this.plan = plan;
        this.dir = dir;
        for (StartupPath path : PATHS) {
            overhead.put(path, new Series("readygate overhead " + path.value(), "ms"));
            lag.put(path, new Series("readygate lag " + path.value(), "ms"));
            probes.put(path, new Series("verifying probes " + path.value(), "ms"));
            baselineLag.put(path, new Series("kubelet lag " + path.value(), "ms"));
        }
        for (Part part : Part.values()) {
            parts.put(part, new Series("overhead part " + part.value(), "ms"));
        }
    }

    void run(NoiseMonitor noise) {
        try (Stack stack = Stack.start("lag", dir, 7, ENGINE, List.of())) {
            stack.awaitAllReady(Duration.ofSeconds(30));
            for (int i = 0; i < plan.warmupStarts() * PATHS.length; i++) {
                measure(stack, PATHS[i % PATHS.length], -1);
            }
            for (int repeat = 0; repeat < plan.repeats(); repeat++) {
                noise.begin("lag #" + (repeat + 1));
                for (int i = 0; i < plan.startsPerPath() * PATHS.length; i++) {
                    measure(stack, PATHS[i % PATHS.length], repeat);
                }
                noise.end();
                Benchmark.progress("lag: repeat %d of %d done (%d starts)", repeat + 1, plan.repeats(), starts);
            }
        }
    }

    private void measure(Stack stack, StartupPath path, int repeat) {
        int before = stack.engine.latestStartNumber();
        Instant requested = clock.instant();
        stack.kubelet.containerStarted();
        stack.engine.restart(path);
        boolean done = Stack.await(
                () -> stack.engine.latestStartNumber() > before
                        && stack.able.current()
                        && stack.readyTransitionAfter(requested) != null
                        && stack.kubelet.ready().firstChangeTo(true, requested) != null,
                Duration.ofSeconds(30));
        if (repeat < 0) {
            return;
        }
        starts++;
        if (!done) {
            timeouts++;
            return;
        }
        if (stack.engine.latestStartPath() != path) {
            wrongPath++;
            return;
        }
        Instant able = stack.engine.ableToServeSince();
        Stack.Transition ready = stack.readyTransitionAfter(requested);
        Instant kubeletReady = stack.kubelet.ready().firstChangeTo(true, requested);
        if (able == null || ready == null || kubeletReady == null) {
            timeouts++;
            return;
        }
        double lagMs = Timeline.millis(able, ready.at());
        if (lagMs < 0) {
            readyBeforeAble++;
        }
        double probeMs = ready.representativeMs() + ready.canaryMs();
        lag.get(path).add(repeat, lagMs);
        probes.get(path).add(repeat, probeMs);
        overhead.get(path).add(repeat, lagMs - probeMs);
        overheadAll.add(repeat, lagMs - probeMs);
        double baseline = Timeline.millis(able, kubeletReady);
        baselineLag.get(path).add(repeat, baseline);
        baselineAll.add(repeat, baseline);
        takeApart(stack, path, repeat, requested, able, ready, lagMs - probeMs);
    }

    /** Adds the start's parts ({@link Part}) and its row of {@code lag-starts.csv}; a start without them is left out. */
    private void takeApart(
            Stack stack,
            StartupPath path,
            int repeat,
            Instant requested,
            Instant able,
            Stack.Transition ready,
            double overheadMs) {
        Instant listening = stack.engine.listeningSince();
        Stack.Transition seen =
                stack.firstTransitionAfter(requested, EngineState.Kind.LISTENING, EngineState.Kind.HEALTHY);
        Stack.Transition verifying =
                stack.firstTransitionAfter(requested, EngineState.Kind.MODEL_LISTED, EngineState.Kind.VERIFYING);
        if (listening == null
                || seen == null
                || verifying == null
                || ready.representativeAt() == null
                || ready.canaryAt() == null) {
            return;
        }
        // The verifier runs the representative probe, then the canary.
        Instant canarySent = minus(ready.canaryAt(), ready.canaryMs());
        Map<Part, Double> values = new EnumMap<>(Part.class);
        values.put(Part.NOTICE, Timeline.millis(listening, seen.at()));
        values.put(Part.CHEAP_CHECK, Timeline.millis(seen.at(), verifying.at()));
        values.put(
                Part.PLAN, Timeline.millis(verifying.at(), minus(ready.representativeAt(), ready.representativeMs())));
        values.put(Part.BETWEEN_PROBES, Timeline.millis(ready.representativeAt(), canarySent));
        values.put(Part.JUDGE, Timeline.millis(ready.canaryAt(), ready.at()));
        values.put(Part.WARM_UP, Timeline.millis(listening, able));
        values.forEach((part, ms) -> parts.get(part).add(repeat, ms));
        boolean secondTry =
                ready.lastFailedProbeAt() != null && ready.lastFailedProbeAt().isAfter(listening);
        if (secondTry) {
            retried++;
        }
        StringBuilder row = new StringBuilder()
                .append(repeat + 1)
                .append(',')
                .append(listening)
                .append(',')
                .append(path.value())
                .append(',')
                .append(format(overheadMs));
        for (Part part : Part.values()) {
            row.append(',').append(format(values.get(part)));
        }
        row.append(',').append(format(ready.representativeMs())).append(',').append(format(ready.canaryMs()));
        row.append(',').append(secondTry);
        startRows.add(row.toString());
    }

    private static Instant minus(Instant at, double millis) {
        return at.minusNanos(Math.round(millis * 1e6));
    }

    private static String format(@Nullable Double ms) {
        return ms == null ? "" : String.format(Locale.ROOT, "%.3f", ms);
    }

    /** The overheads of the first {@code count} measured starts (every repeat's, in the order they were made). */
    Samples earliest(int count) {
        Samples all = overheadAll.pooled();
        return all.slice("first starts' overhead", 0, Math.min(count, all.count()));
    }

    /** The overheads of the later half of the measured starts. */
    Samples latestHalf() {
        Samples all = overheadAll.pooled();
        return all.slice("later starts' overhead", all.count() / 2, all.count());
    }

    /** Every measured start's parts, one row each: {@code lag-starts.csv} beside {@code results.json}. */
    List<String> startsCsv() {
        List<String> lines = new ArrayList<>();
        StringBuilder header = new StringBuilder("repeat,listening_at,path,overhead_ms");
        for (Part part : Part.values()) {
            header.append(',').append(part.value()).append("_ms");
        }
        lines.add(header.append(",representative_ms,canary_ms,second_try").toString());
        lines.addAll(startRows);
        return lines;
    }

    Map<String, Object> results() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("starts", starts);
        out.put("timed_out", timeouts);
        out.put("took_another_path", wrongPath);
        out.put("readygate_ready_before_able", readyBeforeAble);
        Map<String, Object> perPath = new LinkedHashMap<>();
        for (StartupPath path : PATHS) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("readygate_lag_ms", lag.get(path).summary());
            p.put("verifying_probes_ms", probes.get(path).summary());
            p.put("readygate_overhead_ms", overhead.get(path).summary());
            p.put("baseline_lag_ms", baselineLag.get(path).summary());
            perPath.put(path.value(), p);
        }
        out.put("paths", perPath);
        out.put("readygate_overhead_all_paths_ms", overheadAll.summary());
        out.put("baseline_lag_all_paths_ms", baselineAll.summary());
        Map<String, Object> byPart = new LinkedHashMap<>();
        parts.forEach((part, series) -> byPart.put(part.value(), series.summary()));
        out.put("overhead_parts_ms", byPart);
        out.put("starts_with_a_second_try", retried);
        return out;
    }
}
