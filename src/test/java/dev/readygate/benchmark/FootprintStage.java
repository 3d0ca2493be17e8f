package dev.readygate.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * readygate as it ships: its own JVM from {@code target/readygate.jar}, against a simulator in another JVM (default
 * simulator timings, so probe costs follow the simulator's latency model). Measures the time from process start to
 * {@code /livez} 200 for several JVM and Spring variants, the resident memory idle and under load (from
 * {@code /proc/<pid>/status}), {@code /readyz} latency under an open-loop load of 1000 requests/s (plus 10/s on
 * {@code /status}), idle CPU, and what the heavy probes cost, idle and with real traffic.
 */
final class FootprintStage {

    /** A way to start readygate: JVM flags, the jar (packed or extracted) and extra application arguments. */
    record Variant(String name, String description, List<String> jvm, boolean extracted, List<String> app) {}

    /**
     * JVM flags for a small footprint, the image's (the Dockerfile's {@code JDK_JAVA_OPTIONS} are these and
     * {@link #SPRING_AOT}; {@code DockerfileFlagsTests} keeps them equal): serial GC, one compiler tier (C1), a heap of
     * 16 MiB up to 128 MiB (readygate's live set is about 15 to 25 MiB) that gives memory back after a collection,
     * compact object headers (JDK 25), smaller thread stacks, code cache and direct memory, no collection of the whole
     * heap to clean the code cache (with C1 alone readygate's code settles at about 13 MiB of the 32; each such collection
     * stopped it 32 to 58 ms, the largest {@code /readyz} delays measured), no {@code hsperfdata} file,
     * the C heap trimmed every 5 s (glibc's {@code malloc_trim}: about 4 to 5 MiB less idle RSS, measured), an exit
     * on {@code OutOfMemoryError} and Netty's buffers unpooled.
     */
    static final List<String> SMALL = List.of(
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Xms16m",
            "-Xmx128m",
            "-XX:MinHeapFreeRatio=5",
            "-XX:MaxHeapFreeRatio=20",
            "-XX:+UseCompactObjectHeaders",
            "-Xss512k",
            "-XX:ReservedCodeCacheSize=32m",
            "-XX:-UseCodeCacheFlushing",
            // The code cache's unloading collection comes at SweeperThreshold (15 % of the cache by default) of new
            // code whether flushing is on or not: a full collection of 40 to 47 ms during start-up. 100: never.
            "-XX:SweeperThreshold=100",
            "-XX:MaxDirectMemorySize=64m",
            "-XX:-UsePerfData",
            "-XX:TrimNativeHeapInterval=5000",
            "-XX:+ExitOnOutOfMemoryError",
            // Netty's buffers allocated and freed, no pool kept: about 4 MiB less idle RSS, measured (the gateway's
            // traffic keeps a pool of its own, TrafficResources).
            "-Dio.netty.allocator.type=unpooled");

    /** Spring's AOT-processed bean definitions, which the build makes ({@code process-aot}). */
    static final List<String> SPRING_AOT = List.of("-Dspring.aot.enabled=true");

    /** The image's JVM flags, as the Dockerfile sets them. */
    static final List<String> IMAGE = concat(SMALL, SPRING_AOT);

    /**
     * JVM flags for gateway mode, where readygate is in the traffic path: {@link #SMALL} with both compilers (C2 after
     * C1, the JVM's default) instead of C1 alone, and room for C2's code (64 MiB of code cache reserved, not taken:
     * about 20 MiB used after 15,000 requests). On the traffic path C1's code cost readygate about 1.6 ms of a core
     * per one-token request, and its added time to first token was 0.8 ms more than nginx's at p50; C2's, once warm,
     * about 1 ms and 0.3 (docs/benchmarks.md, "ttft-c2"). The chart's {@code gateway.jdkJavaOptions} are these and
     * {@link #SPRING_AOT} ({@code DockerfileFlagsTests} keeps them equal).
     */
    static final List<String> GATEWAY = SMALL.stream()
            .filter(flag -> !flag.startsWith("-XX:TieredStopAtLevel="))
            .map(flag -> flag.startsWith("-XX:ReservedCodeCacheSize=") ? "-XX:ReservedCodeCacheSize=64m" : flag)
            .toList();

    /** Gateway mode's JVM flags as the chart sets them ({@code gateway.jdkJavaOptions}). */
    static final List<String> GATEWAY_IMAGE = concat(GATEWAY, SPRING_AOT);

    /**
     * Maps the AOT cache at the address it was built for instead of a random one: its pages then stay clean and
     * file-backed (shared with every other readygate on the node) rather than copied by relocation. A diagnostic
     * flag: measured, not recommended.
     */
    static final List<String> NO_RELOCATION = List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:ArchiveRelocationMode=0");

    private final Plan plan;
    private final Path jar;
    private final Path dir;
    private final int enginePort = freePort();
    private final Path simDir;
    private @Nullable Process simulator;
    final Map<String, Series> startup = new LinkedHashMap<>();
    final Map<String, Double> rssAtLivez = new LinkedHashMap<>();
    final Map<String, Map<String, Object>> profiles = new LinkedHashMap<>();
    final Map<String, Object> probeCost = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();

    @Nullable
    Samples readyzLatency;

    @Nullable
    Samples statusLatency;

    private final List<Variant> variants = new ArrayList<>();

    FootprintStage(Plan plan, Path jar, Path dir) {
        this.plan = plan;
        this.jar = jar.toAbsolutePath();
        this.dir = dir;
        this.simDir = dir.resolve("simulator");
    }

    void run(NoiseMonitor noise) {
        try {
            Files.createDirectories(dir);
            if (!Files.exists(jar)) {
                throw new IllegalStateException(jar + " is missing: build it first (./mvnw package)");
            }
            extract();
            startSimulator(noise);
            defineVariants();
            train();
            noise.begin("footprint: start-up");
            for (int run = 0; run < plan.startupRuns(); run++) {
                for (Variant variant : variants) {
                    startupOnce(variant, run, noise);
                }
            }
            noise.end();
            Benchmark.progress("footprint: start-up variants measured");
            if (!quick()) {
                noise.begin("footprint: default JVM");
                profile(variantNamed("default"), false, noise);
                noise.end();
                noise.begin("footprint: no relocation");
                profile(variantNamed("image+no-relocation"), false, noise);
                noise.end();
            }
            noise.begin("footprint: recommended");
            profile(variantNamed(recommended()), true, noise);
            noise.end();
        } catch (IOException ex) {
            failures.add(ex.toString());
            Benchmark.progress("footprint failed: %s", ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            failures.add("interrupted");
        } finally {
            Process sim = simulator;
            if (sim != null) {
                stop(sim);
            }
        }
    }

    /** Quick mode measures only the plain and the recommended variant, briefly. */
    private boolean quick() {
        return plan.mode().equals("quick");
    }

    /** The variant the image runs, which the docs report: Spring AOT, the AOT cache and the small-footprint flags. */
    static String recommended() {
        return "image";
    }

    private Variant variantNamed(String name) {
        return variants.stream().filter(v -> v.name().equals(name)).findFirst().orElseThrow();
    }

    private void defineVariants() {
        defineAllVariants();
        if (quick()) {
            variants.removeIf(v -> !v.name().equals("default") && !v.name().equals(recommended()));
        }
    }

    private void defineAllVariants() {
        Path aot = dir.resolve("aot");
        List<String> lazy = List.of("--spring.main.lazy-initialization=true");
        variants.add(new Variant("default", "java -jar readygate.jar, no flags", List.of(), false, List.of()));
        variants.add(new Variant(
                "extracted",
                "the jar extracted (java -Djarmode=tools -jar readygate.jar extract), no flags",
                List.of(),
                true,
                List.of()));
        variants.add(new Variant("lazy", "extracted, spring.main.lazy-initialization=true", List.of(), true, lazy));
        variants.add(new Variant(
                "cds",
                "extracted, class data sharing archive (-XX:SharedArchiveFile, from a training run)",
                List.of("-XX:SharedArchiveFile=" + aot.resolve("cds.jsa")),
                true,
                List.of()));
        variants.add(new Variant(
                "aot-cache",
                "extracted, JDK 25 AOT cache (-XX:AOTCache, from a training run with -XX:AOTCacheOutput)",
                List.of("-XX:AOTCache=" + aot.resolve("default.aot")),
                true,
                List.of()));
        variants.add(new Variant(
                "aot-cache+lazy",
                "AOT cache and lazy initialization",
                List.of("-XX:AOTCache=" + aot.resolve("lazy.aot")),
                true,
                lazy));
        variants.add(new Variant("small", "extracted, small-footprint flags " + SMALL, SMALL, true, List.of()));
        variants.add(new Variant(
                "aot-cache+small",
                "AOT cache and the small-footprint flags",
                concat(SMALL, List.of("-XX:AOTCache=" + aot.resolve("small.aot"))),
                true,
                List.of()));
        variants.add(new Variant(
                "spring-aot+small",
                "Spring AOT (-Dspring.aot.enabled=true: bean definitions generated at build time) and the small-footprint"
                        + " flags, no AOT cache",
                IMAGE,
                true,
                List.of()));
        variants.add(new Variant(
                "image",
                "the image's: Spring AOT, the AOT cache (training run: `aot-training`, through the server's start) and the small-footprint"
                        + " flags, as the Dockerfile runs it",
                concat(IMAGE, List.of("-XX:AOTCache=" + aot.resolve("image.aot"))),
                true,
                List.of()));
        variants.add(new Variant(
                "image+no-relocation",
                "the same, the cache mapped without relocation (diagnostic flag -XX:ArchiveRelocationMode=0)",
                concat(concat(IMAGE, List.of("-XX:AOTCache=" + aot.resolve("image.aot"))), NO_RELOCATION),
                true,
                List.of()));
        variants.add(new Variant(
                "aot-cache+small+lazy",
                "AOT cache, the small-footprint flags and lazy initialization",
                concat(SMALL, List.of("-XX:AOTCache=" + aot.resolve("small-lazy.aot"))),
                true,
                lazy));
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }

    /** {@code java -Djarmode=tools -jar readygate.jar extract}: the layout CDS and the AOT cache need. */
    private void extract() throws IOException, InterruptedException {
        Path app = dir.resolve("app");
        run(
                List.of(
                        java(),
                        "-Djarmode=tools",
                        "-jar",
                        jar.toString(),
                        "extract",
                        "--force",
                        "--destination",
                        app.toString()),
                dir.resolve("extract.log"),
                Duration.ofMinutes(2));
    }

    /**
     * Training runs: readygate starts with {@code aot-training} (it serves, is asked {@code /livez} and
     * {@code /readyz}, then exits) and writes the archive, as the Dockerfile does; each AOT cache is trained with the
     * flags it is used with.
     */
    private void train() throws IOException, InterruptedException {
        Path aot = dir.resolve("aot");
        Files.createDirectories(aot);
        List<String> lazy = List.of("--spring.main.lazy-initialization=true");
        trainOnce("image", concat(IMAGE, List.of("-XX:AOTCacheOutput=" + aot.resolve("image.aot"))), List.of());
        if (quick()) {
            return;
        }
        trainOnce("cds", List.of("-XX:ArchiveClassesAtExit=" + aot.resolve("cds.jsa")), List.of());
        trainOnce("default", List.of("-XX:AOTCacheOutput=" + aot.resolve("default.aot")), List.of());
        trainOnce("lazy", List.of("-XX:AOTCacheOutput=" + aot.resolve("lazy.aot")), lazy);
        trainOnce("small", concat(SMALL, List.of("-XX:AOTCacheOutput=" + aot.resolve("small.aot"))), List.of());
        trainOnce("small-lazy", concat(SMALL, List.of("-XX:AOTCacheOutput=" + aot.resolve("small-lazy.aot"))), lazy);
        Benchmark.progress("footprint: training runs done");
    }

    private void trainOnce(String name, List<String> jvm, List<String> app) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(java());
        command.addAll(jvm);
        command.add("-jar");
        command.add(dir.resolve("app").resolve("readygate.jar").toString());
        command.add("aot-training");
        command.addAll(readygateArgs(freePort(), "train-" + name));
        command.addAll(app);
        run(command, dir.resolve("train-" + name + ".log"), Duration.ofMinutes(3));
    }

    private void startSimulator(NoiseMonitor noise) throws IOException, InterruptedException {
        Files.createDirectories(simDir);
        List<String> command = List.of(
                java(),
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-Xmx256m",
                "-jar",
                jar.toString(),
                "simulate",
                "--readygate.simulator.port=" + enginePort,
                "--readygate.simulator.admin-port=" + freePort(),
                "--readygate.simulator.preload.health-port=" + freePort(),
                "--readygate.simulator.load-time=1s",
                "--readygate.simulator.log-to-stdout=false",
                "--readygate.simulator.work-dir=" + simDir);
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("simulator.log").toFile())
                .start();
        simulator = process;
        noise.own(process.pid());
        if (!Stack.await(
                () -> HttpConnection.status("127.0.0.1", enginePort, "/health", 500) == 200, Duration.ofSeconds(60))) {
            throw new IOException(
                    "the simulator process did not serve within 60 s (see " + dir.resolve("simulator.log") + ")");
        }
        Benchmark.progress("footprint: simulator process %d serves on %d", process.pid(), enginePort);
    }

    private List<String> readygateArgs(int port, String state) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=" + port,
                "--readygate.engine.base-url=http://127.0.0.1:" + enginePort,
                "--readygate.state-dir=" + dir.resolve("state-" + state),
                "--readygate.evidence.snapshot-dir=" + simDir.resolve("snapshot"),
                "--readygate.evidence.engine-log=" + simDir.resolve("engine.log")));
        if (!plan.footprintHeavyInterval().equals(Duration.ofSeconds(60))) {
            args.add("--readygate.probe.heavy-interval="
                    + plan.footprintHeavyInterval().toSeconds() + "s");
            // The default heavy-timeout (30 s) may not exceed the interval.
            args.add("--readygate.probe.heavy-timeout="
                    + plan.footprintHeavyInterval().toSeconds() / 2 + "s");
        }
        return args;
    }

    private List<String> command(Variant variant, int port, String state) {
        List<String> command = new ArrayList<>();
        command.add(java());
        command.addAll(variant.jvm());
        command.add("-jar");
        command.add(
                variant.extracted()
                        ? dir.resolve("app").resolve("readygate.jar").toString()
                        : jar.toString());
        command.addAll(readygateArgs(port, state));
        command.addAll(variant.app());
        return command;
    }

    /** Process start to the first {@code /livez} 200, polling every 5 ms on new connections. */
    private void startupOnce(Variant variant, int run, NoiseMonitor noise) throws IOException {
        int port = freePort();
        Path log = dir.resolve("startup-" + variant.name() + "-" + run + ".log");
        long started = System.nanoTime();
        Process process = new ProcessBuilder(command(variant, port, "startup-" + variant.name() + "-" + run))
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            boolean up = Stack.await(
                    () -> !process.isAlive() || HttpConnection.status("127.0.0.1", port, "/livez", 200) == 200,
                    Duration.ofSeconds(60));
            double seconds = (System.nanoTime() - started) / 1e9;
            if (!up || !process.isAlive()) {
                failures.add(variant.name() + ": no /livez 200 (see " + log + ")");
                return;
            }
            startup.computeIfAbsent(variant.name(), n -> new Series("start-up " + n, "s"))
                    .add(0, seconds);
            rssAtLivez.merge(variant.name(), rss(process.pid()).getOrDefault("VmRSS", Double.NaN), Math::max);
            // Every variant must also still become ready (lazy initialization must not break the probe loop).
            boolean ready = Stack.await(
                    () -> HttpConnection.status("127.0.0.1", port, "/readyz", 500) == 200, Duration.ofSeconds(30));
            if (!ready) {
                failures.add(variant.name() + ": started but /readyz never 200 (see " + log + ")");
            }
        } finally {
            noise.ownEnding(process.pid());
            stop(process);
        }
    }

    /**
     * One readygate process watched for a while: idle (RSS, CPU, probe tokens), under the /readyz and /status load,
     * and (for the recommended variant) with real traffic on the engine.
     */
    private void profile(Variant variant, boolean full, NoiseMonitor noise) throws IOException, InterruptedException {
        int port = freePort();
        Path log = dir.resolve("profile-" + variant.name() + ".log");
        evictPageCache();
        @Nullable
        MemoryCgroup cgroup = MemoryCgroup.create(
                        "readygate-benchmark-" + ProcessHandle.current().pid() + "-" + variant.name())
                .orElse(null);
        List<String> command = command(variant, port, "profile-" + variant.name());
        if (cgroup != null) {
            command = cgroup.wrap(command);
        }
        // readygate on a core of its own while it is profiled: the tails measured are its own, not the machine's.
        @Nullable CpuSplit split = CpuSplit.detect().orElse(null);
        Process sim = simulator;
        long[] apart = sim == null
                ? new long[] {ProcessHandle.current().pid()}
                : new long[] {ProcessHandle.current().pid(), sim.pid()};
        if (split != null) {
            split.apart(apart);
            command = split.wrap(command);
        }
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        noise.own(process.pid());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("variant", variant.name());
        out.put("jvm_flags", variant.jvm());
        out.put("app_args", variant.app());
        out.put(
                "cpus",
                split == null
                        ? "shared: readygate, the load generator and the simulator on every CPU (no taskset or one CPU)"
                        : split.describe("readygate", "the load generator and the simulator"));
        out.put(
                "memory_basis",
                cgroup == null
                        ? "RSS split only: no writable memory cgroup, so no working set"
                        : "working set from a " + cgroup + " the process started in, beside RSS");
        try {
            if (!Stack.await(
                    () -> HttpConnection.status("127.0.0.1", port, "/readyz", 500) == 200, Duration.ofSeconds(90))) {
                failures.add(variant.name() + ": profile readygate never ready (see " + log + ")");
                return;
            }
            Stack.pause(quick() ? Duration.ofSeconds(3) : Duration.ofSeconds(15));
            Duration idle = full
                    ? plan.idleWindow()
                    : Duration.ofSeconds(Math.min(30, plan.idleWindow().toSeconds()));
            Window idleWindow = watch(process.pid(), cgroup, port, idle, null);
            out.put("idle", idleWindow.toMap());
            if (full) {
                probeCost.putAll(probeCost(idleWindow, "idle"));
            }
            Benchmark.progress(
                    "footprint %s: idle RSS %.1f MiB (anon %.1f, file %.1f, shmem %.1f), working set %.1f MiB, CPU"
                            + " %.2f%% of a core",
                    variant.name(),
                    idleWindow.rssMedian,
                    idleWindow.rssAnon,
                    idleWindow.rssFile,
                    idleWindow.rssShmem,
                    idleWindow.workingSetMedian,
                    idleWindow.cores * 100);
            Duration load = full
                    ? plan.loadWindow()
                    : Duration.ofSeconds(Math.min(30, plan.loadWindow().toSeconds()));
            Window loadWindow = watch(process.pid(), cgroup, port, load, () -> load(port, load, full));
            out.put("load", loadWindow.toMap());
            Benchmark.progress(
                    "footprint %s: under load RSS max %.1f MiB, CPU %.2f cores",
                    variant.name(), loadWindow.rssMax, loadWindow.cores);
            if (full) {
                // The traffic starts first: the window opens once requests are visibly succeeding (and a heavy probe
                // already under way, if one was, has finished).
                Duration lead = Duration.ofSeconds(5);
                Map<String, Object> traffic = new LinkedHashMap<>();
                Thread sender = Thread.ofPlatform().daemon().start(() -> {
                    try {
                        traffic.putAll(
                                engineTraffic(plan.busyWindow().plus(lead).plusSeconds(1)));
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                });
                Stack.pause(lead);
                Window busy = watch(process.pid(), cgroup, port, plan.busyWindow(), null);
                sender.join(plan.busyWindow().toMillis() + 120_000);
                busy.extra.putAll(traffic);
                out.put("engine_busy", busy.toMap());
                probeCost.putAll(probeCost(busy, "busy"));
                out.put("readygate_flags_note", "readygate at its default probe settings");
            }
        } finally {
            noise.ownEnding(process.pid());
            stop(process);
            if (cgroup != null) {
                cgroup.close();
            }
            if (split != null) {
                split.together(apart);
            }
            profiles.put(variant.name(), out);
        }
    }

    /**
     * Drops readygate's own files (the extracted jar, its libraries, the AOT caches) from the page cache before a
     * profiled start, so that the pages it maps are charged to its cgroup as in a fresh container, not to the harness
     * that first read them ({@code dd iflag=nocache count=0}: {@code posix_fadvise(DONTNEED)} on the whole file; pages
     * another running process maps stay).
     */
    private void evictPageCache() throws IOException, InterruptedException {
        List<Path> files;
        try (var walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile)
                    .filter(f -> f.toString().endsWith(".jar") || f.toString().endsWith(".aot"))
                    .toList();
        }
        for (Path file : files) {
            new ProcessBuilder("dd", "if=" + file, "iflag=nocache", "count=0", "status=none")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start()
                    .waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** What a window saw: RSS samples, CPU, and readygate's probe counters before and after. */
    static final class Window {
        double seconds;
        double rssMedian;
        double rssMax;
        double rssAnon;
        double rssFile;
        double rssShmem;

        @Nullable
        Interval rssInterval;

        double workingSetMedian = Double.NaN;
        double workingSetMax = Double.NaN;

        @Nullable
        Interval workingSetInterval;

        Map<String, Double> cgroup = Map.of();
        double cores;
        double tokens;
        double verifications;
        double probeSeconds;
        double engineRequests;
        Map<String, Object> extra = new LinkedHashMap<>();

        Map<String, Object> toMap() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("seconds", Samples.round(seconds));
            out.put("rss_mib_median", Samples.round(rssMedian));
            out.put("rss_mib_max", Samples.round(rssMax));
            out.put("rss_anon_mib", Samples.round(rssAnon));
            out.put("rss_file_mib", Samples.round(rssFile));
            out.put("rss_shmem_mib", Samples.round(rssShmem));
            if (rssInterval != null) {
                out.put("rss_mib_median_ci95", rssInterval.toMap());
            }
            if (!Double.isNaN(workingSetMedian)) {
                out.put("working_set_mib_median", Samples.round(workingSetMedian));
                out.put("working_set_mib_max", Samples.round(workingSetMax));
                if (workingSetInterval != null) {
                    out.put("working_set_mib_median_ci95", workingSetInterval.toMap());
                }
                Map<String, Object> last = new LinkedHashMap<>();
                cgroup.forEach((k, v) -> last.put(k + "_mib", Samples.round(v)));
                out.put("cgroup_at_end", last);
            }
            out.put("cpu_cores", Samples.round(cores));
            out.put("probe_tokens", tokens);
            out.put("heavy_verifications", verifications);
            out.put("heavy_probe_seconds", Samples.round(probeSeconds));
            out.putAll(extra);
            return out;
        }
    }

    /** Something that runs during a window and reports into it. */
    @FunctionalInterface
    interface During {
        Map<String, Object> run() throws InterruptedException, IOException;
    }

    private Window watch(long pid, @Nullable MemoryCgroup cgroup, int port, Duration length, @Nullable During during)
            throws IOException, InterruptedException {
        Map<String, Double> before = probeCounters(port);
        double cpuBefore = NoiseMonitor.processCpuSeconds(pid);
        long start = System.nanoTime();
        Samples rss = new Samples("rss", "MiB");
        Samples workingSet = new Samples("working set", "MiB");
        double[] split = new double[3];
        List<Map<String, Double>> lastCgroup = new ArrayList<>(List.of(Map.of()));
        AtomicBoolean stop = new AtomicBoolean();
        Thread sampler = Thread.ofPlatform().daemon().start(() -> {
            while (!stop.get()) {
                Map<String, Double> status = rss(pid);
                Map<String, Double> charged = cgroup == null ? Map.of() : cgroup.read();
                synchronized (rss) {
                    rss.add(status.getOrDefault("VmRSS", Double.NaN));
                    split[0] = status.getOrDefault("RssAnon", Double.NaN);
                    split[1] = status.getOrDefault("RssFile", Double.NaN);
                    split[2] = status.getOrDefault("RssShmem", Double.NaN);
                    if (charged.containsKey("working_set")) {
                        workingSet.add(charged.get("working_set"));
                        lastCgroup.set(0, charged);
                    }
                }
                Stack.pause(Duration.ofSeconds(1));
            }
        });
        Window window = new Window();
        if (during != null) {
            window.extra.putAll(during.run());
        } else {
            Stack.pause(length);
        }
        stop.set(true);
        sampler.join(5_000);
        window.seconds = (System.nanoTime() - start) / 1e9;
        window.cores = (NoiseMonitor.processCpuSeconds(pid) - cpuBefore) / window.seconds;
        Map<String, Double> after = probeCounters(port);
        window.tokens = after.get("tokens") - before.get("tokens");
        window.verifications = after.get("verifications") - before.get("verifications");
        window.probeSeconds = after.get("seconds") - before.get("seconds");
        synchronized (rss) {
            window.rssMedian = rss.p50();
            window.rssMax = rss.max();
            window.rssAnon = split[0];
            window.rssFile = split[1];
            window.rssShmem = split[2];
            window.rssInterval = rss.isEmpty() ? null : rss.interval(0.5);
            if (!workingSet.isEmpty()) {
                window.workingSetMedian = workingSet.p50();
                window.workingSetMax = workingSet.max();
                window.workingSetInterval = workingSet.interval(0.5);
                window.cgroup = lastCgroup.get(0);
            }
        }
        return window;
    }

    private Map<String, Object> load(int port, Duration length, boolean full) throws InterruptedException {
        LoadGenerator readyz = new LoadGenerator("127.0.0.1", port, "/readyz", "application/json", 1000, 16);
        LoadGenerator status = new LoadGenerator("127.0.0.1", port, "/status", "application/json", 10, 2);
        Duration warmup = quick() ? Duration.ofSeconds(2) : Duration.ofSeconds(5);
        Samples[] statusLatencies = new Samples[1];
        Thread statusThread = Thread.ofPlatform().daemon().start(() -> {
            try {
                statusLatencies[0] = status.run(warmup, length, "/status latency");
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        Samples latencies = readyz.run(warmup, length, "/readyz latency");
        statusThread.join(60_000);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("readyz_per_second", 1000);
        out.put("status_per_second", 10);
        out.put("warmup_seconds", warmup.toSeconds());
        out.put("readyz_latency_ms", latencies.summary());
        out.put("readyz_errors", readyz.errors.get());
        out.put("readyz_first_errors", readyz.firstErrors);
        out.put("readyz_unexpected_status", readyz.non200.get());
        if (statusLatencies[0] != null) {
            out.put("status_latency_ms", statusLatencies[0].summary());
        }
        out.put("status_errors", status.errors.get());
        if (full) {
            readyzLatency = latencies;
            statusLatency = statusLatencies[0];
        }
        return out;
    }

    /** Real traffic on the engine: four clients in a loop, each a completion of about 200 + 32 tokens. */
    private Map<String, Object> engineTraffic(Duration length) throws InterruptedException {
        String body = "{\"model\":\"Qwen/Qwen3-0.6B\",\"prompt\":\""
                + "the quick brown fox jumps over the lazy dog ".repeat(22)
                + "\",\"max_tokens\":32,\"min_tokens\":32,\"ignore_eos\":true}";
        AtomicLong ok = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long end = System.nanoTime() + length.toNanos();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            clients.add(Thread.ofPlatform().daemon().start(() -> {
                try (HttpConnection connection = new HttpConnection("127.0.0.1", enginePort, 30_000)) {
                    while (System.nanoTime() < end) {
                        try {
                            if (connection.postJson("/v1/completions", body).status() == 200) {
                                ok.incrementAndGet();
                            } else {
                                failed.incrementAndGet();
                            }
                        } catch (IOException ex) {
                            failed.incrementAndGet();
                        }
                    }
                }
            }));
        }
        for (Thread client : clients) {
            client.join(length.toMillis() + 60_000);
        }
        return Map.of("engine_requests_ok", ok.get(), "engine_requests_failed", failed.get());
    }

    /**
     * The heavy probes' cost from a window of readygate's own counters: tokens ({@code readygate_probe_tokens_total})
     * and request-seconds ({@code readygate_probe_duration_seconds_sum}, request to verdict: the time one sequence of
     * the engine's batch is occupied), per hour, against the engine's capacity (see the report for the model).
     */
    private Map<String, Object> probeCost(Window window, String kind) {
        Map<String, Object> out = new LinkedHashMap<>();
        double perHour = 3600.0 / window.seconds;
        out.put(kind + "_window_seconds", Samples.round(window.seconds));
        out.put(kind + "_heavy_verifications", window.verifications);
        out.put(kind + "_probe_tokens", window.tokens);
        out.put(kind + "_probe_tokens_per_hour", Samples.round(window.tokens * perHour));
        out.put(kind + "_probe_engine_seconds_per_hour", Samples.round(window.probeSeconds * perHour));
        if (window.verifications > 0) {
            out.put(kind + "_tokens_per_verification", Samples.round(window.tokens / window.verifications));
            out.put(
                    kind + "_engine_seconds_per_verification",
                    Samples.round(window.probeSeconds / window.verifications));
        }
        return out;
    }

    /** {@code readygate_probe_tokens_total}, the number of representative probes and all heavy probes' seconds. */
    private static Map<String, Double> probeCounters(int port) throws IOException {
        String text;
        try (HttpConnection connection = new HttpConnection("127.0.0.1", port, 5_000)) {
            text = connection.get("/actuator/prometheus", "text/plain").body();
        }
        Map<String, Double> out = new LinkedHashMap<>();
        out.put("tokens", sum(text, "readygate_probe_tokens_total", null));
        out.put("verifications", sum(text, "readygate_probe_duration_seconds_count", "kind=\"representative\""));
        out.put("seconds", sum(text, "readygate_probe_duration_seconds_sum", null));
        return out;
    }

    private static double sum(String exposition, String name, @Nullable String label) {
        double total = 0;
        Pattern line = Pattern.compile("^" + Pattern.quote(name) + "(\\{[^}]*\\})?\\s+(\\S+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(exposition);
        while (m.find()) {
            if (label == null || (m.group(1) != null && m.group(1).contains(label))) {
                total += Double.parseDouble(m.group(2));
            }
        }
        return total;
    }

    /** VmRSS, RssAnon, RssFile and RssShmem of a process, in MiB. */
    static Map<String, Double> rss(long pid) {
        Map<String, Double> out = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                for (String key : List.of("VmRSS", "RssAnon", "RssFile", "RssShmem")) {
                    if (line.startsWith(key + ":")) {
                        out.put(key, Long.parseLong(line.replaceAll("\\D", "")) / 1024.0);
                    }
                }
            }
        } catch (IOException | RuntimeException ex) {
            // the process is gone
        }
        return out;
    }

    private void run(List<String> command, Path log, Duration limit) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!process.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("timed out: " + String.join(" ", command));
        }
        if (process.exitValue() != 0) {
            throw new IOException(
                    "exit " + process.exitValue() + ": " + String.join(" ", command) + " (see " + log + ")");
        }
    }

    /** SIGTERM, then SIGKILL after 15 s. */
    static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException ex) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static int freePort() {
        return dev.readygate.simulator.RunningSimulator.freePort();
    }

    List<Variant> variants() {
        return List.copyOf(variants);
    }
}
