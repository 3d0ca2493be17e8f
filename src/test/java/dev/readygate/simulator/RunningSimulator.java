package dev.readygate.simulator;

import static org.awaitility.Awaitility.await;

import dev.readygate.support.FreePorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * A simulator on free loopback ports with short, test-sized timings, started for one test class or one test.
 * Talks to it over real HTTP. Public so that readygate's own tests can run against it.
 */
public final class RunningSimulator implements AutoCloseable {

    final EngineSimulator simulator;
    final SimulatorProperties properties;
    final Path workDir;

    private RunningSimulator(SimulatorProperties properties) {
        this.properties = properties;
        this.workDir = properties.effectiveWorkDir();
        this.simulator = new EngineSimulator(properties, Clock.systemUTC(), Schedulers.parallel(), null);
    }

    /** Binds {@code readygate.simulator.*} from test defaults overridden by {@code overrides} (relative keys). */
    static SimulatorProperties properties(Path workDir, String... overrides) {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("port", String.valueOf(freePort()));
        values.put("admin-port", String.valueOf(freePort()));
        values.put("preload.health-port", String.valueOf(freePort()));
        values.put("work-dir", workDir.toString());
        values.put("log-to-stdout", "false");
        values.put("load-time", "300ms");
        values.put("auto-restart-delay", "200ms");
        values.put("timing.ttft-base", "1ms");
        values.put("timing.prefill-per-token", "0ms");
        values.put("timing.decode-per-token", "1ms");
        values.put("timing.preload-hit-load-time", "150ms");
        values.put("timing.fallback-detect-time", "50ms");
        values.put("timing.snapshot-restore-time", "100ms");
        values.put("timing.shutdown-time", "10ms");
        values.put("timing.daemon-load-time", "100ms");
        for (String override : overrides) {
            int eq = override.indexOf('=');
            values.put(override.substring(0, eq), override.substring(eq + 1));
        }
        Map<String, String> prefixed = new LinkedHashMap<>();
        values.forEach((key, value) -> prefixed.put("readygate.simulator." + key, value));
        return new Binder(new MapConfigurationPropertySource(prefixed))
                .bind("readygate.simulator", SimulatorProperties.class)
                .get();
    }

    public static RunningSimulator start(Path workDir, String... overrides) {
        RunningSimulator running = new RunningSimulator(properties(workDir, overrides));
        running.simulator.start().block(Duration.ofSeconds(10));
        return running;
    }

    /** Starts and waits until the first start listens (and the daemon serves, when enabled). */
    public static RunningSimulator serving(Path workDir, String... overrides) {
        RunningSimulator running = start(workDir, overrides);
        running.awaitServing();
        return running;
    }

