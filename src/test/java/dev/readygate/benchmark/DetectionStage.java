package dev.readygate.benchmark;

import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * Failure detection: a ready engine fails, at a random moment (so every phase of readygate's and the kubelet's cycles
 * is sampled), and the time until {@code /readyz} says 503 is measured from the failure's own timestamp in the
 * simulator. Kinds:
 *
 * <ul>
 *   <li>{@code crash}: the engine process dies: listener and connections gone (the simulator's crash, without
 *       auto-restart). For the kubelet this is a container exit: its readiness fails at the next tick after its
 *       relist noticed, or after three failed probes, whichever comes first;
 *   <li>{@code engine-dead}: vLLM's {@code EngineDeadError}: the port stays open, {@code /health} says 503;
 *   <li>{@code frozen}: the engine hangs entirely (every request, {@code /health} included, is read and never
 *       answered): the {@code hang} fault with scope {@code all};
 *   <li>{@code inference-hang} and {@code generation-fails-while-ready}: only inference is broken, {@code /health}
 *       stays 200: the light generation check sees it (every 2 s on a ready engine, at once again after a failure).
 *       The kubelet never notices them.
 * </ul>
 */
final class DetectionStage {

    static final List<String> KINDS = List.of("crash", "engine-dead", "frozen");
    static final List<String> MID_RUN = List.of("inference-hang", "generation-fails-while-ready");

    private final Plan plan;
    private final Path dir;
    private final SplittableRandom random = new SplittableRandom(17);
    final Map<String, Series> readygate = new LinkedHashMap<>();
    final Map<String, Series> baseline = new LinkedHashMap<>();
    final Map<String, Integer> baselineMissed = new LinkedHashMap<>();
    final Map<String, Integer> readygateMissed = new LinkedHashMap<>();

    DetectionStage(Plan plan, Path dir) {
        this.plan = plan;
        this.dir = dir;
        for (String kind : concat(KINDS, MID_RUN)) {
            readygate.put(kind, new Series("readygate detection " + kind, "ms"));
            baseline.put(kind, new Series("kubelet detection " + kind, "ms"));
            baselineMissed.put(kind, 0);
            readygateMissed.put(kind, 0);
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }

    void run(NoiseMonitor noise) {
        List<String> engine = concat(LagStage.ENGINE, List.of("auto-restart=false"));
        try (Stack stack = Stack.start("detection", dir, 19, engine, List.of())) {
            stack.awaitAllReady(Duration.ofSeconds(30));
            for (String kind : KINDS) {
                sample(stack, kind, -1, false);
            }
            for (int repeat = 0; repeat < plan.repeats(); repeat++) {
                noise.begin("detection #" + (repeat + 1));
                for (int i = 0; i < plan.detectionSamples(); i++) {
                    for (String kind : KINDS) {
                        // The baseline samples are spread over the repeat rather than bunched at its start.
                        boolean withBaseline = plan.detectionBaselineSamples() > 0
                                && i % Math.max(1, plan.detectionSamples() / plan.detectionBaselineSamples()) == 0
                                && baselineCount(kind, repeat) < plan.detectionBaselineSamples();
                        sample(stack, kind, repeat, withBaseline);
                    }
                }
                for (int i = 0; i < plan.midRunSamples(); i++) {
                    for (String kind : MID_RUN) {
                        sample(stack, kind, repeat, true);
                    }
                }
                noise.end();
                Benchmark.progress("detection: repeat %d of %d done", repeat + 1, plan.repeats());
            }
        }
    }

    private int baselineCount(String kind, int repeat) {
        List<Samples> repeats = baseline.get(kind).repeats();
        return repeats.size() > repeat ? repeats.get(repeat).count() : 0;
    }

    private void sample(Stack stack, String kind, int repeat, boolean withBaseline) {
        boolean midRun = MID_RUN.contains(kind);
        boolean ready = withBaseline
                ? stack.awaitAllReady(Duration.ofSeconds(30))
                : Stack.await(() -> stack.readygateReady.current() && stack.able.current(), Duration.ofSeconds(30));
        if (!ready) {
            readygateMissed.merge(kind, 1, Integer::sum);
            recover(stack, kind);
            return;
        }
        // A random moment in readygate's cycles (200 ms health checks, 1 s full checks, 2 s light checks).
        Stack.pause(Duration.ofMillis(midRun ? random.nextLong(0, 2_400) : random.nextLong(0, 1_200)));
        Instant failed = inject(stack, kind);
        Duration limit = Duration.ofSeconds(30);
        Stack.await(() -> stack.readygateReady.firstChangeTo(false, failed) != null, limit);
        if (withBaseline && !midRun) {
            // The kubelet does not see an inference-only failure at all: for those its verdict is only read.
            Stack.await(() -> stack.kubelet.ready().firstChangeTo(false, failed) != null, Duration.ofSeconds(40));
        }
        Instant readygateOut = stack.readygateReady.firstChangeTo(false, failed);
        Instant kubeletOut = stack.kubelet.ready().firstChangeTo(false, failed);
        recover(stack, kind);
        if (repeat < 0) {
            return;
        }
        if (readygateOut == null) {
            readygateMissed.merge(kind, 1, Integer::sum);
        } else {
            readygate.get(kind).add(repeat, Timeline.millis(failed, readygateOut));
        }
        if (withBaseline) {
            if (kubeletOut == null) {
                baselineMissed.merge(kind, 1, Integer::sum);
            } else {
                baseline.get(kind).add(repeat, Timeline.millis(failed, kubeletOut));
            }
        }
    }

    private static Instant inject(Stack stack, String kind) {
        Instant at = switch (kind) {
            case "crash" -> {
                stack.kubelet.containerTerminated();
                stack.engine.crash();
                yield stack.engine.stoppedAt();
            }
            case "engine-dead" -> {
                stack.engine.fault("engine-dead", false);
                yield stack.engine.faultSince("engine-dead");
            }
            case "frozen" -> {
                stack.engine.fault("hang", true);
                yield stack.engine.faultSince("hang");
            }
            case "inference-hang" -> {
                stack.engine.fault("hang", false);
                yield stack.engine.faultSince("hang");
            }
            case "generation-fails-while-ready" -> {
                stack.engine.fault("generation-fails", false);
                yield stack.engine.faultSince("generation-fails");
            }
            default -> throw new IllegalArgumentException(kind);
        };
        return nonNull(at, kind);
    }

    private static Instant nonNull(@Nullable Instant at, String kind) {
        if (at == null) {
            throw new IllegalStateException("the simulator did not date the " + kind);
        }
        return at;
    }

    private static void recover(Stack stack, String kind) {
        switch (kind) {
            case "crash" -> {
                stack.kubelet.containerStarted();
                stack.engine.restart(StartupPath.COLD);
            }
            case "engine-dead" -> stack.engine.clearFault("engine-dead");
            case "frozen", "inference-hang" -> stack.engine.clearFault("hang");
            case "generation-fails-while-ready" -> stack.engine.clearFault("generation-fails");
            default -> throw new IllegalArgumentException(kind);
        }
    }

    Map<String, Object> results() {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String kind : concat(KINDS, MID_RUN)) {
            Map<String, Object> k = new LinkedHashMap<>();
            k.put("readygate_ms", readygate.get(kind).summary());
            k.put("readygate_not_detected", readygateMissed.get(kind));
            k.put("baseline_ms", baseline.get(kind).summary());
            k.put("baseline_not_detected", baselineMissed.get(kind));
            out.put(kind, k);
        }
        return out;
    }
}
