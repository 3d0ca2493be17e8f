package dev.readygate.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark harness: drives the vLLM simulator through many engine starts and failures with readygate and the
 * kubelet baseline beside it, then runs readygate as its own JVM from the built jar for its footprint, and writes
 * {@code results.json}, {@code benchmarks.md} and the latency chart. Run through the {@code benchmark} Maven profile:
 *
 * <pre>./mvnw -Pbenchmark verify -Dbenchmark.mode=quick|full</pre>
 *
 * System properties: {@code benchmark.mode} ({@code quick}: CI-sized, writes to {@code target/benchmarks};
 * {@code full}: what the docs report, writes {@code docs/benchmarks.md} and {@code docs/benchmarks/}),
 * {@code benchmark.out} (where to write instead), {@code benchmark.stages} (a comma-separated subset of
 * {@code lag,false-ready,detection,ready-engine,llama-saturated,status-flood,gateway,failure-cycle,failure-cycle-replicas,footprint}; {@code killed-readygate},
 * not among the defaults, only when named), {@code benchmark.jar} (default
 * {@code target/readygate.jar}), {@code benchmark.mid-run-samples} (to try the minute-long mid-run failures in quick
 * mode), {@code readygate-test.llama-server} (llama.cpp's {@code llama-server} for {@code llama-saturated}, as the
 * tests take it: {@link dev.readygate.ExternalTool#LLAMA_SERVER}; without one that stage is skipped).
 */
public final class Benchmark {

    private static final long STARTED = System.nanoTime();

    private Benchmark() {}

    public static void main(String[] args) throws IOException {
        Plan plan = Plan.of(System.getProperty("benchmark.mode", "quick"))
                .withMidRunSamples(Integer.getInteger("benchmark.mid-run-samples", -1));
        String outProperty = System.getProperty("benchmark.out", "");
        Path out = Path.of(
                outProperty.isBlank()
                        ? plan.mode().equals("full") ? "docs" : "target/benchmarks/" + plan.mode()
                        : outProperty);
        List<String> stages = Arrays.asList(System.getProperty(
                        "benchmark.stages",
                        "lag,false-ready,detection,ready-engine,llama-saturated,status-flood,gateway,failure-cycle,failure-cycle-replicas,footprint")
                .split(","));
        Path jar = Path.of(System.getProperty("benchmark.jar", "target/readygate.jar"));
        Path work = Files.createTempDirectory("readygate-benchmark-");
        progress("mode %s, stages %s, writing to %s, scratch %s", plan.mode(), stages, out, work);
        Instant started = Instant.now();
        Results results = new Results(plan, started);
        try (NoiseMonitor noise = new NoiseMonitor()) {
            if (stages.contains("lag")) {
                LagStage lag = new LagStage(plan, work.resolve("lag"));
                lag.run(noise);
                results.lag(lag);
            }
            if (stages.contains("false-ready")) {
                FalseReadyStage falseReady = new FalseReadyStage(plan, work.resolve("false-ready"));
                falseReady.run(noise);
                results.falseReady(falseReady);
            }
            if (stages.contains("detection")) {
                DetectionStage detection = new DetectionStage(plan, work.resolve("detection"));
                detection.run(noise);
                results.detection(detection);
            }
            if (stages.contains("ready-engine")) {
                ReadyEngineStage readyEngine = new ReadyEngineStage(plan, work.resolve("ready-engine"));
                readyEngine.run(noise);
                results.readyEngine(readyEngine);
            }
            if (stages.contains("llama-saturated")) {
                LlamaSaturatedStage llama = new LlamaSaturatedStage(plan, work.resolve("llama-saturated"));
                llama.run(noise);
                results.llamaSaturated(llama);
            }
            if (stages.contains("status-flood")) {
                StatusFloodStage flood = new StatusFloodStage(plan, jar, work.resolve("status-flood"));
                flood.run(noise);
                results.statusFlood(flood);
            }
            if (stages.contains("killed-readygate")) {
                KilledReadygateStage killed = new KilledReadygateStage(jar, work.resolve("killed-readygate"));
                killed.run(noise);
                results.killedReadygate(killed);
            }
            if (stages.contains("gateway")) {
                GatewayStage gateway = new GatewayStage(plan, jar, work.resolve("gateway"));
                gateway.run(noise);
                results.gateway(gateway);
            }
            if (stages.contains("failure-cycle")) {
                FailureCycleStage cycle = new FailureCycleStage(plan, work.resolve("failure-cycle"), 1);
                cycle.run(noise);
                results.failureCycle(cycle);
            }
            if (stages.contains("failure-cycle-replicas")) {
                FailureCycleStage cycle = new FailureCycleStage(plan, work.resolve("failure-cycle-replicas"), 2);
                cycle.run(noise);
                results.failureCycle(cycle);
            }
            if (stages.contains("footprint")) {
                FootprintStage footprint = new FootprintStage(plan, jar, work.resolve("footprint"));
                footprint.run(noise);
                results.footprint(footprint);
            }
            results.noise(noise.stages());
        }
        results.finish(Duration.between(started, Instant.now()));
        results.write(out);
        progress("done in %s: %s", Duration.between(started, Instant.now()).withNanos(0), out.toAbsolutePath());
        // The in-process engines and readygates have shut down; what is left are daemon threads and Netty's loops.
        System.exit(0);
    }

    static void progress(String format, Object... args) {
        String elapsed = LocalTime.ofSecondOfDay((System.nanoTime() - STARTED) / 1_000_000_000L)
                .format(DateTimeFormatter.ISO_LOCAL_TIME);
        System.out.println("[benchmark " + elapsed + "] " + String.format(Locale.ROOT, format, args));
        System.out.flush();
    }

    /** The machine, as {@code results.json} records it. */
    static Map<String, Object> machine(Instant at) {
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cores", Runtime.getRuntime().availableProcessors());
        machine.put("memory_gib", Samples.round(memoryGib()));
        machine.put("cpu", cpuModel());
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        machine.put("jdk", System.getProperty("java.vm.vendor") + " " + System.getProperty("java.runtime.version"));
        machine.put("date", at.atOffset(ZoneOffset.UTC).toLocalDate().toString());
        machine.put("started_at", at.toString());
        return machine;
    }

    private static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
                    .filter(line -> line.startsWith("model name"))
                    .map(line -> line.substring(line.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse("unknown");
        } catch (IOException ex) {
            return "unknown";
        }
    }

    private static double memoryGib() {
        try {
            return Files.readAllLines(Path.of("/proc/meminfo")).stream()
                            .filter(line -> line.startsWith("MemTotal:"))
                            .mapToLong(line -> Long.parseLong(line.replaceAll("\\D", "")))
                            .findFirst()
                            .orElse(0)
                    / 1024.0
                    / 1024.0;
        } catch (IOException ex) {
            return Double.NaN;
        }
    }
}
