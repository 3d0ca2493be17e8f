package dev.readygate.status;

import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Debian's headless Chromium driven over the Chrome DevTools Protocol (the JDK's WebSocket client, no driver library):
 * a page at a given viewport, scripts evaluated in it (to measure the layout as the browser laid it out), screenshots,
 * and every console message, uncaught exception and browser log entry (a CSP violation, a failed load) it produced.
 */
final class DevToolsBrowser implements AutoCloseable {

    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    /** How many times {@link #dom()} asks again when the page replaced its document between its two commands. */
    static final int DOCUMENT_REPLACED_ATTEMPTS = 5;

    /** Headless, in a container, talking to nothing but the page under test. */
    static final List<String> HEADLESS_FLAGS = List.of(
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            // Containers (CI) often have a tiny /dev/shm, which makes Chromium crash.
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync");

    private static final JsonMapper json = JsonMapper.builder().build();

    private final Process process;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final List<String> console = Collections.synchronizedList(new ArrayList<>());

    private DevToolsBrowser(Process process, WebSocket socket) {
        this.process = process;
        this.socket = socket;
    }

    /**
     * Starts Chromium with a fresh profile under {@code dir}, in the time zone {@code timeZone} (the page shows local
     * time), and attaches to its first page.
     */
    static DevToolsBrowser start(Path chromium, Path dir, String timeZone) throws Exception {
        Path profile = Files.createDirectories(dir.resolve("profile"));
        List<String> command = new ArrayList<>(List.of(chromium.toString()));
        command.addAll(HEADLESS_FLAGS);
        command.addAll(List.of(
                "--hide-scrollbars",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--user-data-dir=" + profile,
                "about:blank"));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(dir.resolve("stdout").toFile())
                .redirectError(dir.resolve("stderr").toFile());
        builder.environment().put("TZ", timeZone);
        Process process = builder.start();
        try {
            int port = devToolsPort(profile.resolve("DevToolsActivePort"), process);
            HttpClient http = HttpClient.newHttpClient();
            JsonNode targets = json.readTree(http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list"))
                                    .timeout(COMMAND_TIMEOUT)
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body());
            String page = null;
            for (JsonNode target : targets) {
                if ("page".equals(target.path("type").asString())) {
                    page = target.get("webSocketDebuggerUrl").asString();
                    break;
                }
            }
            if (page == null) {
                fail("Chromium opened no page: " + targets);
            }
            Listener listener = new Listener();
            WebSocket socket = http.newWebSocketBuilder()
                    .connectTimeout(COMMAND_TIMEOUT)
                    .buildAsync(URI.create(page), listener)
                    .get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            DevToolsBrowser browser = new DevToolsBrowser(process, socket);
            listener.browser = browser;
            browser.send("Runtime.enable", Map.of());
            browser.send("Log.enable", Map.of());
            browser.send("Page.enable", Map.of());
            return browser;
        } catch (Exception | AssertionError ex) {
            destroy(process);
            throw ex;
        }
    }

    private static int devToolsPort(Path file, Process process) {
        // Real time: Chromium writes the file once it listens for DevTools, and says so nowhere else.
        await().atMost(COMMAND_TIMEOUT).pollInterval(Duration.ofMillis(50)).until(() -> {
            if (!process.isAlive()) {
                fail("Chromium exited with " + process.exitValue() + " before it listened for DevTools");
            }
            return Files.exists(file) && !Files.readString(file).isBlank();
        });
        try {
            return Integer.parseInt(Files.readAllLines(file).getFirst().strip());
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Sets the viewport (CSS pixels, device scale 1) and loads {@code url}. */
    void open(String url, int width, int height) throws Exception {
        viewport(width, height);
        send("Page.navigate", Map.of("url", url));
    }

    void viewport(int width, int height) throws Exception {
        send(
                "Emulation.setDeviceMetricsOverride",
                Map.of("width", width, "height", height, "deviceScaleFactor", 1, "mobile", false));
    }

    /** Runs no script of the pages it loads from now on, as a browser with JavaScript turned off. */
    void disableScripts() throws Exception {
        send("Emulation.setScriptExecutionDisabled", Map.of("value", true));
    }

    /** The document as the browser holds it now, read over DevTools: needs no script in the page. */
    String dom() throws Exception {
        // A page still loading replaces its document between the two commands (the node id then names nothing): ask
        // again for the new document, a bounded number of times.
        for (int attempt = 1; ; attempt++) {
            int root = send("DOM.getDocument", Map.of("depth", 0))
                    .at("/root/nodeId")
                    .asInt();
            JsonNode reply = exchange("DOM.getOuterHTML", Map.of("nodeId", root));
            if (!reply.has("error")) {
                return reply.path("result").path("outerHTML").asString();
            }
            if (attempt == DOCUMENT_REPLACED_ATTEMPTS
                    || !reply.path("error").path("message").asString().contains("Could not find node")) {
                fail("DOM.getOuterHTML failed: " + reply.get("error"));
            }
        }
    }

    /** The value of a JavaScript expression evaluated in the page (promises awaited), as JSON. */
    JsonNode evaluate(String expression) throws Exception {
        JsonNode result =
                send("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true, "awaitPromise", true));
        if (result.has("exceptionDetails")) {
            fail("the page threw evaluating a test script: " + result.get("exceptionDetails"));
        }
        return result.path("result").path("value");
    }

    /**
     * Saves what the viewport shows to {@code file}; with {@code fullPage}, the whole page at the viewport's width (the
     * viewport grown to the page's height while shooting, then put back).
     */
    void screenshot(Path file, boolean fullPage, int width, int height) throws Exception {
        if (fullPage) {
            int pageHeight =
                    evaluate("Math.ceil(document.documentElement.scrollHeight)").asInt();
            viewport(width, Math.max(height, pageHeight));
        }
        JsonNode shot = send("Page.captureScreenshot", Map.of("format", "png"));
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.write(file, Base64.getDecoder().decode(shot.get("data").asString()));
        if (fullPage) {
            viewport(width, height);
        }
    }

    /** The console messages, uncaught exceptions and browser log entries so far. */
    List<String> console() {
        synchronized (console) {
            return List.copyOf(console);
        }
    }

    private JsonNode send(String method, Map<String, Object> params) throws Exception {
        JsonNode reply = exchange(method, params);
        if (reply.has("error")) {
            fail(method + " failed: " + reply.get("error"));
        }
        return reply.path("result");
    }

    /** The browser's whole reply to one command, an error included. */
    private JsonNode exchange(String method, Map<String, Object> params) throws Exception {
        int id = ids.incrementAndGet();
        ObjectNode message = json.createObjectNode();
        message.put("id", id);
        message.put("method", method);
        message.set("params", json.valueToTree(params));
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        socket.sendText(json.writeValueAsString(message), true).get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        return answer.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    private void received(String text) {
        JsonNode message = json.readTree(text);
        if (message.has("id")) {
            CompletableFuture<JsonNode> answer =
                    pending.remove(message.get("id").asInt());
            if (answer != null) {
                answer.complete(message);
            }
            return;
        }
        String method = message.path("method").asString();
        JsonNode params = message.path("params");
        switch (method) {
            case "Runtime.consoleAPICalled" ->
                console.add("console." + params.path("type").asString() + ": " + params.path("args"));
            case "Runtime.exceptionThrown" -> console.add("uncaught: " + params.path("exceptionDetails"));
            case "Log.entryAdded" ->
                console.add("log " + params.at("/entry/level").asString() + ": "
                        + params.at("/entry/text").asString() + " "
                        + params.at("/entry/url").asString());
            default -> {}
        }
    }

    /** Collects fragmented text frames into whole messages. */
    private static final class Listener implements WebSocket.Listener {

        private final StringBuilder partial = new StringBuilder();
        volatile DevToolsBrowser browser;

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                String text = partial.toString();
                partial.setLength(0);
                DevToolsBrowser target = browser;
                if (target != null) {
                    target.received(text);
                }
            }
            webSocket.request(1);
            return null;
        }
    }

    @Override
    public void close() {
        socket.abort();
        destroy(process);
    }

    private static void destroy(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
