package dev.readygate.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.readygate.ExternalTool;
import dev.readygate.ReadygateApplication;
import dev.readygate.ReadygateClients;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ClassPathResource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The status page in a real browser: Debian's headless Chromium loads {@code /status} from readygate running against
 * the simulator and dumps the DOM the page's script built; further runs save screenshots to {@value #SCREENSHOTS}
 * for people to look at. The page also gets empty, all-null and hostile documents from a stub server and must draw
 * them without a script error. Chromium is required, not optional ({@link ExternalTool#CHROMIUM}: {@code ./run-tests}
 * installs it; {@code -Pjava-only} leaves this class out by its tag).
 */
@Tag("chromium")
class StatusPageBrowserTests {

    static final long BROWSER_LIMIT_SECONDS = 60;
    static final String SCREENSHOTS = "target/status-page";

    static final JsonMapper json = JsonMapper.builder().build();

    @TempDir
    Path workDir;

    @Test
    void pageDrawsTheStatusOfReadygateGatingTheSimulator() throws Exception {
        Path chromium = chromium();
        try (RunningSimulator engine = RunningSimulator.serving(workDir.resolve("engine"));
                ConfigurableApplicationContext readygate = readygate(engine)) {
            int port = ((WebServerApplicationContext) readygate).getWebServer().getPort();
            WebTestClient client = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + port)
                    .responseTimeout(Duration.ofSeconds(5))
                    .build();
            awaitReadyWithRecords(client, 1);
            engine.restartAndAwait(StartupPath.PRELOAD_HIT);
            awaitReadyWithRecords(client, 2);
            String url = "http://127.0.0.1:" + port + "/status";

            Browser dom = browse(chromium, "--dump-dom", url);
            assertThat(dom.consoleLines()).as(dom.stderr()).isEmpty();
            assertThat(dom.stdout())
                    .contains("<div id=\"verdict\" class=\"ready\">")
                    .contains("<div id=\"verdict-word\">READY</div>")
                    .contains("<dd id=\"verdict-state\">ready</dd>")
                    .contains("<dd id=\"verdict-engine\">Qwen/Qwen3-0.6B · vLLM 0.31.0</dd>")
                    .contains("<div id=\"page-error\" class=\"banner bad hidden\">")
                    .contains("<div id=\"fetch-error\" class=\"banner bad hidden\">")
                    .contains("<svg id=\"chart\"");
            assertThat(occurrences(dom.stdout(), "<rect class=\"point path-")).isGreaterThanOrEqualTo(2);
            assertThat(occurrences(dom.stdout(), "<tr class=\"restart\"")).isGreaterThanOrEqualTo(2);

            Path screenshot = Files.createDirectories(Path.of(SCREENSHOTS)).resolve("status-page.png");
            Files.deleteIfExists(screenshot);
            Browser shot =
                    browse(chromium, "--screenshot=" + screenshot.toAbsolutePath(), "--window-size=1400,1000", url);
            assertThat(shot.consoleLines()).as(shot.stderr()).isEmpty();
            assertPng(screenshot);
            // The whole page (headless Chromium shoots the window): chart and history are below the first screen.
            Path full = screenshot.resolveSibling("status-page-full.png");
            Files.deleteIfExists(full);
            browse(chromium, "--screenshot=" + full.toAbsolutePath(), "--window-size=1400,2200", url);
            assertPng(full);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"{}", "null", """
                {"ready": null, "state": null, "reason": null, "detail": null, "since": null, "now": null,
                 "engine": {"model": null, "metrics": null, "endpoints": null},
                 "probes": {"representative": {"last": null, "lastFailure": null}, "canary": null,
                            "lastHeavyProbeAt": null, "heavyProbes": null, "lastSkipped": null},
                 "restarts": {"current": {"provisionalPath": null, "phases": null}, "restartLoop": null,
                              "history": [], "evidence": null},
                 "settings": null}
                """})
    void pageDrawsAnEmptyOrNullStatusWithoutErrors(String document) throws Exception {
        Browser dom = browseStub(document, null);
        assertThat(dom.consoleLines()).as(dom.stderr()).isEmpty();
        assertThat(dom.stdout())
                .contains("<div id=\"verdict\" class=\"not-ready\">")
                .contains("<div id=\"verdict-word\">NOT READY</div>")
                .contains("<div id=\"page-error\" class=\"banner bad hidden\">")
                .contains("No engine start recorded yet");
    }

    @Test
    void pageDrawsRecordsWithMissingFieldsAndNeverReadyStartsAndEscapesEngineText() throws Exception {
        String document = """
                {"ready": false, "state": "verification_failed", "reason": "canary_mismatch",
                 "detail": "<img src=x onerror=alert(1)>", "since": "2026-11-30T12:00:30Z", "now": "2026-11-30T12:01:00Z",
                 "probes": {"canary": {"last": {"outcome": "failed", "reason": "canary_mismatch",
                   "canary": {"expectedFrom": "learned_baseline", "expected": "[3920] \\" ralo\\"", "actual": null,
                              "matches": false}}}},
                 "restarts": {"restartLoop": true, "history": [
                   {"path": "preload_hit", "outcome": "not_ready", "notReadyReason": "canary_mismatch",
                    "wrongWeightsFromCache": true, "readinessLatencySeconds": null, "phaseOffsetsSeconds": null,
                    "evidence": null, "engineStart": "2026-11-30T12:00:00Z"},
                   {"path": "<script>alert(2)</script>", "outcome": null, "engineStart": null},
                   {"path": "cold", "outcome": "ready", "readinessLatencySeconds": 12.5,
                    "phaseOffsetsSeconds": {"health_ok": 9.25, "ready": 12.5}, "engineStart": "2026-11-30T11:50:00Z",
                    "evidence": ["log: <b>not markup</b>"], "vllmVersion": "0.31.0", "revision": null}]}}
                """;
        Browser dom = browseStub(document, "status-page-missing-fields.png");
        assertThat(dom.consoleLines()).as(dom.stderr()).isEmpty();
        assertThat(dom.stdout())
                .contains("<div id=\"verdict-word\">NOT READY</div>")
                .contains("<div id=\"page-error\" class=\"banner bad hidden\">")
                .contains("<div id=\"restart-loop\" class=\"banner warn\">")
                .contains("<dd id=\"verdict-detail\">&lt;img src=x onerror=alert(1)&gt;</dd>")
                .contains("&lt;script&gt;alert(2)&lt;/script&gt;")
                .contains("<li>log: &lt;b&gt;not markup&lt;/b&gt;</li>")
                .contains("wrong weights from cache")
                .doesNotContain("<b>not markup</b>");
        assertThat(occurrences(dom.stdout(), "<tr class=\"restart\"")).isEqualTo(3);
        assertThat(occurrences(dom.stdout(), "<g class=\"point never-ready path-preload_hit\""))
                .isEqualTo(1);
        // An unknown path is drawn as unknown, never used as a class name as it came.
        assertThat(occurrences(dom.stdout(), "<g class=\"point never-ready path-unknown\""))
                .isEqualTo(1);
        assertThat(occurrences(dom.stdout(), "<rect class=\"point path-cold\"")).isEqualTo(1);
    }

    static Path chromium() {
        return ExternalTool.CHROMIUM.path();
    }

    ConfigurableApplicationContext readygate(RunningSimulator engine) {
        Path sim = workDir.resolve("engine");
        return new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=" + engine.baseUrl(),
                        "--readygate.state-dir=" + workDir.resolve("state"),
                        "--readygate.evidence.snapshot-dir=" + sim.resolve("snapshot"),
                        "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                        "--readygate.evidence.daemon-socket-dir=" + sim.resolve("weight-cache"),
                        "--readygate.probe.representative.prompt-tokens=100",
                        "--readygate.probe.representative.output-tokens=4");
    }

    static void awaitReadyWithRecords(WebTestClient client, int records) {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            JsonNode status = ReadygateClients.status(client);
            return status.get("ready").booleanValue()
                    && status.at("/restarts/history").size() >= records;
        });
    }

    /**
     * The page against a stub that answers {@code /status} with the page for HTML and with {@code document} for JSON;
     * {@code screenshot}, when given, is also saved under {@value #SCREENSHOTS}.
     */
    Browser browseStub(String document, @Nullable String screenshot) throws Exception {
        Path chromium = chromium();
        String page = new ClassPathResource(StatusPage.PAGE).getContentAsString(StandardCharsets.UTF_8);
        HttpServer stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        stub.createContext("/status", exchange -> {
            String accept = exchange.getRequestHeaders().getFirst("Accept");
            if (accept != null && accept.contains("text/html")) {
                exchange.getResponseHeaders().set("Content-Security-Policy", StatusPage.contentSecurityPolicy(page));
                respond(exchange, "text/html;charset=UTF-8", page);
            } else {
                respond(exchange, "application/json", document);
            }
        });
        stub.start();
        try {
            String url = "http://127.0.0.1:" + stub.getAddress().getPort() + "/status";
            Browser dom = browse(chromium, "--dump-dom", url);
            if (screenshot != null) {
                Path file = Files.createDirectories(Path.of(SCREENSHOTS)).resolve(screenshot);
                Files.deleteIfExists(file);
                Browser shot =
                        browse(chromium, "--screenshot=" + file.toAbsolutePath(), "--window-size=1400,2000", url);
                assertThat(shot.consoleLines()).as(shot.stderr()).isEmpty();
                assertPng(file);
            }
            return dom;
        } finally {
            stub.stop(0);
        }
    }

    static void respond(HttpExchange exchange, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(200, bytes.length);
        try (var out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** What one headless Chromium run printed. */
    record Browser(String stdout, String stderr) {

        /**
         * Lines of the page's console and its uncaught errors. Chromium logs every console message at INFO
         * ({@code INFO:CONSOLE}), whatever its level, so levels cannot be told apart here; the page logs nothing
         * itself unless rendering failed, so any console line is a failure (an error, a CSP violation, a failed load).
         */
        List<String> consoleLines() {
            return stderr.lines()
                    .filter(line -> line.contains(":CONSOLE") || line.contains("Uncaught"))
                    .toList();
        }
    }

    /** Runs headless Chromium on {@code args}, bounded by {@value #BROWSER_LIMIT_SECONDS} s, in a fresh profile. */
    Browser browse(Path chromium, String... args) throws IOException, InterruptedException {
        Path run = Files.createTempDirectory(workDir, "chromium-");
        List<String> command = new ArrayList<>(List.of(
                chromium.toString(),
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                // Containers (CI) often have a tiny /dev/shm, which makes Chromium crash.
                "--disable-dev-shm-usage",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--user-data-dir=" + run.resolve("profile"),
                "--enable-logging=stderr",
                "--v=0",
                // The page polls every 2 s: 5 s of virtual time draws it after two or three fetches.
                "--virtual-time-budget=5000"));
        command.addAll(List.of(args));
        Path stdout = run.resolve("stdout");
        Path stderr = run.resolve("stderr");
        Process process = new ProcessBuilder(command)
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile())
                .start();
        try {
            if (!process.waitFor(BROWSER_LIMIT_SECONDS, TimeUnit.SECONDS)) {
                fail("Chromium did not finish within " + BROWSER_LIMIT_SECONDS + " s: " + command + "\nstderr:\n"
                        + Files.readString(stderr));
            }
        } finally {
            if (process.isAlive()) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        Browser browser = new Browser(Files.readString(stdout), Files.readString(stderr));
        assertThat(process.exitValue())
                .as("Chromium's exit status; stderr:%n%s", browser.stderr())
                .isZero();
        return browser;
    }

    static void assertPng(Path file) throws IOException {
        assertThat(file).exists();
        byte[] png = Files.readAllBytes(file);
        assertThat(png).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
        // A page with content, not a blank one (a blank 1400x1000 PNG is a few KB).
        assertThat(png.length).isGreaterThan(30_000);
    }

    static int occurrences(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
            count++;
        }
        return count;
    }
}
