package dev.readygate.benchmark;

import dev.readygate.simulator.StartupPath;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A ready engine under traffic, against the kubelet baseline in the same run (issue 16):
 *
 * <ul>
 *   <li>{@code generation-fails-under-traffic} and {@code wrong-weights-under-traffic}: with 24 streams of steady
 *       traffic, generation starts failing (as after a GPU fault) or the weights are swapped; the time from the
 *       fault's own timestamp to {@code /readyz} 503;
 *   <li>{@code crash-loop}: every start crashes 1.5 s after it listens, and restarts: the seconds each judge said
 *       ready while the loop lasted (readygate's restart-loop hold should keep it at 0: from the loop's second start
 *       on, since the first did not stay up loop-hold);
 *   <li>{@code saturated}: no fault, the simulator at its concurrency limit (4 sequences, 8 long requests): flaps
 *       (ready to not ready) and seconds of false not-ready (a judge said not ready while the engine served).
 * </ul>
 */
final class ReadyEngineStage {

    static final List<String> FAULTS = List.of("generation-fails-under-traffic", "wrong-weights-under-traffic");

    private final Plan plan;
    private final Path dir;
    private final SplittableRandom random = new SplittableRandom(23);
    final Map<String, Series> readygate = new LinkedHashMap<>();
    final Map<String, Series> baseline = new LinkedHashMap<>();
    final Map<String, Integer> readygateMissed = new LinkedHashMap<>();
    final Map<String, Integer> baselineMissed = new LinkedHashMap<>();
    final Map<String, Object> crashLoop = new LinkedHashMap<>();
    final Map<String, Object> saturated = new LinkedHashMap<>();

    ReadyEngineStage(Plan plan, Path dir) {
        this.plan = plan;
        this.dir = dir;
        for (String kind : FAULTS) {
            readygate.put(kind, new Series("readygate detection " + kind, "ms"));
            baseline.put(kind, new Series("kubelet detection " + kind, "ms"));
            readygateMissed.put(kind, 0);
            baselineMissed.put(kind, 0);
        }
    }

    /** Samples per fault kind and repeat: the mid-run count, at least two. */
    private int samples() {
        return Math.max(2, plan.midRunSamples());
    }

    /** How long the crash loop and the saturated engine are watched. */
    private Duration window() {
        return plan.mode().equals("full") ? Duration.ofSeconds(120) : Duration.ofSeconds(30);
    }

    void run(NoiseMonitor noise) {
        try (Stack stack = Stack.start("ready-engine", dir.resolve("traffic"), 29, LagStage.ENGINE, List.of())) {
            stack.awaitAllReady(Duration.ofSeconds(30));
            for (int repeat = 0; repeat < plan.repeats(); repeat++) {
                noise.begin("ready engine under traffic #" + (repeat + 1));
                for (int i = 0; i < samples(); i++) {
                    for (String kind : FAULTS) {
                        sample(stack, kind, repeat);
                    }
                }
                noise.end();
                Benchmark.progress("ready engine: repeat %d of %d done", repeat + 1, plan.repeats());
            }
        }
        noise.begin("crash loop");
        crashLoop.putAll(crashLoop());
        noise.end();
        noise.begin("saturated engine");
        saturated.putAll(saturated());
        noise.end();
    }

    private void sample(Stack stack, String kind, int repeat) {
        if (!stack.awaitAllReady(Duration.ofSeconds(40))) {
            readygateMissed.merge(kind, 1, Integer::sum);
            recover(stack, kind);
            return;
        }
        try (Traffic traffic = new Traffic(stack.engine.port(), 24, 100)) {
            Stack.await(() -> traffic.ok.get() > 50, Duration.ofSeconds(20));
            // A random moment in the light checks' 2 s cycle.
            Stack.pause(Duration.ofMillis(random.nextLong(0, 2_400)));
            String fault = kind.equals("wrong-weights-under-traffic") ? "wrong-weights" : "generation-fails";
            stack.engine.fault(fault, false);
            Instant failed = stack.engine.faultSince(fault);
            if (failed == null) {
                throw new IllegalStateException("the simulator did not date " + fault);
            }
            Stack.await(() -> stack.readygateReady.firstChangeTo(false, failed) != null, Duration.ofSeconds(30));
            // The kubelet probes /health, which stays 200: it is only read, never waited for.
            Instant readygateOut = stack.readygateReady.firstChangeTo(false, failed);
            Instant kubeletOut = stack.kubelet.ready().firstChangeTo(false, failed);
            if (readygateOut == null) {
                readygateMissed.merge(kind, 1, Integer::sum);
            } else {
                readygate.get(kind).add(repeat, Timeline.millis(failed, readygateOut));
            }
            if (kubeletOut == null) {
                baselineMissed.merge(kind, 1, Integer::sum);
            } else {
                baseline.get(kind).add(repeat, Timeline.millis(failed, kubeletOut));
            }
        }
        recover(stack, kind);
    }

    private static void recover(Stack stack, String kind) {
        stack.engine.clearFaults();
        if (kind.equals("wrong-weights-under-traffic")) {
            // The canary mismatch is latched until the engine restarts.
            stack.kubelet.containerTerminated();
            stack.engine.restart(StartupPath.COLD);
            stack.kubelet.containerStarted();
        }
    }

