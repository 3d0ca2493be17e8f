package dev.readygate.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kubelet's probes under a flood of {@code /status} pollers (issue 24): readygate as its own JVM (the image's
 * small-footprint flags, the jar when it is built, else the harness's classpath), no engine behind it; {@value
 * #POLLERS} clients (a process of their own at {@code nice 19}, as clients on other machines) poll {@code /status}
 * and {@code /status/restarts.json} on keep-alive connections as fast as they are answered, ignoring
 * {@code Retry-After} (the hostile case), for the plan's load window, while a kubelet-like
 * prober sends {@code /readyz} and {@code /livez} alternately every 100 ms, each on a connection of its own with the
 * chart's 1 s timeout. Measures the probes' failures and latency, the pollers' answers, and readygate's resident
 * memory every second.
 */
final class StatusFloodStage {

    /** How many pollers ({@code benchmark.status-flood.pollers}; 0 gives the same probes against an idle readygate). */
    static final int POLLERS = Integer.getInteger("benchmark.status-flood.pollers", 500);

    /**
     * More JVM options for readygate ({@code benchmark.status-flood.readygate-jvm-args}, space-separated), to profile
     * it under the flood (a flight recording: {@code -XX:StartFlightRecording=filename=/tmp/flood.jfr}).
     */
    static final String READYGATE_JVM_ARGS = System.getProperty("benchmark.status-flood.readygate-jvm-args", "");

    static final Duration PROBE_EVERY = Duration.ofMillis(100);
    static final int PROBE_TIMEOUT_MS = 1000;

    private final Plan plan;
    private final Path jar;
    private final Path dir;
    final Map<String, Object> results = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();

    StatusFloodStage(Plan plan, Path jar, Path dir) {
        this.plan = plan;
        this.jar = jar.toAbsolutePath();
        this.dir = dir;
    }

