package dev.readygate.benchmark;

import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * False-ready time: an engine starts with a condition that lets it listen and answer {@code /health} 200 while it
 * cannot serve correctly, and stays so for {@link #HOLD}; then the condition is fixed. Over the window from the
 * moment the conditioned start listens until both judges are ready again, the time each judge said ready while the
 * engine could not serve is summed.
 *
 * <ul>
 *   <li>{@code warm-up}: the first two requests of a start pay a 600 ms warm-up penalty on the first token (readygate
 *       has a 250 ms objective); the engine is warmed by whoever sends those requests (here, readygate's probes: the
 *       warm-up ends by itself, without a fix);
 *   <li>{@code kv-cache-too-small}: requests longer than 512 tokens fail (the KV cache is too small for real prompts);
 *       fixed by a restart without the condition;
 *   <li>{@code wrong-weights}: the preload daemon holds a fine-tune of the same layout and the start maps it (vLLM
 *       issue #59647); fixed by restarting the daemon with the right checkpoint and the engine along a cache hit;
 *   <li>{@code generation-fails}: every generation fails at its first token (as after a GPU fault); fixed by a restart
 *       without the condition.
 * </ul>
 */
final class FalseReadyStage {

    /** How long the condition lasts: longer than the kubelet's period, so that it has its chance to be wrong. */
    static final Duration HOLD = Duration.ofSeconds(8);

    static final List<String> CONDITIONS =
            List.of("warm-up", "kv-cache-too-small", "wrong-weights", "generation-fails");

    private final Plan plan;
    private final Path dir;
    final Map<String, Series> readygate = new LinkedHashMap<>();
    final Map<String, Series> baseline = new LinkedHashMap<>();
    final Map<String, Series> readygateLagAfterFix = new LinkedHashMap<>();
    final Map<String, Double> windowSeconds = new LinkedHashMap<>();
    int incomplete;

    FalseReadyStage(Plan plan, Path dir) {
        this.plan = plan;
        this.dir = dir;
        for (String condition : CONDITIONS) {
            readygate.put(condition, new Series("readygate false ready " + condition, "s"));
            baseline.put(condition, new Series("kubelet false ready " + condition, "s"));
            readygateLagAfterFix.put(condition, new Series("readygate lag after fix " + condition, "ms"));
            windowSeconds.put(condition, 0.0);
        }
    }

    void run(NoiseMonitor noise) {
        List<String> warmup = List.of("timing.warmup-requests=2", "timing.warmup-penalty=600ms");
        try (Stack faults = Stack.start("false-ready", dir.resolve("faults"), 11, LagStage.ENGINE, List.of());
                Stack warm = Stack.start(
                        "warm-up", dir.resolve("warm-up"), 13, concat(LagStage.ENGINE, warmup), List.of())) {
            for (int repeat = 0; repeat < plan.repeats(); repeat++) {
                noise.begin("false-ready #" + (repeat + 1));
                for (int episode = 0; episode < plan.falseReadyEpisodes(); episode++) {
                    for (String condition : CONDITIONS) {
                        if (plan.mode().equals("quick") && condition.equals("generation-fails")) {
                            continue; // behaves as kv-cache-too-small for both judges; quick mode keeps to 5 min
                        }
                        episode(condition.equals("warm-up") ? warm : faults, condition, repeat);
                    }
                }
                noise.end();
                Benchmark.progress("false-ready: repeat %d of %d done", repeat + 1, plan.repeats());
            }
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }

    private void episode(Stack stack, String condition, int repeat) {
        if (!stack.awaitAllReady(Duration.ofSeconds(30))) {
            incomplete++;
            return;
        }
        int before = stack.engine.latestStartNumber();
        switch (condition) {
            case "kv-cache-too-small" -> stack.engine.fault("kv-too-small", false);
            case "generation-fails" -> stack.engine.fault("generation-fails", false);
            case "wrong-weights" -> stack.engine.daemonHolds(stack.engine.wrongCheckpoint());
            default -> {}
        }
        stack.kubelet.containerStarted();
        stack.engine.restart(condition.equals("wrong-weights") ? StartupPath.PRELOAD_HIT : StartupPath.COLD);
        if (!Stack.await(
                () -> stack.engine.latestStartNumber() > before && stack.engine.listeningSince() != null,
                Duration.ofSeconds(10))) {
            incomplete++;
            return;
        }
        Instant from = stack.engine.listeningSince();
        Stack.pause(HOLD);
        Instant fixed = Instant.now();
        switch (condition) {
            case "kv-cache-too-small", "generation-fails" -> {
                // Fixed as in production: the engine is restarted without the condition (new settings, a healthy GPU).
                // The fault is cleared once the old engine is gone, so that it is never able to serve itself.
                stack.kubelet.containerStarted();
                stack.engine.restart(StartupPath.COLD);
                stack.engine.clearFault(condition.equals("kv-cache-too-small") ? "kv-too-small" : "generation-fails");
            }
            case "wrong-weights" -> {
                stack.engine.daemonHolds(stack.engine.configuredCheckpoint());
                stack.kubelet.containerStarted();
                stack.engine.restart(StartupPath.PRELOAD_HIT);
            }
            default -> {}
        }
        boolean ready = Stack.await(
                () -> stack.able.current()
                        && stack.readygateReady.current()
                        && stack.kubelet.ready().current()
                        && stack.readyTransitionAfter(from) != null,
                Duration.ofSeconds(60));
        Instant to = Instant.now();
        if (!ready || from == null) {
            incomplete++;
            return;
        }
        readygate
                .get(condition)
                .add(
                        repeat,
                        stack.readygateReady
                                        .overlap(true, stack.able, false, from, to)
                                        .toNanos()
                                / 1e9);
        baseline.get(condition)
                .add(
                        repeat,
                        stack.kubelet
                                        .ready()
                                        .overlap(true, stack.able, false, from, to)
                                        .toNanos()
                                / 1e9);
        windowSeconds.merge(
                condition,
                stack.able.overlap(false, stack.able, false, from, to).toNanos() / 1e9,
                Double::sum);
        Instant able = stack.able.firstChangeTo(true, from);
        Stack.Transition readyAgain = stack.readyTransitionAfter(able == null ? fixed : able);
        if (able != null && readyAgain != null) {
            readygateLagAfterFix.get(condition).add(repeat, Timeline.millis(able, readyAgain.at()));
        }
    }

    double readygateTotalSeconds() {
        return readygate.values().stream().mapToDouble(s -> s.pooled().sum()).sum();
    }

    double baselineTotalSeconds() {
        return baseline.values().stream().mapToDouble(s -> s.pooled().sum()).sum();
    }

    Map<String, Object> results() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("hold_seconds", HOLD.toSeconds());
        out.put("incomplete_episodes", incomplete);
        Map<String, Object> conditions = new LinkedHashMap<>();
        for (String condition : CONDITIONS) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("episodes", readygate.get(condition).pooled().count());
            c.put("unservable_window_seconds_total", Samples.round(windowSeconds.get(condition)));
            c.put(
                    "readygate_false_ready_seconds_total",
                    Samples.round(readygate.get(condition).pooled().sum()));
            c.put(
                    "baseline_false_ready_seconds_total",
                    Samples.round(baseline.get(condition).pooled().sum()));
            c.put("readygate_false_ready_seconds", readygate.get(condition).summary());
            c.put("baseline_false_ready_seconds", baseline.get(condition).summary());
            c.put(
                    "readygate_lag_after_fix_ms",
                    readygateLagAfterFix.get(condition).summary());
            conditions.put(condition, c);
        }
        out.put("conditions", conditions);
        out.put("readygate_false_ready_seconds_total", Samples.round(readygateTotalSeconds()));
        out.put("baseline_false_ready_seconds_total", Samples.round(baselineTotalSeconds()));
        return out;
    }
}
