package dev.readygate.benchmark;

import dev.readygate.ExternalTool;
import dev.readygate.e2e.GgufModel;
import dev.readygate.e2e.LlamaServer;
import dev.readygate.probe.ProbeHistory;
import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A saturated real engine with no fault (issue 16): llama.cpp's {@code llama-server} on the CPU with one slot
 * ({@code -np 1}), kept busy by {@value #CLIENTS} clients sending {@value #OUTPUT_TOKENS}-token completions in a loop
 * (one decoding, the others queued), judged at once by a readygate in this JVM at its defaults (as {@code LlamaServerIT}
 * runs it) and by the kubelet baseline on its {@code /health}. The ground truth is the traffic itself: the engine
 * serves while its requests keep completing (the latest to end succeeded). Counts, per judge, flaps (ready to not
 * ready) and seconds of false not-ready within the window.
 *
 * <p>The binary is {@link ExternalTool#LLAMA_SERVER} (the system property {@code readygate-test.llama-server}, which
 * the {@code benchmark} profile passes on, the environment variable {@code READYGATE_LLAMA_SERVER}, or the PATH);
 * without one the stage is skipped and the report says so.
 */
final class LlamaSaturatedStage {

    static final int CLIENTS = 2;
    static final int OUTPUT_TOKENS = 6000;

    private final Plan plan;
    private final Path dir;
    final Map<String, Object> results = new LinkedHashMap<>();

    LlamaSaturatedStage(Plan plan, Path dir) {
        this.plan = plan;
        this.dir = dir;
    }

    /** How long the saturated engine is watched: one default heavy-interval (60 s) and more. */
    private Duration window() {
        return plan.mode().equals("full") ? Duration.ofSeconds(120) : Duration.ofSeconds(60);
    }

    /** Why the stage did not run, or null when it ran. */
    Object skipped() {
        return results.get("skipped");
    }

    void run(NoiseMonitor noise) {
        Optional<Path> binary = ExternalTool.LLAMA_SERVER.find();
        if (binary.isEmpty()) {
            results.put(
                    "skipped",
                    "no llama-server: -D" + ExternalTool.LLAMA_SERVER.property() + " and "
                            + ExternalTool.LLAMA_SERVER.environmentVariable()
                            + " are unset and none is on the PATH");
            Benchmark.progress("saturated llama-server: skipped (%s)", results.get("skipped"));
            return;
        }
        for (Variant variant : Variant.values()) {
            noise.begin("saturated llama-server, " + variant.key());
            try {
                results.put(variant.key(), measure(binary.get(), variant));
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            } finally {
                noise.end();
            }
        }
    }

    /** The figures of one variant, or an empty map when the stage was skipped. */
    @SuppressWarnings("unchecked")
    Map<String, Object> figures(Variant variant) {
        return results.get(variant.key()) instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    private Map<String, Object> measure(Path binary, Variant variant) throws IOException {
        Path at = dir.resolve(variant.key());
        Files.createDirectories(at);
        Path model = GgufModel.small(1).writeTo(at.resolve("small-1.gguf"));
        Map<String, Object> out = new LinkedHashMap<>();
        Timeline readygateReady = new Timeline(false);
        List<String> changes = new CopyOnWriteArrayList<>();
        try (LlamaServer engine =
                LlamaServer.start(binary, model, at.resolve("llama-server.log"), Map.of(), variant.flags())) {
            List<String> args = new ArrayList<>(List.of(
                    "--server.port=0",
                    "--spring.main.banner-mode=off",
                    "--logging.level.root=WARN",
                    "--readygate.engine.base-url=" + engine.baseUrl(),
                    "--readygate.state-dir=" + at.resolve("state")));
            try (ConfigurableApplicationContext readygate = Stack.readygate(args, state -> {
                        readygateReady.set(state.since(), state.acceptsTraffic());
                        changes.add(describe(state));
                    });
                    KubeletProber kubelet = new KubeletProber("127.0.0.1", engine.port(), Clock.systemUTC(), 41)) {
                if (!Stack.await(
                        () -> readygate.isRunning()
                                && readygateReady.current()
                                && kubelet.ready().current(),
                        Duration.ofSeconds(120))) {
                    throw new IllegalStateException("llama-server never ready for both judges (readygate: " + changes
                            + "); its log:\n" + engine.logTail(20));
                }
                ReadyEngineStage.Traffic traffic =
                        new ReadyEngineStage.Traffic(engine.port(), CLIENTS, OUTPUT_TOKENS, Duration.ofMinutes(10));
                try {
                    // Saturated once the first long request has ended: every slot busy and a queue behind it.
                    Stack.await(() -> traffic.ok.get() + traffic.failed.get() > 0, Duration.ofMinutes(5));
                    int before = changes.size();
                    long okBefore = traffic.ok.get();
                    Instant from = Instant.now();
                    Map<String, Integer> lightChecks = lightChecks(readygate.getBean(ProbeHistory.class), window());
                    Instant to = Instant.now();
                    long ok = traffic.ok.get() - okBefore;
                    out.put("window_s", window().toSeconds());
                    out.put("llama_server_flags", String.join(" ", variant.flags()));
                    out.put("slots", 1);
                    out.put("clients", CLIENTS);
                    out.put("output_tokens", OUTPUT_TOKENS);
                    out.put("engine_requests_ok", ok);
                    out.put("engine_requests_failed", traffic.failed.get());
                    out.put(
                            "engine_seconds_per_request",
                            ok == 0 ? Double.NaN : ReadyEngineStage.seconds(window().dividedBy(ok)));
                    out.put(
                            "engine_not_serving_s",
                            ReadyEngineStage.seconds(traffic.served.overlap(false, traffic.served, false, from, to)));
                    out.put("readygate_flaps", ReadyEngineStage.flaps(readygateReady, from, to));
                    out.put("kubelet_flaps", ReadyEngineStage.flaps(kubelet.ready(), from, to));
                    out.put(
                            "readygate_false_not_ready_s",
                            ReadyEngineStage.seconds(readygateReady.overlap(false, traffic.served, true, from, to)));
                    out.put(
                            "kubelet_false_not_ready_s",
                            ReadyEngineStage.seconds(kubelet.ready().overlap(false, traffic.served, true, from, to)));
                    // What readygate's light generation checks ended with (busy: waited behind real traffic that
                    // made progress, neither pass nor failure).
                    out.put("readygate_light_checks", lightChecks);
                    out.put("readygate_changes_in_window", List.copyOf(changes.subList(before, changes.size())));
                    Benchmark.progress("saturated llama-server, %s: %s", variant.key(), out);
                } finally {
                    // The engine stops first (closing the resources below): the clients' requests end with it.
                    Thread.ofPlatform().daemon().start(traffic::close);
                }
            }
        }
        return out;
    }

    /** How llama-server runs: its HTTP threads are the other limit besides its slot. */
    enum Variant {
        /**
         * Enough HTTP threads (8, llama-server's default on a machine of 9 cores or more): only the slot is saturated.
         * The stage's headline.
         */
        SLOT_SATURATED("slot_saturated", "-c", "8192", "-np", "1", "--threads-http", "8", "--metrics"),
        /**
         * llama-server's default HTTP threads on this machine: {@code max(np + 2, cores - 1)}, 3 on 2 cores. The two
         * clients and one queued probe hold all three, so {@code /health} and {@code /metrics} wait for a thread.
         */
        HTTP_THREADS_DEFAULT("http_threads_default", "-c", "8192", "-np", "1", "--metrics");

        private final String key;
        private final String[] flags;

        Variant(String key, String... flags) {
            this.key = key;
            this.flags = flags;
        }

        String key() {
            return key;
        }

        String[] flags() {
            return flags.clone();
        }
    }

    /** Watches readygate's light checks for {@code window}: how many ended with each outcome. */
    private static Map<String, Integer> lightChecks(ProbeHistory history, Duration window) {
        Map<String, Integer> outcomes = new TreeMap<>();
        long deadline = System.nanoTime() + window.toNanos();
        @Nullable ProbeReport seen = history.last(ProbeKind.GENERATION);
        while (System.nanoTime() < deadline) {
            ProbeReport last = history.last(ProbeKind.GENERATION);
            if (last != null && last != seen) {
                outcomes.merge(last.outcome().name().toLowerCase(Locale.ROOT), 1, Integer::sum);
                seen = last;
            }
            Stack.pause(Duration.ofMillis(50));
        }
        return outcomes;
    }

    private static String describe(EngineState state) {
        return state.since() + " " + state.kind()
                + (state.reason() == null ? "" : "/" + state.reason().value());
    }
}
