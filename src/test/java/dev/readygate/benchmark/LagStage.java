package dev.readygate.benchmark;

import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Verification lag: the engine is restarted along each path in turn; for every start, the instant it became able to
 * serve (the simulator's {@code ableToServeSince}: listening, no blocking fault, the configured weights, warmed up) is
 * compared with readygate's transition to {@code ready} and with the kubelet baseline's.
 *
 * <p>readygate's lag includes its own verifying probes (a representative completion of 512 + 64 tokens and the
 * canary); their durations, as readygate measured them (request sent to {@code [DONE]}), are subtracted to give the
 * overhead: the time readygate took to notice the engine and to start and judge the probes. Prompt planning
 * ({@code /tokenize}) is not subtracted: it counts as overhead.
 */
final class LagStage {

    /** Simulated start durations long enough that readygate's 200 ms health check always sees the engine go. */
    static final List<String> ENGINE = List.of(
            "load-time=600ms",
            "timing.preload-hit-load-time=800ms",
            "timing.snapshot-restore-time=600ms",
            "timing.fallback-detect-time=50ms",
            "timing.shutdown-time=10ms");

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
        return out;
    }
}