    /** The crash loop: seconds each judge said ready, from the first crash to the end of the window. */
    private Map<String, Object> crashLoop() {
        List<String> engine = new ArrayList<>(LagStage.ENGINE);
        engine.add("auto-restart-delay=300ms");
        try (Stack stack = Stack.start(
                "crash-loop",
                dir.resolve("crash-loop"),
                31,
                engine,
                // The restart-loop hold at its defaults: the stack's settings turn it off for the other stages.
                List.of("--readygate.restart.loop-hold=1m"))) {
            stack.awaitAllReady(Duration.ofSeconds(30));
            Instant from = Instant.now();
            stack.engine.fault("crash-loop", false);
            Stack.pause(window());
            Instant to = Instant.now();
            stack.engine.clearFaults();
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("window_s", window().toSeconds());
            out.put(
                    "readygate_ready_s",
                    seconds(stack.readygateReady
                            .overlap(true, stack.able, true, from, to)
                            .plus(stack.readygateReady.overlap(true, stack.able, false, from, to))));
            out.put(
                    "kubelet_ready_s",
                    seconds(stack.kubelet
                            .ready()
                            .overlap(true, stack.able, true, from, to)
                            .plus(stack.kubelet.ready().overlap(true, stack.able, false, from, to))));
            out.put("readygate_windows_at_200", windows(stack.readygateReady, from, to));
            out.put("kubelet_windows_at_200", windows(stack.kubelet.ready(), from, to));
            out.put("engine_starts", stack.engine.latestStartNumber());
            return out;
        }
    }

    /** A saturated engine with no fault: flaps and false not-ready seconds. */
    private Map<String, Object> saturated() {
        List<String> engine = new ArrayList<>(LagStage.ENGINE);
        engine.add("model.max-num-seqs=4");
        engine.add("timing.decode-per-token=5ms");
        try (Stack stack = Stack.start("saturated", dir.resolve("saturated"), 37, engine, List.of())) {
            stack.awaitAllReady(Duration.ofSeconds(30));
            Map<String, Object> out = new LinkedHashMap<>();
            try (Traffic traffic = new Traffic(stack.engine.port(), 8, 400)) {
                Stack.await(() -> traffic.ok.get() > 4, Duration.ofSeconds(30));
                Instant from = Instant.now();
                Stack.pause(window());
                Instant to = Instant.now();
                out.put("window_s", window().toSeconds());
                out.put("engine_requests_ok", traffic.ok.get());
                out.put("engine_requests_failed", traffic.failed.get());
                out.put("readygate_flaps", flaps(stack.readygateReady, from, to));
                out.put("kubelet_flaps", flaps(stack.kubelet.ready(), from, to));
                out.put(
                        "readygate_false_not_ready_s",
                        seconds(stack.readygateReady.overlap(false, stack.able, true, from, to)));
                out.put(
                        "kubelet_false_not_ready_s",
                        seconds(stack.kubelet.ready().overlap(false, stack.able, true, from, to)));
            }
            return out;
        }
    }

    static double seconds(Duration duration) {
        return Samples.round(duration.toNanos() / 1e9);
    }

    /** Changes to ready within the window. */
    private static long windows(Timeline timeline, Instant from, Instant to) {
        return timeline.changes().stream()
                .filter(c -> c.value() && c.at().isAfter(from) && c.at().isBefore(to))
                .count();
    }

    /** Changes from ready to not ready within the window. */
    static long flaps(Timeline timeline, Instant from, Instant to) {
        return timeline.changes().stream()
                .filter(c -> !c.value() && c.at().isAfter(from) && c.at().isBefore(to))
                .count();
    }

    Map<String, Object> results() {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String kind : FAULTS) {
            Map<String, Object> k = new LinkedHashMap<>();
            k.put("readygate_ms", readygate.get(kind).summary());
            k.put("readygate_not_detected", readygateMissed.get(kind));
            k.put("baseline_ms", baseline.get(kind).summary());
            k.put("baseline_not_detected", baselineMissed.get(kind));
            out.put(kind, k);
        }
        out.put("crash-loop", crashLoop);
        out.put("saturated", saturated);
        return out;
    }

    /** Real traffic: {@code clients} threads, each a completion of about 60 + {@code outputTokens} in a loop. */
    static final class Traffic implements AutoCloseable {

        final AtomicLong ok = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        /** Whether the latest request to end succeeded: the engine serves (a ground truth beside the simulator's). */
        final Timeline served = new Timeline(true);

        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Thread> clients = new ArrayList<>();

        Traffic(int port, int clients, int outputTokens) {
            this(port, clients, outputTokens, Duration.ofSeconds(30));
        }

        /** With {@code timeout} for each request, its wait in the engine's queue included. */
        Traffic(int port, int clients, int outputTokens, Duration timeout) {
            for (int c = 0; c < clients; c++) {
                String body = "{\"model\":\"Qwen/Qwen3-0.6B\",\"prompt\":\"" + "the ".repeat(60) + c
                        + "\",\"max_tokens\":" + outputTokens + ",\"ignore_eos\":true}";
                this.clients.add(Thread.ofPlatform().daemon().start(() -> {
                    while (!stop.get()) {
                        try (HttpConnection connection =
                                new HttpConnection("127.0.0.1", port, (int) timeout.toMillis())) {
                            while (!stop.get()) {
                                boolean success = connection
                                                .postJson("/v1/completions", body)
                                                .status()
                                        == 200;
                                (success ? ok : failed).incrementAndGet();
                                served.set(Instant.now(), success);
                            }
                        } catch (IOException | RuntimeException ex) {
                            failed.incrementAndGet();
                            served.set(Instant.now(), false);
                            Stack.pause(Duration.ofMillis(20));
                        }
                    }
                }));
            }
        }

        @Override
        public void close() {
            stop.set(true);
            for (Thread client : clients) {
                try {
                    client.join(60_000);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
