package dev.readygate.benchmark;

import dev.readygate.ExternalTool;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The traffic path's cost (issue 27, item 9), side by side in one run: the same engine (the simulator as its own JVM,
 * streaming every request at one fixed token rate whatever the concurrency: {@value #DECODE_MS} ms a token, no batch
 * slowdown) and the same load (1 to 64 concurrent streams of {@value #TOKENS} tokens each, back to back), sent
 * directly, through nginx, through HAProxy (Debian's packages, as streaming reverse proxies with their passive health
 * on: {@link ProxyConfigs}) and through readygate's gateway (the jar, gateway mode on). The clients are a process of
 * their own. For each path and concurrency: time to first token and the time between tokens at the client (p50 and
 * p99, and what each adds to the direct path's), the streams that failed, the tokens delivered per second against
 * those offered, the proxy's CPU per thousand tokens and its resident memory. The paths take turns at each
 * concurrency, so a machine that grows busier slows them alike. Then the added time to first token's tail, which
 * windows that long cannot judge: one-token streams through every path in turn, request by request, thousands a path
 * ({@link #turns(int, int, Map, List)}), on which the goal (readygate's added p99 within 1 ms of nginx's) is judged.
 *
 * <p>readygate's leg runs when the jar has gateway mode; a jar without it is reported as such, never as a figure.
 * nginx and HAProxy are taken as the tests take them ({@link ExternalTool}: {@code readygate-test.nginx},
 * {@code READYGATE_NGINX}, the PATH); a path without its program is reported as skipped.
 */
final class GatewayStage {

    static final int DECODE_MS = 20;
    static final int TOKENS = 32;
    static final List<Integer> CONCURRENCY = List.of(1, 8, 32, 64);

    /** The ways to the engine. */
    enum Leg {
        DIRECT("direct"),
        NGINX("nginx"),
        HAPROXY("HAProxy"),
        READYGATE("readygate gateway"),
        /** The failure cycle's second readygate path: the pod's readiness on the traffic port. */
        READYGATE_ON_GATEWAY("readygate gateway, pod readiness on the traffic port");

        final String label;

        Leg(String label) {
            this.label = label;
        }
    }

    private final Plan plan;
    private final Path jar;
    private final Path dir;
    final Map<String, Object> results = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();
    /** Per leg and concurrency: the figures. */
    final Map<Leg, Map<Integer, Map<String, Object>>> figures = new LinkedHashMap<>();

    /** The port of each path that runs. */
    private final Map<Leg, Integer> ports = new LinkedHashMap<>();
    /** The proxy process of each path (not the direct one). */
    private final Map<Leg, Process> proxies = new LinkedHashMap<>();
    /**
     * More JVM options for readygate ({@code benchmark.gateway.readygate-jvm-args}, space-separated), to profile its
     * traffic path (a flight recording: {@code -XX:StartFlightRecording=filename=/tmp/gateway.jfr}).
     */
    static final String READYGATE_JVM_ARGS = System.getProperty("benchmark.gateway.readygate-jvm-args", "");

    /**
     * Whether the windows of 1 to 64 streams run ({@code benchmark.gateway.windows}, default true); false: only the
     * turns, to judge the added p99 again in a third of the time.
     */
    static final boolean WINDOWS = Boolean.parseBoolean(System.getProperty("benchmark.gateway.windows", "true"));

    /** Every process started, stopped at the end. */
    private final List<Process> started = new ArrayList<>();

    GatewayStage(Plan plan, Path jar, Path dir) {
        this.plan = plan;
        this.jar = jar.toAbsolutePath();
        this.dir = dir;
    }

    /** The CPUs split between the proxy measured and the rest, while the stage runs; null when not split. */
    private @Nullable CpuSplit split;

    void run(NoiseMonitor noise) {
        long harness = ProcessHandle.current().pid();
        try {
            Files.createDirectories(dir);
            // Each proxy on a core of its own, the engine and the clients on the others: what a proxy adds is then
            // its own work, not its share of a machine it competes for with the engine and the load.
            CpuSplit detected = CpuSplit.detect().orElse(null);
            split = detected;
            if (detected != null) {
                detected.apart(harness);
                results.put(
                        "cpus",
                        detected.describe("each proxy (nginx, HAProxy, readygate)", "the simulator and the clients"));
            } else {
                results.put("cpus", "shared: every process on every CPU (no taskset or one CPU)");
            }
            int engine = FootprintStage.freePort();
            start(noise, simulator(engine), "simulator.log");
            if (!Stack.await(
                    () -> HttpConnection.status("127.0.0.1", engine, "/health", 500) == 200, Duration.ofSeconds(90))) {
                throw new IOException("the simulator did not serve within 90 s (see " + dir.resolve("simulator.log"));
            }
            ports.put(Leg.DIRECT, engine);
            startNginx(noise, engine);
            startHaproxy(noise, engine);
            startReadygate(noise, engine);
            results.put("legs", ports.keySet().stream().map(leg -> leg.label).toList());
            Duration window = plan.mode().equals("full") ? Duration.ofSeconds(45) : Duration.ofSeconds(12);
            results.put("window_s", window.toSeconds());
            // Warm up every path (the JVMs' compilers, the proxies' connection pools), unmeasured: short requests (one
            // token each) from 16 streams, thousands of them, so that readygate's request path is compiled before it
            // is measured (a few hundred requests, as before, left it adding about 6 ms to the first token where a
            // warm one adds about 1.5: docs/benchmarks.md §3f), then the measured shape briefly.
            Duration warmup = Duration.ofSeconds(plan.mode().equals("full") ? 60 : 25);
            for (Leg leg : ports.keySet()) {
                load(leg, 16, warmup, false, 1);
                load(leg, 8, Duration.ofSeconds(5), false, TOKENS);
            }
            results.put(
                    "warmup",
                    "per path: " + warmup.toSeconds() + " s of one-token requests from 16 streams, then"
                            + " 5 s of the measured requests from 8");
            noise.begin("gateway overhead");
            int turn = 0;
            for (int streams : WINDOWS ? CONCURRENCY : List.<Integer>of()) {
                List<Leg> legs = new ArrayList<>(ports.keySet());
                java.util.Collections.rotate(legs, turn++);
                for (Leg leg : legs) {
                    figures.computeIfAbsent(leg, l -> new LinkedHashMap<>())
                            .put(streams, load(leg, streams, window, true, TOKENS));
                }
            }
            noise.end();
            added();
            Benchmark.progress("gateway overhead: %s", figures);
            noise.begin("gateway turns");
            turns();
            noise.end();
            Benchmark.progress("gateway turns: %s", results.get("turns"));
        } catch (IOException ex) {
            failures.add(ex.toString());
            Benchmark.progress("gateway overhead failed: %s", ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            failures.add("interrupted");
        } finally {
            started.forEach(process -> {
                noise.ownEnding(process.pid());
                FootprintStage.stop(process);
            });
            together(harness);
        }
    }

    private void together(long harness) {
        CpuSplit running = split;
        if (running == null) {
            return;
        }
        try {
            running.together(harness);
        } catch (IOException ex) {
            failures.add(ex.toString());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** A proxy's command, on the CPU of its own when the CPUs are split. */
    private List<String> proxy(List<String> command) {
        CpuSplit running = split;
        return running == null ? command : running.wrap(command);
    }

    private List<String> simulator(int port) {
        return List.of(
                FootprintStage.java(),
                "-XX:+UseSerialGC",
                "-Xmx512m",
                "-jar",
                jar.toString(),
                "simulate",
                "--readygate.simulator.port=" + port,
                "--readygate.simulator.admin-port=" + FootprintStage.freePort(),
                "--readygate.simulator.preload.health-port=" + FootprintStage.freePort(),
                "--readygate.simulator.load-time=1s",
                "--readygate.simulator.log-to-stdout=false",
                "--readygate.simulator.work-dir=" + dir.resolve("simulator"),
                "--readygate.simulator.timing.decode-per-token=" + DECODE_MS + "ms",
                "--readygate.simulator.timing.batch-slowdown=0",
                "--readygate.simulator.model.batch-variance=0",
                "--readygate.simulator.model.eos-every=1000000");
    }

    private void startNginx(NoiseMonitor noise, int engine) throws IOException, InterruptedException {
        Optional<Path> nginx = ExternalTool.NGINX.find();
        if (nginx.isEmpty()) {
            results.put("nginx", "skipped: no nginx (Debian's nginx package)");
            return;
        }
        Path prefix = Files.createDirectories(dir.resolve("nginx"));
        int port = FootprintStage.freePort();
        Files.writeString(prefix.resolve("nginx.conf"), ProxyConfigs.nginx(prefix.toString(), port, engine));
        proxies.put(
                Leg.NGINX,
                start(
                        noise,
                        proxy(List.of(nginx.get().toString(), "-p", prefix.toString(), "-c", "nginx.conf")),
                        "nginx.log"));
        await(Leg.NGINX, port, "/health");
        results.put("nginx", version(nginx.get(), "-v"));
    }

    private void startHaproxy(NoiseMonitor noise, int engine) throws IOException, InterruptedException {
        Optional<Path> haproxy = ExternalTool.HAPROXY.find();
        if (haproxy.isEmpty()) {
            results.put("haproxy", "skipped: no haproxy (Debian's haproxy package)");
            return;
        }
        int port = FootprintStage.freePort();
        Path config = dir.resolve("haproxy.cfg");
        Files.writeString(
                config,
                ProxyConfigs.haproxy(
                        port, split != null ? 1 : Runtime.getRuntime().availableProcessors(), engine));
        proxies.put(
                Leg.HAPROXY,
                start(noise, proxy(List.of(haproxy.get().toString(), "-db", "-f", config.toString())), "haproxy.log"));
        await(Leg.HAPROXY, port, "/health");
        results.put("haproxy", version(haproxy.get(), "-v").lines().findFirst().orElse(""));
    }

    /**
     * readygate from the jar with gateway mode's JVM flags (the chart's), its gateway on a port of its own; waits until
     * it says the engine is ready.
     */
    private void startReadygate(NoiseMonitor noise, int engine) throws IOException, InterruptedException {
        int admin = FootprintStage.freePort();
        int traffic = FootprintStage.freePort();
        List<String> command = new ArrayList<>(List.of(FootprintStage.java()));
        command.addAll(FootprintStage.GATEWAY);
        if (!READYGATE_JVM_ARGS.isBlank()) {
            command.addAll(List.of(READYGATE_JVM_ARGS.strip().split("\\s+")));
            results.put("readygate_jvm_args", READYGATE_JVM_ARGS.strip());
        }
        command.addAll(List.of(
                "-jar",
                jar.toString(),
                "--server.port=" + admin,
                "--server.address=127.0.0.1",
                "--readygate.engine.base-url=http://127.0.0.1:" + engine,
                "--readygate.state-dir=" + dir.resolve("state"),
                "--readygate.gateway.enabled=true",
                "--readygate.gateway.port=" + traffic));
        Process process = start(noise, proxy(command), "readygate.log");
        boolean ready = Stack.await(
                () -> !process.isAlive() || HttpConnection.status("127.0.0.1", admin, "/readyz", 1000) == 200,
                Duration.ofSeconds(180));
        if (!process.isAlive() || !ready) {
            String log = Files.readString(dir.resolve("readygate.log"));
            results.put(
                    "readygate",
                    log.contains("readygate.gateway")
                            ? "skipped: this jar has no gateway mode (it refused readygate.gateway.*)"
                            : "skipped: readygate did not report the engine ready within 180 s (see readygate.log)");
            return;
        }
        proxies.put(Leg.READYGATE, process);
        await(Leg.READYGATE, traffic, "/v1/models");
        results.put("readygate", "the jar, gateway mode on, its flags " + FootprintStage.GATEWAY);
    }

    private void await(Leg leg, int port, String path) throws IOException {
        if (!Stack.await(() -> HttpConnection.status("127.0.0.1", port, path, 1000) == 200, Duration.ofSeconds(30))) {
            throw new IOException(leg.label + " did not pass " + path + " through within 30 s");
        }
        ports.put(leg, port);
    }

    private Process start(NoiseMonitor noise, List<String> command, String log) throws IOException {
        Process process = launch(noise, dir, command, log);
        started.add(process);
        return process;
    }

    /** Starts {@code command} in {@code dir}, its output in {@code log} there, its CPU the harness's own. */
    static Process launch(NoiseMonitor noise, Path dir, List<String> command, String log) throws IOException {
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(log).toFile())
                .start();
        noise.own(process.pid());
        return process;
    }

    /**
     * One window of load: {@code streams} clients (a process of their own) stream back to back through {@code leg};
     * returns the figures.
     */
    private Map<String, Object> load(Leg leg, int streams, Duration window, boolean measured, int maxTokens)
            throws IOException, InterruptedException {
        Path samples = dir.resolve("samples-" + leg.name().toLowerCase(java.util.Locale.ROOT) + "-" + streams
                + (measured ? "" : "-warmup") + ".txt");
        Process proxy = proxies.get(leg);
        long cpuBefore = proxy == null ? 0 : ticks(proxy);
        Process clients = new ProcessBuilder(
                        FootprintStage.java(),
                        "-XX:+UseSerialGC",
                        "-cp",
                        System.getProperty("java.class.path"),
                        GatewayStage.class.getName(),
                        String.valueOf(ports.get(leg)),
                        String.valueOf(streams),
                        String.valueOf(window.toMillis()),
                        samples.toString(),
                        String.valueOf(maxTokens))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("clients.log").toFile())
                .start();
        Samples rss = new Samples("rss", "MiB");
        long end = System.nanoTime() + window.toNanos();
        while (System.nanoTime() < end && clients.isAlive()) {
            if (proxy != null) {
                rss.add(rssMib(proxy));
            }
            Stack.pause(Duration.ofSeconds(1));
        }
        if (!clients.waitFor(window.toSeconds() + 60, TimeUnit.SECONDS)) {
            clients.destroyForcibly();
            throw new IOException("the clients of " + leg.label + " did not finish");
        }
        long cpu = proxy == null ? 0 : ticks(proxy) - cpuBefore;
        Map<String, Object> out = new LinkedHashMap<>();
        if (!measured) {
            return out;
        }
        Samples ttft = new Samples("ttft", "ms");
        Samples itl = new Samples("itl", "ms");
        long tokens = 0;
        long requests = 0;
        long failed = 0;
        List<String> errors = new ArrayList<>();
        for (String line : Files.readAllLines(samples)) {
            String[] f = line.split(" ", 2);
            switch (f[0]) {
                case "t" -> ttft.add(Double.parseDouble(f[1]));
                case "i" -> itl.add(Double.parseDouble(f[1]));
                case "tokens" -> tokens = Long.parseLong(f[1]);
                case "requests" -> requests = Long.parseLong(f[1]);
                case "failed" -> failed = Long.parseLong(f[1]);
                case "error" -> errors.add(f[1]);
                default -> {}
            }
        }
        double seconds = window.toMillis() / 1000.0;
        out.put("streams", streams);
        out.put("requests", requests);
        out.put("failed", failed);
        out.put("first_errors", errors.stream().limit(3).toList());
        out.put("ttft_ms_p50", Samples.round(ttft.p50()));
        out.put("ttft_ms_p99", Samples.round(ttft.p99()));
        out.put("itl_ms_p50", Samples.round(itl.p50()));
        out.put("itl_ms_p99", Samples.round(itl.p99()));
        out.put("tokens_per_s", Samples.round(tokens / seconds));
        out.put("tokens_per_s_offered", Samples.round(streams * 1000.0 / DECODE_MS));
        if (proxy != null) {
            out.put(
                    "cpu_ms_per_1000_tokens",
                    tokens == 0 ? Double.NaN : Samples.round(cpu * 1000.0 / TICKS / tokens * 1000));
            out.put("rss_mib_max", Samples.round(rss.max()));
        }
        return out;
    }

    /** What each path adds to the direct one's time to first token and time between tokens. */
    private void added() {
        Map<Integer, Map<String, Object>> direct = figures.get(Leg.DIRECT);
        if (direct == null) {
            return;
        }
        figures.forEach((leg, byStreams) -> byStreams.forEach((streams, f) -> {
            Map<String, Object> base = direct.get(streams);
            for (String key : List.of("ttft_ms_p50", "ttft_ms_p99", "itl_ms_p50", "itl_ms_p99")) {
                f.put("added_" + key, Samples.round((double) f.get(key) - (double) base.get(key)));
            }
        }));
    }

    /**
     * The pause after each cycle of the turns. Not after each request: with 3 ms after each (so that no request met the
     * previous path's end-of-exchange work), every proxy's p98 and p99 grew by 5 to 7 ms, nginx's too (the proxies' CPU
     * idle between requests, and waking it is the machine's: docs/benchmarks.md §3f). Rotated, the path after readygate
     * within a cycle is the direct one, whose work is on the other CPU.
     */
    static final int TURN_PAUSE_MS = 2;

    /** The percentiles the turns report. */
    static final List<Double> TURN_QUANTILES = List.of(0.5, 0.9, 0.95, 0.98, 0.99);

    /**
     * The time to first token of one-token streams, the paths taking turns request by request: one client (a process
     * of its own, a kept-alive connection per path), the order rotated each cycle (so that every path takes every place
     * as often: by hand, the path right after readygate met its end-of-exchange work on the proxies' core, 0.7 to 2.3
     * ms at the tail), {@link #TURN_PAUSE_MS} ms between cycles, thousands of requests a path pooled over a few rounds.
     * The windows above cannot judge a proxy's added p99 (theirs move with the direct path's own by tens of
     * milliseconds); the goal (readygate's added p99 within 1 ms of nginx's) is judged on this instead, though at p99
     * every proxy's figure is mostly the machine's here (docs/benchmarks.md §3f).
     */
    private void turns() throws IOException, InterruptedException {
        boolean full = plan.mode().equals("full");
        int rounds = full ? 4 : 2;
        int requests = full ? 1500 : 500;
        List<Leg> legs = new ArrayList<>(ports.keySet());
        Map<Leg, Samples> pooled = new LinkedHashMap<>();
        List<Double> roundDifferences = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            Path samples = dir.resolve("turns-" + round + ".txt");
            List<String> command = new ArrayList<>(List.of(
                    FootprintStage.java(),
                    "-XX:+UseSerialGC",
                    "-cp",
                    System.getProperty("java.class.path"),
                    Turns.class.getName(),
                    samples.toString(),
                    // The first round warms every path up as long as it measures; the next ones briefly.
                    String.valueOf(round == 0 ? requests : requests / 5),
                    String.valueOf(requests)));
            legs.forEach(leg -> command.add(leg.name() + "=" + ports.get(leg)));
            Process client = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("turns.log").toFile())
                    .start();
            if (!client.waitFor(15, TimeUnit.MINUTES)) {
                client.destroyForcibly();
                throw new IOException("the turns' client did not finish");
            }
            if (client.exitValue() != 0) {
                throw new IOException("the turns' client failed (see " + dir.resolve("turns.log") + ")");
            }
            Map<Leg, Samples> mine = Turns.read(samples);
            mine.forEach((leg, taken) ->
                    pooled.computeIfAbsent(leg, l -> new Samples("ttft", "ms")).addAll(taken));
            Samples readygate = mine.get(Leg.READYGATE);
            Samples nginx = mine.get(Leg.NGINX);
            if (readygate != null && nginx != null) {
                roundDifferences.add(Samples.round(readygate.p99() - nginx.p99()));
            }
        }
        results.put("turns", turns(rounds, requests, pooled, roundDifferences));
    }

    /**
     * The turns' figures: per path its percentiles and what each adds to the direct path's, and readygate's minus
     * nginx's, pooled and at p99 round by round.
     */
    static Map<String, Object> turns(int rounds, int requests, Map<Leg, Samples> pooled, List<Double> byRound) {
        Samples direct = pooled.get(Leg.DIRECT);
        Map<String, Object> byLeg = new LinkedHashMap<>();
        pooled.forEach((leg, taken) -> {
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("requests", taken.count());
            for (double q : TURN_QUANTILES) {
                String name = "p" + Math.round(q * 100);
                g.put("ttft_ms_" + name, Samples.round(taken.quantile(q)));
                if (direct != null) {
                    g.put("added_ttft_ms_" + name, Samples.round(taken.quantile(q) - direct.quantile(q)));
                }
            }
            Interval p99 = taken.interval(0.99);
            g.put("ttft_ms_p99_interval", List.of(Samples.round(p99.low()), Samples.round(p99.high())));
            byLeg.put(leg.name(), g);
        });
        Map<String, Object> turns = new LinkedHashMap<>();
        turns.put("rounds", rounds);
        turns.put("requests_per_round", requests);
        turns.put("pause_ms", TURN_PAUSE_MS);
        turns.put("legs", byLeg);
        Samples readygate = pooled.get(Leg.READYGATE);
        Samples nginx = pooled.get(Leg.NGINX);
        if (readygate != null && nginx != null) {
            Map<String, Object> minus = new LinkedHashMap<>();
            for (double q : TURN_QUANTILES) {
                minus.put("p" + Math.round(q * 100), Samples.round(readygate.quantile(q) - nginx.quantile(q)));
            }
            turns.put("readygate_minus_nginx_ms", minus);
            turns.put("readygate_minus_nginx_p99_ms_by_round", byRound);
        }
        return turns;
    }

    static final double TICKS = 100.0;

    /** utime + stime of a process and all its descendants (nginx's workers). */
    private static long ticks(Process process) {
        long ticks = NoiseMonitor.processTicks(process.pid());
        for (ProcessHandle child : process.descendants().toList()) {
            ticks += NoiseMonitor.processTicks(child.pid());
        }
        return ticks;
    }

    private static double rssMib(Process process) {
        double rss = FootprintStage.rss(process.pid()).getOrDefault("VmRSS", 0.0);
        for (ProcessHandle child : process.descendants().toList()) {
            rss += FootprintStage.rss(child.pid()).getOrDefault("VmRSS", 0.0);
        }
        return rss;
    }

    private static String version(Path program, String flag) {
        try {
            Process process = new ProcessBuilder(program.toString(), flag)
                    .redirectErrorStream(true)
                    .start();
            String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            process.waitFor(10, TimeUnit.SECONDS);
            return text;
        } catch (IOException ex) {
            return "unknown";
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static final Pattern MODEL = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");

    /** A streamed completion's body for the model the engine behind {@code base} lists first. */
    static String completionBody(HttpClient client, URI base, int maxTokens) throws IOException, InterruptedException {
        String models = client.send(
                        HttpRequest.newBuilder(base.resolve("/v1/models")).build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        Matcher model = MODEL.matcher(models);
        String name = model.find() ? model.group(1) : "model";
        return "{\"model\":\"" + name + "\",\"prompt\":\"Tell me about the sea.\",\"max_tokens\":" + maxTokens
                + ",\"stream\":true}";
    }

    /**
     * The clients' process: {@code port}, how many streams, for how many milliseconds, where to write the samples
     * ({@code t <ms>} a time to first token, {@code i <ms>} a time between tokens, then the counts).
     */
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int streams = Integer.parseInt(args[1]);
        long millis = Long.parseLong(args[2]);
        Path out = Path.of(args[3]);
        int maxTokens = args.length > 4 ? Integer.parseInt(args[4]) : TOKENS;
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        URI base = URI.create("http://127.0.0.1:" + port);
        String body = completionBody(client, base, maxTokens);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong tokens = new AtomicLong();
        AtomicLong requests = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            threads.add(Thread.ofPlatform().daemon().start(() -> {
                List<String> mine = new ArrayList<>();
                while (!stop.get()) {
                    requests.incrementAndGet();
                    try {
                        stream(client, base, body, mine, tokens);
                    } catch (IOException | RuntimeException ex) {
                        failed.incrementAndGet();
                        mine.add("error " + ex.getMessage());
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                lines.addAll(mine);
            }));
        }
        Thread.sleep(millis);
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(30_000);
        }
        try (PrintWriter writer = new PrintWriter(Files.newBufferedWriter(out))) {
            synchronized (lines) {
                lines.forEach(writer::println);
            }
            writer.println("tokens " + tokens.get());
            writer.println("requests " + requests.get());
            writer.println("failed " + failed.get());
        }
        System.exit(0);
    }

    /** One streamed completion: its time to first token and the times between its tokens, as they arrive. */
    private static void stream(HttpClient client, URI base, String body, List<String> lines, AtomicLong tokens)
            throws IOException, InterruptedException {
        long sent = System.nanoTime();
        HttpResponse<InputStream> response = client.send(
                HttpRequest.newBuilder(base.resolve("/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            if (response.statusCode() != 200) {
                throw new IOException("status " + response.statusCode());
            }
            long last = -1;
            boolean done = false;
            String line;
            while ((line = reader.readLine()) != null) {
                if (!line.startsWith("data:")) {
                    continue;
                }
                long now = System.nanoTime();
                if (line.contains("[DONE]")) {
                    done = true;
                    break;
                }
                if (line.contains("\"error\"")) {
                    throw new IOException("error event");
                }
                lines.add(last < 0 ? "t " + (now - sent) / 1e6 : "i " + (now - last) / 1e6);
                last = now;
                tokens.incrementAndGet();
            }
            if (!done) {
                throw new IOException("the stream ended without [DONE]");
            }
        }
    }

    /**
     * The turns' client: {@code out}, the requests a path to warm up, then to measure, then {@code LEG=port} per path.
     * One-token streams on a kept-alive connection per path, the paths taking turns request by request, the order
     * rotated by one each cycle; the time to first token is from the request written to its first event read. Writes a
     * line per path: its name, then its times in milliseconds.
     */
    static final class Turns {

        private Turns() {}

        private static final class Route {
            final String name;
            final int port;
            final List<Double> times = new ArrayList<>();
            java.net.@Nullable Socket socket;

            Route(String name, int port) {
                this.name = name;
                this.port = port;
            }

            java.net.Socket connect() throws IOException {
                java.net.Socket known = socket;
                if (known != null) {
                    known.close();
                }
                java.net.Socket fresh = new java.net.Socket("127.0.0.1", port);
                fresh.setTcpNoDelay(true);
                fresh.setSoTimeout(30_000);
                socket = fresh;
                return fresh;
            }
        }

        public static void main(String[] args) throws Exception {
            Path out = Path.of(args[0]);
            int warm = Integer.parseInt(args[1]);
            int measured = Integer.parseInt(args[2]);
            List<Route> routes = new ArrayList<>();
            for (int i = 3; i < args.length; i++) {
                String[] named = args[i].split("=");
                routes.add(new Route(named[0], Integer.parseInt(named[1])));
            }
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String body = completionBody(client, URI.create("http://127.0.0.1:" + routes.getFirst().port), 1);
            byte[] request = ("POST /v1/completions HTTP/1.1\r\nHost: engine\r\nContent-Type: application/json\r\n"
                            + "Content-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII);
            for (Route route : routes) {
                route.connect();
            }
            byte[] buffer = new byte[65536];
            for (int cycle = 0; cycle < warm + measured; cycle++) {
                for (int turn = 0; turn < routes.size(); turn++) {
                    Route route = routes.get((cycle + turn) % routes.size());
                    double millis = one(route, request, buffer);
                    if (cycle >= warm && millis >= 0) {
                        route.times.add(millis);
                    }
                }
                Thread.sleep(TURN_PAUSE_MS);
            }
            try (PrintWriter writer = new PrintWriter(Files.newBufferedWriter(out))) {
                for (Route route : routes) {
                    StringBuilder line = new StringBuilder(route.name);
                    route.times.forEach(time -> line.append(' ').append(time));
                    writer.println(line);
                }
            }
            System.exit(0);
        }

        /** One request: its time to first token in milliseconds, or -1 when the connection failed (made anew). */
        private static double one(Route route, byte[] request, byte[] buffer) throws IOException {
            java.net.Socket socket = route.socket;
            if (socket == null) {
                socket = route.connect();
            }
            long sent = System.nanoTime();
            long first = -1;
            StringBuilder seen = new StringBuilder();
            try {
                socket.getOutputStream().write(request);
                while (true) {
                    int read = socket.getInputStream().read(buffer);
                    if (read < 0) {
                        route.connect();
                        return -1;
                    }
                    seen.append(new String(buffer, 0, read, StandardCharsets.ISO_8859_1));
                    if (first < 0 && seen.indexOf("data: {") >= 0) {
                        first = System.nanoTime() - sent;
                    }
                    if (seen.indexOf("\r\n0\r\n\r\n") >= 0) {
                        break;
                    }
                }
            } catch (IOException failed) {
                route.connect();
                return -1;
            }
            if (seen.indexOf("onnection: close") >= 0) {
                route.connect();
            }
            return first < 0 ? -1 : first / 1e6;
        }

        /** The samples a run wrote, per route. */
        static Map<Leg, Samples> read(Path file) throws IOException {
            Map<Leg, Samples> byLeg = new LinkedHashMap<>();
            for (String line : Files.readAllLines(file)) {
                String[] fields = line.strip().split(" ");
                Samples samples = byLeg.computeIfAbsent(Leg.valueOf(fields[0]), leg -> new Samples("ttft", "ms"));
                for (int i = 1; i < fields.length; i++) {
                    samples.add(Double.parseDouble(fields[i]));
                }
            }
            return byLeg;
        }
    }
}