    void run(NoiseMonitor noise) {
        Process readygate = null;
        try {
            Files.createDirectories(dir);
            int port = FootprintStage.freePort();
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(FootprintStage.SMALL);
            if (!READYGATE_JVM_ARGS.isBlank()) {
                command.addAll(List.of(READYGATE_JVM_ARGS.strip().split("\\s+")));
                results.put("readygate_jvm_args", READYGATE_JVM_ARGS.strip());
            }
            if (Files.exists(jar)) {
                command.addAll(List.of("-jar", jar.toString()));
                results.put("readygate", "the jar, " + FootprintStage.SMALL);
            } else {
                command.addAll(
                        List.of("-cp", System.getProperty("java.class.path"), "dev.readygate.ReadygateApplication"));
                results.put("readygate", "the harness's classpath (no jar built), " + FootprintStage.SMALL);
            }
            command.addAll(List.of(
                    "--server.port=" + port,
                    "--server.address=127.0.0.1",
                    "--readygate.engine.base-url=http://127.0.0.1:" + FootprintStage.freePort(),
                    "--readygate.state-dir=" + dir.resolve("state")));
            readygate = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("readygate.log").toFile())
                    .start();
            noise.own(readygate.pid());
            if (!Stack.await(
                    () -> HttpConnection.status("127.0.0.1", port, "/livez", 1000) == 200, Duration.ofSeconds(180))) {
                throw new IOException(
                        "readygate did not serve within 180 s (see " + dir.resolve("readygate.log") + ")");
            }
            // Warm up: a few seconds of the same traffic, unmeasured.
            flood(readygate.pid(), port, Duration.ofSeconds(10), false);
            noise.begin("status flood");
            flood(readygate.pid(), port, plan.loadWindow(), true);
            noise.end();
            Benchmark.progress("status flood: %s", results);
        } catch (IOException ex) {
            failures.add(ex.toString());
            Benchmark.progress("status flood failed: %s", ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            failures.add("interrupted");
        } finally {
            if (readygate != null) {
                noise.ownEnding(readygate.pid());
                readygate.destroy();
                try {
                    if (!readygate.waitFor(15, TimeUnit.SECONDS)) {
                        readygate.destroyForcibly();
                    }
                } catch (InterruptedException ex) {
                    readygate.destroyForcibly();
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * The pollers run in a process of their own at {@code nice 19}: clients on other machines, as in a cluster, that
     * do not take readygate's CPU; the prober (the kubelet) runs here at normal priority.
     */
    private void flood(long pid, int port, Duration length, boolean measured) throws InterruptedException, IOException {
        Path answersFile = dir.resolve(measured ? "pollers.txt" : "pollers-warmup.txt");
        Process pollers = new ProcessBuilder(
                        "nice",
                        "-n",
                        "19",
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:+UseSerialGC",
                        "-Xss256k",
                        "-cp",
                        System.getProperty("java.class.path"),
                        StatusFloodStage.class.getName(),
                        String.valueOf(port),
                        String.valueOf(POLLERS),
                        String.valueOf(length.toMillis() + 2000))
                .redirectErrorStream(true)
                .redirectOutput(answersFile.toFile())
                .start();
        // Let the pollers connect.
        Stack.pause(Duration.ofSeconds(2));
        Samples rss = new Samples("rss", "MiB");
        double rssBefore = FootprintStage.rss(pid).getOrDefault("VmRSS", Double.NaN);
        Samples readyz = new Samples("/readyz under the flood", "ms");
        Samples livez = new Samples("/livez under the flood", "ms");
        List<String> probeFailures = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + length.toNanos();
        long nextRss = start;
        int probes = 0;
        while (System.nanoTime() < end) {
            long at = System.nanoTime();
            String path = probes++ % 2 == 0 ? "/readyz" : "/livez";
            int status = HttpConnection.status("127.0.0.1", port, path, PROBE_TIMEOUT_MS);
            double ms = (System.nanoTime() - at) / 1e6;
            boolean answered = path.equals("/readyz") ? status == 503 || status == 200 : status == 200;
            if (!answered || ms > PROBE_TIMEOUT_MS) {
                probeFailures.add(path + ": " + (status < 0 ? "no answer within 1 s" : status) + " after "
                        + Math.round(ms) + " ms");
            } else {
                (path.equals("/readyz") ? readyz : livez).add(ms);
            }
            if (System.nanoTime() >= nextRss) {
                rss.add(FootprintStage.rss(pid).getOrDefault("VmRSS", Double.NaN));
                nextRss += 1_000_000_000L;
            }
            long wait = at + PROBE_EVERY.toNanos() - System.nanoTime();
            if (wait > 0) {
                Stack.pause(Duration.ofNanos(wait));
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (!pollers.waitFor(60, TimeUnit.SECONDS)) {
            pollers.destroyForcibly();
        }
        if (!measured) {
            return;
        }
        Samples both = new Samples("probes", "ms");
        both.addAll(readyz);
        both.addAll(livez);
        results.put("pollers", POLLERS);
        results.put("seconds", Samples.round(seconds));
        results.put("probes", probes);
        results.put("probe_failures", probeFailures.size());
        results.put("first_probe_failures", probeFailures.stream().limit(5).toList());
        results.put("probe_ms_p50", Samples.round(both.p50()));
        results.put("probe_ms_p99", Samples.round(both.p99()));
        results.put("probe_ms_max", Samples.round(both.max()));
        results.put("readyz_ms", readyz.summary());
        results.put("livez_ms", livez.summary());
        results.put("pollers_saw", Files.readString(answersFile).strip());
        results.put("rss_mib_before", Samples.round(rssBefore));
        results.put("rss_mib_max", Samples.round(rss.max()));
        results.put("rss_mib_median", Samples.round(rss.p50()));
        results.put("rss_mib_end", Samples.round(FootprintStage.rss(pid).getOrDefault("VmRSS", Double.NaN)));
        results.put("readygate_counters", counters(port));
    }

    /**
     * The pollers' process: {@code port}, how many pollers, for how many milliseconds; prints what they were
     * answered, and how many requests were cut before an answer.
     */
    public static void main(String[] args) throws InterruptedException {
        int port = Integer.parseInt(args[0]);
        int count = Integer.parseInt(args[1]);
        long millis = Long.parseLong(args[2]);
        AtomicBoolean stop = new AtomicBoolean();
        Map<String, AtomicLong> answers = new ConcurrentHashMap<>();
        AtomicLong cut = new AtomicLong();
        List<Thread> pollers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String path = i % 2 == 0 ? "/status" : "/status/restarts.json";
            pollers.add(Thread.ofPlatform().daemon().start(() -> poll(port, path, stop, answers, cut)));
        }
        Stack.pause(Duration.ofMillis(millis));
        stop.set(true);
        for (Thread poller : pollers) {
            poller.join(35_000);
        }
        Map<String, Long> polled = new java.util.TreeMap<>();
        answers.forEach((key, n) -> polled.put(key, n.get()));
        System.out.println(polled + ", cut before an answer: " + cut.get());
        System.exit(0);
    }

    /** readygate's own account of the flood, from its metrics. */
    private static Map<String, Object> counters(int port) {
        Map<String, Object> out = new LinkedHashMap<>();
        try (HttpConnection connection = new HttpConnection("127.0.0.1", port, 10_000)) {
            String text = connection.get("/actuator/prometheus", "text/plain").body();
            for (String line : text.split("\n")) {
                if (line.startsWith("readygate_server_")) {
                    int space = line.lastIndexOf(' ');
                    out.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
                }
            }
        } catch (IOException | RuntimeException ex) {
            out.put("error", ex.toString());
        }
        return out;
    }

    /** One hostile poller: as fast as it is answered, whatever {@code Retry-After} says. */
    private static void poll(
            int port, String path, AtomicBoolean stop, Map<String, AtomicLong> answers, AtomicLong cut) {
        try (HttpConnection connection = new HttpConnection("127.0.0.1", port, 30_000)) {
            while (!stop.get()) {
                try {
                    int status = connection.get(path, "application/json").status();
                    answers.computeIfAbsent(path + " " + status, k -> new AtomicLong())
                            .incrementAndGet();
                } catch (IOException ex) {
                    cut.incrementAndGet();
                }
            }
        }
    }
}