    public void awaitServing() {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> simulator.engine().phase() == SimulatedEngine.Phase.SERVING
                        && (!properties.preload().enabled()
                                || simulator.daemon().phase() == WeightCacheDaemon.Phase.SERVING));
    }

    /** Restarts along {@code path} and waits until the new start listens. */
    public void restartAndAwait(StartupPath path) {
        int before = startNumber();
        simulator.restart(path).block(Duration.ofSeconds(10));
        try {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> startNumber() > before && simulator.engine().phase() == SimulatedEngine.Phase.SERVING);
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            // Say why the start never listened: the simulator's state and the end of its engine log.
            String log = engineLog();
            throw new AssertionError(
                    "restart along " + path + " (start " + before + " -> " + startNumber() + ") never served: phase "
                            + simulator.engine().phase() + ", state " + simulator.state() + "\nengine log tail:\n"
                            + log.substring(Math.max(0, log.length() - 4000)) + "\nsimulator threads:\n"
                            + simulatorThreads(),
                    ex);
        }
    }

    /** Where the simulator's own threads are: a start that stalls without failing stalls in one of them. */
    private static String simulatorThreads() {
        StringBuilder dump = new StringBuilder();
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            if (thread.getName().startsWith("simulator") || thread.getName().startsWith("vllm-sim")) {
                dump.append(thread.getName())
                        .append(' ')
                        .append(thread.getState())
                        .append('\n');
                for (StackTraceElement frame : stack) {
                    dump.append("    at ").append(frame).append('\n');
                }
            }
        });
        return dump.toString();
    }

    int startNumber() {
        SimulatedEngine.StartInfo start = simulator.engine().latestStart();
        return start == null ? 0 : start.number();
    }

    public WebTestClient engine() {
        return client(properties.port());
    }

    WebTestClient admin() {
        return client(properties.adminPort());
    }

    WebTestClient daemonHealth() {
        return client(properties.preload().healthPort());
    }

    private static WebTestClient client(int port) {
        return WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(10))
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize(4 * 1024 * 1024))
                .build();
    }

    /** POSTs JSON to the engine, expects 200 and returns the parsed body. */
    public JsonNode postJson(String path, Object body) {
        return Sse.JSON.readTree(engine().post()
                .uri(path)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult()
                .getResponseBody());
    }

    /** The engine's {@code /metrics} text. */
    String metricsText() {
        return engine().get()
                .uri("/metrics")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    /** The engine log file as written so far. */
    String engineLog() {
        simulator.flushLogs();
        try {
            Path file = properties.effectiveLogFile();
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    String daemonLog() {
        simulator.flushLogs();
        try {
            return Files.readString(workDir.resolve("preload-daemon.log"));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A port for a simulated server: see {@link FreePorts}. */
    public static int freePort() {
        return FreePorts.free();
    }

    /** The simulated node's DCGM exporter metrics URL (on the admin port). */
    public String dcgmUrl() {
        return "http://127.0.0.1:" + properties.adminPort() + "/admin/dcgm/metrics";
    }

    /** The engine's base URL. */
    public String baseUrl() {
        return "http://127.0.0.1:" + properties.port();
    }

    /** Switches a fault on, for inference requests or for every request. */
    public void fault(String name, boolean everywhere) {
        simulator.setFault(Fault.fromValue(name), true, everywhere ? FaultSet.Scope.ALL : FaultSet.Scope.INFERENCE);
    }

    /** {@code POST /sleep?level=N} on the engine port (vLLM's sleep mode; needs {@code sleep-mode}). */
    public void sleep(int level) {
        engine().post().uri("/sleep?level=" + level).exchange().expectStatus().isOk();
    }

    /** {@code POST /wake_up} on the engine port: every sleeping tag. */
    public void wakeUp() {
        engine().post().uri("/wake_up").exchange().expectStatus().isOk();
    }

    public void clearFaults() {
        simulator.faults().clear();
    }

    /** Restarts the preload daemon holding {@code checkpoint} (same layout) and waits until it serves. */
    public void daemonHolds(String checkpoint) {
        simulator.daemon().start(checkpoint, null, null).block(Duration.ofSeconds(5));
        awaitServing();
    }

    /** Restarts the preload daemon so it caches the revision the engine serves now, and waits until it serves. */
    public void daemonCachesCurrentRevision() {
        simulator.daemon().start(null, null, simulator.engine().revision()).block(Duration.ofSeconds(5));
        awaitServing();
    }

    /** The engine serves {@code revision} from its next start on (a rollout); the daemon keeps what it holds. */
    public void switchRevision(String revision) {
        simulator.engine().switchRevision(revision);
    }

    /** The simulated GPU's {@code nvidia-smi}, after every pending change is written. */
    public Path nvidiaSmi() {
        simulator.flushLogs();
        return simulator.gpu().script();
    }

    /** Runs {@code clients} users' clients sending long streamed completions (0 stops them). */
    public void traffic(int clients) {
        simulator.apply(Scenario.traffic(clients)).block(Duration.ofSeconds(5));
    }

    /** {@code vllm:num_requests_running} as the engine's {@code /metrics} says it now. */
    public double requestsRunning() {
        java.util.regex.Matcher matcher = java.util.regex.Pattern.compile(
                        "(?m)^vllm:num_requests_running\\{[^}]*} ([0-9.]+)$")
                .matcher(metricsText());
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : -1;
    }

    /** Crashes the engine (it restarts after the auto-restart delay). */
    public void crash() {
        simulator.engine().crash("simulated crash").block(Duration.ofSeconds(5));
    }

    /** Whether the engine would serve a representative request correctly right now. */
    public boolean ableToServe() {
        return simulator.ableToServe();
    }

    /** Since when the engine has been able to serve (see {@link EngineSimulator#ableToServeSince()}), or null. */
    public @Nullable Instant ableToServeSince() {
        return simulator.ableToServeSince();
    }

    /** Restarts along {@code path} without waiting for the new start to listen. */
    public void restart(StartupPath path) {
        simulator.restart(path).block(Duration.ofSeconds(10));
    }

    /** The number of the latest start (1 for the first), in progress or done. */
    public int latestStartNumber() {
        return startNumber();
    }

    /** The path the latest start took so far (a requested preload hit may have fallen back). */
    public @Nullable StartupPath latestStartPath() {
        SimulatedEngine.StartInfo start = simulator.engine().latestStart();
        return start == null ? null : start.path();
    }

    /** The checkpoint the latest start serves. */
    public @Nullable String latestStartCheckpoint() {
        SimulatedEngine.StartInfo start = simulator.engine().latestStart();
        return start == null ? null : start.servedCheckpoint();
    }

    /** When the engine began listening in its current start, or null while it does not listen. */
    public @Nullable Instant listeningSince() {
        return simulator.engine().listeningSince();
    }

    /** When the engine last stopped listening (a stop or a crash), or null. */
    public @Nullable Instant stoppedAt() {
        return simulator.engine().stoppedAt();
    }

    /** Since when {@code name} has been active, or null while it is off. */
    public @Nullable Instant faultSince(String name) {
        Fault fault = Fault.fromValue(name);
        return simulator.faults().active().stream()
                .filter(active -> active.fault() == fault)
                .map(FaultSet.Active::since)
                .findFirst()
                .orElse(null);
    }

    /** Turns one fault off. */
    public void clearFault(String name) {
        simulator.setFault(Fault.fromValue(name), false, FaultSet.Scope.INFERENCE);
    }

    /** The engine's port, admin port, snapshot directory, log file and work directory, for a readygate beside it. */
    public int port() {
        return properties.port();
    }

    public Path workDir() {
        return workDir;
    }

    public Path engineLogFile() {
        return properties.effectiveLogFile();
    }

    /** The daemon's health URL. */
    public String daemonHealthUrl() {
        return "http://127.0.0.1:" + properties.preload().healthPort() + "/health";
    }

    /** The checkpoint the engine is configured to serve. */
    public String configuredCheckpoint() {
        return properties.model().checkpoint();
    }

    /** The checkpoint the {@code wrong-weights} fault serves instead. */
    public String wrongCheckpoint() {
        return properties.faults().wrongCheckpoint();
    }

    @Override
    public void close() {
        simulator.close();
    }
}
