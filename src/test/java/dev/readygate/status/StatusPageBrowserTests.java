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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
import tools.jackson.databind.node.ObjectNode;

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
    static final String SCREENSHOTS = "target/screenshots";

    /** The screens the page must be readable on: desktop widths and two laptop screens. */
    static final List<int[]> SCREENS =
            List.of(new int[] {1280, 800}, new int[] {1366, 768}, new int[] {1440, 900}, new int[] {1920, 1080});

    /** The browser's time zone in the layout tests: the page shows local time, not UTC. */
    static final String TIME_ZONE = "America/New_York";

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
            // The first start was there before readygate: first seen, no latency, so a marker on the axis, not a bar.
            assertThat(occurrences(dom.stdout(), "<rect class=\"point path-")).isGreaterThanOrEqualTo(1);
            assertThat(occurrences(dom.stdout(), "<g class=\"point first-seen path-"))
                    .isEqualTo(1);
            assertThat(occurrences(dom.stdout(), "<tr class=\"restart\"")).isGreaterThanOrEqualTo(2);
            // Both starts became ready: none says "never" in red, the first seen one says why it has no latency.
            assertThat(occurrences(dom.stdout(), "<span class=\"never-text\">never</span>"))
                    .isZero();
            assertThat(dom.stdout()).contains(">first seen</span></td>");

            // Before any script (issue 25 item 6): what a scripted screenshot at load or a text browser shows.
            try (DevToolsBrowser browser =
                    DevToolsBrowser.start(chromium, Files.createTempDirectory(workDir, "no-script-"), TIME_ZONE)) {
                browser.disableScripts();
                browser.open(url, 1400, 1000);
                await().atMost(Duration.ofSeconds(20)).until(() -> browser.dom().contains("</main>"));
                String noScript = browser.dom();
                assertThat(noScript)
                        .contains("<title>READY · ready · readygate</title>")
                        .contains("<div id=\"verdict\" class=\"ready\">")
                        .contains("<div id=\"verdict-word\">READY</div>")
                        .contains("<dd id=\"verdict-state\">ready</dd>")
                        .contains("<dd id=\"verdict-engine\">Qwen/Qwen3-0.6B · vLLM 0.31.0</dd>")
                        .contains("<span class=\"tag path path-preload_hit\">preload_hit</span>")
                        .doesNotContain("LOADING");
                assertThat(occurrences(noScript, "<tr class=\"restart\">")).isEqualTo(2);
                // Both starts became ready (item 5): none says "never", the first seen one says why it has no latency.
                String history = noScript.substring(
                        noScript.indexOf("<table id=\"restart-table\""),
                        noScript.indexOf("</table>", noScript.indexOf("<table id=\"restart-table\"")));
                assertThat(history)
                        .doesNotContain("never-text")
                        .containsPattern("<span class=\"muted\" title=\"[^\"]*\">first seen</span>");
                // As a text browser or a paste into a ticket reads it.
                assertThat(noScript.replaceAll("(?s)<(script|style|title)[^>]*>.*?</\\1>", " ")
                                .replaceAll("<[^>]+>", " ")
                                .replaceAll("\\s+", " "))
                        .contains(" READY state ready ")
                        .containsPattern(" since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC · for ")
                        .contains(" engine Qwen/Qwen3-0.6B · vLLM 0.31.0 ");
                Path atLoad = Files.createDirectories(Path.of(SCREENSHOTS)).resolve("status-page-no-script.png");
                browser.screenshot(atLoad, false, 1400, 1000);
                assertPng(atLoad);
                assertThat(browser.console()).isEmpty();
            }

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
            // Real readygate without a GPU source: its long reason must fit a laptop screen too.
            try (DevToolsBrowser browser =
                    DevToolsBrowser.start(chromium, Files.createTempDirectory(workDir, "devtools-"), TIME_ZONE)) {
                browser.open(url, 1280, 800);
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> browser.evaluate("document.querySelectorAll('#restart-table tr.restart').length")
                                        .asInt()
                                >= 2);
                assertFits(browser.evaluate(LAYOUT), 1280, "readygate gating the simulator at 1280x800");
                assertThat(browser.console()).isEmpty();
            }
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

    @Test
    void pageDrawsAStartThatFailedBeforeServingAsAMarkerWithVllmsReasonNeverALatency() throws Exception {
        String oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. <b>GPU 0</b>";
        String document = """
                {"ready": false, "state": "down", "reason": "start_failed", "detail": "%1$s",
                 "since": "2026-11-30T12:00:30Z", "now": "2026-11-30T12:01:00Z",
                 "restarts": {"restartLoop": true, "history": [
                   {"path": "cold", "outcome": "failed", "notReadyReason": "start_failed", "startFailure": "%1$s",
                    "readinessLatencySeconds": null, "phaseOffsetsSeconds": {"engine_start": 0.0},
                    "loggedDurations": {"weights_loading": 4.88, "download": 69.52},
                    "evidence": ["log: Loading weights took 4.88 s"],
                    "engineStart": "2026-11-30T12:00:10Z", "engineStartSource": "log", "vllmVersion": "0.31.0"},
                   {"path": "cold", "outcome": "failed", "notReadyReason": "engine_down", "startFailure": null,
                    "readinessLatencySeconds": null, "phaseOffsetsSeconds": {"engine_start": 0.0},
                    "engineStart": "2026-11-30T12:00:00Z"},
                   {"path": "cold", "outcome": "ready", "readinessLatencySeconds": 12.5,
                    "phaseOffsetsSeconds": {"port_listening": 9.0, "health_ok": 9.25, "ready": 12.5},
                    "loggedDurations": {"download": 2.0, "model_loading": 3.0, "compilation": 1.5,
                                        "graph_capture": 0.5, "engine_init": 2.5},
                    "engineStart": "2026-11-30T11:50:00Z"}]}}
                """.formatted(oom);
        Browser dom = browseStub(document, "status-page-start-failed.png");
        assertThat(dom.consoleLines()).as(dom.stderr()).isEmpty();
        assertThat(dom.stdout())
                .contains("start_failed")
                .contains("the engine's last start died before serving")
                .contains("died before serving")
                .contains("died loading: the port never opened")
                .contains(">torch.OutOfMemoryError</text>")
                .contains("&lt;b&gt;GPU 0&lt;/b&gt;")
                .doesNotContain("<b>GPU 0</b>")
                // The download is a phase of its own, with the line it comes from as its tooltip.
                .contains("title=\"Time spent downloading weights for MODEL: X seconds: a restart that downloads is not"
                        + " a slow cold start\">download 69.52 s</span>");
        // Issue 28 item 4: the timeline splits the engine's loading into the phases vLLM logged, one after the other
        // (torch.compile and graph capture out of engine init), the rest of the load still "load".
        assertThat(dom.stdout())
                .contains("<span class=\"ph-download\" style=\"width: 16%;\"></span>")
                .contains("<span class=\"ph-model\" style=\"width: 24%;\"></span>")
                .contains("<span class=\"ph-compile\" style=\"width: 12%;\"></span>")
                .contains("<span class=\"ph-graphs\" style=\"width: 4%;\"></span>")
                .contains("<span class=\"ph-init\" style=\"width: 4%;\"></span>")
                .contains("<span class=\"load\" style=\"width: 12%;\"></span>")
                .contains("title=\"load 9.00 s (download 2.00 s · model loading 3.00 s · torch.compile 1.50 s · graph"
                        + " capture 0.50 s · rest of engine init 0.50 s as logged, the rest other loading) · listed after"
                        + " 0.00 s more · verified in 3.50 s\"");
        // Never drawn as a latency: a marker on the axis, labelled as a failed start.
        assertThat(occurrences(dom.stdout(), "<g class=\"point never-ready failed path-cold\""))
                .isEqualTo(2);
        assertThat(occurrences(dom.stdout(), ">start failed</text>")).isEqualTo(2);
        assertThat(occurrences(dom.stdout(), "<rect class=\"point path-cold\"")).isEqualTo(1);
    }

    /**
     * Text the operator selected (a reason to copy at 3 a.m.) stays on the page while the page goes on polling: the
     * redraw waits until the selection ends, and the page says it is paused. Every answer of the stub has another
     * detail, so a redraw would show.
     */
    @Test
    void pageKeepsTheTextAnOperatorSelectedUntilTheSelectionEnds() throws Exception {
        String page = new ClassPathResource(StatusPage.PAGE).getContentAsString(StandardCharsets.UTF_8);
        AtomicInteger fetches = new AtomicInteger();
        HttpServer stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        stub.createContext("/status", exchange -> {
            String accept = exchange.getRequestHeaders().getFirst("Accept");
            if (accept != null && accept.contains("text/html")) {
                exchange.getResponseHeaders().set("Content-Security-Policy", StatusPage.contentSecurityPolicy(page));
                respond(exchange, "text/html;charset=UTF-8", page);
            } else {
                respond(exchange, "application/json", """
                        {"ready": false, "state": "verification_failed", "reason": "canary_mismatch",
                         "detail": "answer %d", "since": "2026-11-30T12:00:30Z", "now": "2026-11-30T12:01:00Z"}
                        """.formatted(fetches.incrementAndGet()));
            }
        });
        stub.start();
        try (DevToolsBrowser browser =
                DevToolsBrowser.start(chromium(), Files.createTempDirectory(workDir, "devtools-"), TIME_ZONE)) {
            browser.open("http://127.0.0.1:" + stub.getAddress().getPort() + "/status", 1280, 800);
            // Null-safe: until the navigation commits, the browser still shows the blank page.
            String detail = "(document.getElementById('verdict-detail') || {textContent: ''}).textContent";
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> browser.evaluate(detail).asString().startsWith("answer "));
            browser.evaluate(
                    "window.getSelection().selectAllChildren(document.getElementById('verdict-detail')), true");
            String selected = browser.evaluate(detail).asString();
            int fetched = fetches.get();
            await().atMost(Duration.ofSeconds(20)).until(() -> fetches.get() >= fetched + 2);

            assertThat(browser.evaluate(detail).asString()).isEqualTo(selected);
            assertThat(browser.evaluate("String(window.getSelection())").asString())
                    .isEqualTo(selected);
            assertThat(browser.evaluate("document.getElementById('meta-updated').textContent")
                            .asString())
                    .contains("paused while text is selected");

            browser.evaluate("window.getSelection().removeAllRanges(), true");
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> !browser.evaluate(detail).asString().equals(selected));
        } finally {
            stub.stop(0);
        }
    }

    /**
     * Real documents from the demo (several restart paths, a start that never became ready, GPU memory per cycle, long
     * fallback and evidence lines, an active memory signal; one ready, one not ready after a canary mismatch) drawn at
     * every screen size: nothing wider than the window, no inner scroll box, every history column on screen, the
     * never-ready start not drawn as a latency, no console message. Screenshots of the first screen and of the whole
     * page (with one start's details open) go to {@value #SCREENSHOTS} for people to look at.
     */
    @ParameterizedTest
    @ValueSource(strings = {"demo-ready-stale-cache", "demo-canary-mismatch", "demo-compared"})
    void pageFitsEveryScreenFromALaptopTo1920PixelsWithoutHorizontalScrolling(String fixture) throws Exception {
        String document =
                new ClassPathResource("status/" + fixture + ".json").getContentAsString(StandardCharsets.UTF_8);
        JsonNode status = json.readTree(document);
        int starts = status.at("/restarts/history").size();
        int neverReady = 0;
        for (JsonNode record : status.at("/restarts/history")) {
            if (!"ready".equals(record.get("outcome").asString())) {
                neverReady++;
            }
        }
        assertThat(neverReady)
                .as("the fixture has a start that never became ready")
                .isPositive();
        String page = new ClassPathResource(StatusPage.PAGE).getContentAsString(StandardCharsets.UTF_8);
        HttpServer stub = stub(page, document);
        try (DevToolsBrowser browser =
                DevToolsBrowser.start(chromium(), Files.createTempDirectory(workDir, "devtools-"), TIME_ZONE)) {
            String url = "http://127.0.0.1:" + stub.getAddress().getPort() + "/status";
            for (int[] screen : SCREENS) {
                int width = screen[0];
                int height = screen[1];
                browser.open(url, width, height);
                int expectedRows = starts;
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> browser.evaluate("document.querySelectorAll('#restart-table tr.restart').length")
                                        .asInt()
                                == expectedRows);
                String name = fixture + "-" + width + "x" + height;
                browser.screenshot(Path.of(SCREENSHOTS, name + ".png"), false, width, height);
                assertLayout(browser.evaluate(LAYOUT), width, starts, neverReady, name);
                // A start's details open: the widest content the table has.
                browser.evaluate("document.querySelector('#restart-table button.toggle').click(), true");
                assertLayout(browser.evaluate(LAYOUT), width, starts, neverReady, name + " with details open");
                browser.screenshot(Path.of(SCREENSHOTS, name + "-full.png"), true, width, height);
                assertPng(Path.of(SCREENSHOTS, name + ".png"));
                assertPng(Path.of(SCREENSHOTS, name + "-full.png"));
            }
            // Local time (the browser's zone), never the raw ISO instant.
            JsonNode shown = browser.evaluate("""
                    ({since: document.getElementById('verdict-since').textContent,
                      zone: document.getElementById('meta-zone').textContent,
                      evidence: document.getElementById('evidence').textContent,
                      current: document.getElementById('current-start').querySelector('dl').textContent,
                      memory: [...document.querySelectorAll('#restart-table tr.restart td.num > span.gib')].map(e => e.textContent),
                      owners: [...document.querySelectorAll('#restart-table tr.restart td.num > div.cell-sub')].map(e => e.textContent)})
                    """);
            // The current start is the newest record (ready, or failed for good): its path is known, not provisional.
            assertThat(shown.get("current").asString())
                    .startsWith("path")
                    .contains("recorded")
                    .doesNotContain("provisional");
            // GPU memory with its unit, and who holds it.
            assertThat(shown.get("memory").valueStream().map(JsonNode::asString))
                    .isNotEmpty()
                    .allMatch(cell -> cell.matches("[0-9.,]+\\u00a0(GiB|MiB)"));
            assertThat(shown.get("owners").valueStream().map(JsonNode::asString))
                    .isNotEmpty()
                    .allMatch(cell -> cell.matches("(engine|daemon|other) [0-9.,]+"));
            String since = java.time.Instant.parse(status.get("since").asString())
                    .atZone(java.time.ZoneId.of(TIME_ZONE))
                    .toLocalTime()
                    .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                    .toString();
            assertThat(shown.get("since").asString()).startsWith(since);
            assertThat(shown.get("zone").asString()).contains("EST");
            assertThat(shown.get("evidence").asString())
                    .contains("engine log", "preload daemon /health", "daemon READY logged")
                    .doesNotContain("daemonReadyLoggedAt", "engineLog")
                    .doesNotContainPattern("\\d{4}-\\d\\d-\\d\\dT\\d\\d:");
            assertThat(browser.console()).isEmpty();
        } finally {
            stub.stop(0);
        }
    }

    /**
     * Restarts compared on the page, from a real demo document (issue 19): the comparison table has a row per release
     * and one per path and recovery kind under it, with the figures {@code /status} gives (latency, failures, memory in
     * GiB, the speed-up over the same release's cold starts); the history shows each start's recovery kind and the
     * requests its stop lost; the note says that no restart path resumes requests in flight; an unsupported snapshot
     * configuration and a manifest that does not match the engine are named, not hidden. At a laptop's width and at
     * 1920 pixels, without horizontal scrolling or a comparison cell spilling over.
     */
    @Test
    void pageComparesRestartsAndShowsWhatEachStartRecoveredFromAndLost() throws Exception {
        JsonNode status = json.readTree(
                new ClassPathResource("status/demo-compared.json").getContentAsString(StandardCharsets.UTF_8));
        ObjectNode snapshot = (ObjectNode) status.at("/restarts/snapshot");
        String unsupported = "tensor_parallel_size is 2: vLLM's snapshots restore one GPU (TP1) engines only, so"
                + " readygate.evidence.snapshot-dir cannot describe this engine's starts";
        String mismatch = "driver_version: the snapshot was taken on 580.159.04, this engine runs on 580.172.08";
        snapshot.put("supported", false);
        snapshot.putArray("unsupported").add(unsupported);
        snapshot.put("matchesThisEngine", false);
        snapshot.putArray("mismatches").add(mismatch);
        // Issue 27 item 5: with gateway mode on, the crash's stop carries the gateway's own count; the others have
        // none.
        ObjectNode traffic = json.createObjectNode()
                .put("inFlight", 3)
                .put("finished", 1)
                .put("cut", 2)
                .put("cutTokens", 57);
        ((ObjectNode) status.at("/restarts/history/1/stop")).set("traffic", traffic);
        ((ObjectNode) status.at("/restarts/workLost/lastStop")).set("traffic", traffic);
        JsonNode groups = status.at("/restarts/comparison/groups");
        Set<String> releases = new LinkedHashSet<>();
        groups.forEach(group -> releases.add(group.get("vllmVersion").asString() + "|"
                + group.get("revision").asString() + "|"
                + group.get("configuration").asString()));
        String page = new ClassPathResource(StatusPage.PAGE).getContentAsString(StandardCharsets.UTF_8);
        HttpServer stub = stub(page, json.writeValueAsString(status));
        try (DevToolsBrowser browser =
                DevToolsBrowser.start(chromium(), Files.createTempDirectory(workDir, "devtools-"), TIME_ZONE)) {
            String url = "http://127.0.0.1:" + stub.getAddress().getPort() + "/status";
            for (int[] screen : List.of(SCREENS.getFirst(), SCREENS.getLast())) {
                int width = screen[0];
                browser.open(url, width, screen[1]);
                await().atMost(Duration.ofSeconds(20))
                        .until(() ->
                                browser.evaluate("document.querySelectorAll('#comparison-table tr.compared').length")
                                                .asInt()
                                        == groups.size());
                String name = "compared-snapshot-concerns-" + width + "x" + screen[1];
                browser.screenshot(Path.of(SCREENSHOTS, name + "-full.png"), true, width, screen[1]);
                assertPng(Path.of(SCREENSHOTS, name + "-full.png"));
                assertFits(browser.evaluate(LAYOUT), width, name);
                JsonNode shown = browser.evaluate("""
                        ({releases: [...document.querySelectorAll('#comparison-table tr.release')].map(r => r.textContent),
                          rows: [...document.querySelectorAll('#comparison-table tr.compared')]
                              .map(r => [...r.cells].map(c => c.textContent.trim())),
                          note: document.getElementById('comparison-note').textContent,
                          count: document.getElementById('comparison-count').textContent,
                          recoveries: [...document.querySelectorAll('#restart-table tr.restart')]
                              .map(r => r.cells[2].querySelector('.kind') ? r.cells[2].querySelector('.kind').textContent : null),
                          lost: [...document.querySelectorAll('#restart-table tr.restart')]
                              .map(r => r.querySelector('.lost') ? r.querySelector('.lost').textContent : null),
                          traffic: [...document.querySelectorAll('#restart-table tr.restart')]
                              .map(r => r.querySelector('.traffic') ? r.querySelector('.traffic').textContent : null),
                          evidence: document.getElementById('evidence').textContent})
                        """);
                assertThat(shown.get("releases")).as(name).hasSize(releases.size());
                assertThat(shown.get("count").asString())
                        .isEqualTo("(10 starts, 1 left out: readygate did not see them begin)");
                // Each group's row says what /status says, in the table's units.
                for (int i = 0; i < groups.size(); i++) {
                    JsonNode group = groups.get(i);
                    List<String> cells = shown.get("rows")
                            .get(i)
                            .valueStream()
                            .map(JsonNode::asString)
                            .toList();
                    assertThat(cells).as(name + " row " + i).hasSize(17);
                    assertThat(cells.get(0)).isEqualTo(group.get("path").asString());
                    assertThat(cells.get(2)).isEqualTo(group.get("starts").asString());
                    assertThat(cells.get(3)).isEqualTo(group.get("failures").asString());
                    JsonNode latency = group.get("readinessSeconds");
                    // Seconds with two decimals below 10 s, one above.
                    assertThat(cells.get(4))
                            .isEqualTo(
                                    latency.isNull()
                                            ? "—"
                                            : seconds(latency.get("p50").asDouble()));
                    JsonNode atReady = group.at("/memoryMedianMiB/atReady");
                    assertThat(cells.get(14))
                            .isEqualTo(
                                    atReady.isNull()
                                            ? "—"
                                            : String.format(Locale.ROOT, "%.2f", atReady.asDouble() / 1024));
                    JsonNode speedup = group.get("speedupOverCold");
                    if (speedup.isNull()) {
                        assertThat(cells.get(16)).isEqualTo("—");
                    } else {
                        double times = speedup.asDouble();
                        int decimals =
                                "cold".equals(group.get("path").asString()) ? 2 : times >= 10 ? 0 : times >= 1 ? 1 : 2;
                        assertThat(cells.get(16))
                                .isEqualTo("×" + String.format(Locale.ROOT, "%." + decimals + "f", times));
                    }
                }
                // The cache hit of the rolled-out revision, 2.71 times faster than its cold start.
                assertThat(shown.get("rows")
                                .valueStream()
                                .map(row -> row.get(0).asString() + " "
                                        + row.get(16).asString()))
                        .contains("preload_hit ×2.7", "cold ×1.00");
                assertThat(shown.get("note").asString())
                        .startsWith("No restart path resumes requests in flight")
                        .contains("3 running request(s) lost")
                        .contains("Gateway at the last stop: 3 in flight, 1 finished, 2 cut (57 tokens streamed).");
                // Newest first: the container restarted after the crash, which lost the three requests in flight.
                assertThat(shown.get("recoveries").get(0).asString()).isEqualTo("container restart (same pod)");
                assertThat(shown.get("recoveries").get(1).asString()).isEqualTo("process restart (same container)");
                assertThat(shown.get("lost").get(1).asString()).isEqualTo("lost 3 running");
                assertThat(shown.get("lost").get(0).isNull()).isTrue();
                assertThat(shown.get("traffic").get(1).asString())
                        .isEqualTo("gateway: 3 in flight, 1 finished, 2 cut (57 tokens streamed)");
                assertThat(shown.get("traffic").valueStream().filter(JsonNode::isNull))
                        .hasSize(shown.get("traffic").size() - 1);
                assertThat(shown.get("evidence").asString())
                        .contains("unsupported " + unsupported)
                        .contains("not trusted")
                        .contains(mismatch);
            }
            assertThat(browser.console()).isEmpty();
        } finally {
            stub.stop(0);
        }
    }

    static String seconds(double value) {
        return String.format(Locale.ROOT, Math.abs(value) < 10 ? "%.2f" : "%.1f", value);
    }

    /** What the browser laid out, measured in the page: overflow, scroll boxes, the history columns, the chart. */
    static final String LAYOUT = """
            (() => {
              const vw = document.documentElement.clientWidth;
              const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                  + (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
              const out = { viewport: vw, scrollWidth: document.documentElement.scrollWidth, overflowing: [], scrollBoxes: [],
                  spilling: [], columns: [], neverReady: [], latencyBars: document.querySelectorAll('#chart rect.point').length };
              for (const e of document.body.querySelectorAll('*')) {
                const r = e.getBoundingClientRect();
                if (r.width === 0 || r.height === 0) continue;
                if (r.right > vw + 0.5 || r.left < -0.5) out.overflowing.push(name(e) + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
                const cs = getComputedStyle(e);
                if ((cs.overflowX === 'auto' || cs.overflowX === 'scroll') && e.scrollWidth > e.clientWidth + 1) out.scrollBoxes.push(name(e));
              }
              // Content wider than its cell spills over the next column.
              for (const td of document.querySelectorAll('#restart-table td, #comparison-table td')) {
                if (td.getBoundingClientRect().width > 0 && td.scrollWidth > td.clientWidth + 1) {
                  out.spilling.push(td.closest('table').id + ' ' + (td.parentElement.rowIndex) + ':' + td.cellIndex + ' '
                      + td.textContent.slice(0, 40));
                }
              }
              for (const th of document.querySelectorAll('#restart-table thead tr:last-child th')) {
                const r = th.getBoundingClientRect();
                out.columns.push({ text: th.textContent.trim(), left: r.left, right: r.right, width: r.width,
                    fits: th.scrollWidth <= th.clientWidth + 1 });
              }
                            const plot = document.querySelector('#chart').getBoundingClientRect();
              for (const g of document.querySelectorAll('#chart g.never-ready')) {
                const marker = (g.querySelector('.marker') || g).getBoundingClientRect();
                out.neverReady.push({ markerHeight: marker.height, plotHeight: plot.height, label: g.textContent });
              }
              return out;
            })()
            """;

    static void assertLayout(JsonNode layout, int width, int starts, int neverReady, String screen) {
        assertFits(layout, width, screen);
        assertThat(layout.get("latencyBars").asInt())
                .as("%s: one latency bar per start that became ready, none for the others", screen)
                .isEqualTo(starts - neverReady);
        assertThat(layout.get("neverReady")).as(screen).hasSize(neverReady);
        for (JsonNode never : layout.get("neverReady")) {
            assertThat(never.get("markerHeight").asDouble())
                    .as("%s: a never-ready start is a short marker on the axis, not a bar", screen)
                    .isLessThan(never.get("plotHeight").asDouble() * 0.1);
            assertThat(never.get("label").asString()).as(screen).contains("never ready");
        }
    }

    /** Nothing wider than the window, no inner scroll box, no cell spilling over, every history column readable. */
    static void assertFits(JsonNode layout, int width, String screen) {
        assertThat(layout.get("viewport").asInt()).as(screen).isEqualTo(width);
        assertThat(layout.get("scrollWidth").asInt())
                .as("%s: the page is no wider than the window (no horizontal scrolling)", screen)
                .isLessThanOrEqualTo(width);
        assertThat(layout.get("overflowing").valueStream().map(JsonNode::asString))
                .as("%s: elements reaching outside the window", screen)
                .isEmpty();
        assertThat(layout.get("scrollBoxes").valueStream().map(JsonNode::asString))
                .as("%s: inner scroll boxes hiding content", screen)
                .isEmpty();
        assertThat(layout.get("spilling").valueStream().map(JsonNode::asString))
                .as("%s: history and comparison cells whose content spills over the next column", screen)
                .isEmpty();
        List<String> headers = new ArrayList<>();
        for (JsonNode column : layout.get("columns")) {
            headers.add(column.get("text").asString());
            assertThat(column.get("right").asDouble())
                    .as("%s: column %s ends inside the window", screen, column.get("text"))
                    .isLessThanOrEqualTo(width);
            assertThat(column.get("width").asDouble())
                    .as("%s: column %s is wide enough to read", screen, column.get("text"))
                    .isGreaterThan(24);
            assertThat(column.get("fits").booleanValue())
                    .as("%s: the header %s fits its column", screen, column.get("text"))
                    .isTrue();
        }
        assertThat(headers)
                .containsExactly(
                        "#",
                        "Started",
                        "Path",
                        "Outcome",
                        "Ready in",
                        "Where the time went",
                        "Before",
                        "At ready",
                        "After stop",
                        "vLLM",
                        "Revision",
                        "Evidence");
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
                        "--readygate.probe.representative.output-tokens=4",
                        // The engine restarts seconds after it started: by the rule a crash loop's second start.
                        "--readygate.restart.loop-hold=0s");
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
        HttpServer stub = stub(page, document);
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

    /** Serves {@code page} (with its CSP) to a browser asking for HTML and {@code document} as JSON. */
    static HttpServer stub(String page, String document) throws IOException {
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
        return stub;
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
        List<String> command = new ArrayList<>(List.of(chromium.toString()));
        command.addAll(DevToolsBrowser.HEADLESS_FLAGS);
        command.addAll(List.of(
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
