package dev.readygate.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateApplication;
import dev.readygate.ReadygateClients;
import dev.readygate.simulator.RunningSimulator;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A corpus of secrets in every form readygate meets them, through every output it has: {@code /status} (JSON and the
 * page a browser draws from it), {@code /readyz}, the restart history's file and both exports, the metrics, the log
 * output and start-up error messages. No secret value may appear in any of them.
 *
 * <p>The forms: user information in URLs (the engine's base URL, the preload daemon's health URL), a query string's
 * token, vLLM's {@code non-default args} line as vLLM logs it ({@code 'api_key': ['...']}, {@code 'hf_token': '...'}),
 * a restart history written by an earlier readygate with the secrets in clear, and, through the logs, command lines
 * ({@code --hf-token X}, {@code --api-key=X}), environment-like assignments ({@code HF_TOKEN=...}), headers and
 * exception messages.
 */
@ExtendWith(OutputCaptureExtension.class)
class SecretsNeverShownTests {

    static final String URL_USER = "opsuser7";
    static final String URL_PASSWORD = "P4ssw0rdXYZ";
    static final String DAEMON_PASSWORD = "daemonPW55";
    static final String QUERY_TOKEN = "tok3nQUERYxyz";
    static final String API_KEY = "sk-APIKEYVALUE9";
    static final String HF_TOKEN = "hf_SECRETTOKEN123";
    static final String OLD_HF_TOKEN = "hf_OLDRECORD777";
    static final String CLI_TOKEN = "hf_CLITOKEN888";
    static final String CLI_KEY = "sk-CLIKEY999";
    static final String ENV_TOKEN = "hf_ENVTOKEN456";
    static final String BEARER = "bearerXYZ321";
    static final String EXCEPTION_PASSWORD = "exc3ptionPW";
    // Secrets of well-known shapes, named by nothing: only their value tells them.
    static final String BARE_HF_TOKEN = "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";
    static final String BARE_SK_KEY = "sk-proj-Zx81Yw72Xv63Wu54";
    static final String BARE_BEARER = "b3arerBAREtoken";
    static final String BARE_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWFkeWdhdGUifQ.c2lnbmF0dXJlMTIzNDU2";
    static final String BARE_AWS_KEY = "AKIAZ7QH3JXW5EXAMPLE";

    static final List<String> SECRETS = List.of(
            URL_PASSWORD,
            DAEMON_PASSWORD,
            QUERY_TOKEN,
            API_KEY,
            HF_TOKEN,
            OLD_HF_TOKEN,
            CLI_TOKEN,
            CLI_KEY,
            ENV_TOKEN,
            BEARER,
            EXCEPTION_PASSWORD,
            BARE_HF_TOKEN,
            BARE_SK_KEY,
            BARE_BEARER,
            BARE_JWT,
            BARE_AWS_KEY);

    /**
     * vLLM's root exception for a start whose model download was refused, as issue 24 saw it reach every output: the
     * token stands bare, after the word "token", beside a header whose name alone was redacted before.
     */
    static final String REFUSED_DOWNLOAD = "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url:"
            + " https://huggingface.co/api/models/Qwen/Qwen3-0.6B/revision/main (token " + BARE_HF_TOKEN
            + ", Authorization: Bearer " + BARE_HF_TOKEN + "; proxy " + BARE_JWT + ")";

    @TempDir
    Path workDir;

    @Test
    void noSecretReachesStatusPageReadyzHistoryExportsMetricsOrLogs(CapturedOutput output) throws Exception {
        Path state = Files.createDirectories(workDir.resolve("state"));
        // A history an earlier readygate wrote, before it redacted hf_token.
        Files.writeString(state.resolve("restarts.jsonl"), oldRecord());
        Path keyFile = Files.writeString(workDir.resolve("api-key"), API_KEY + "\n");
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"), "api-key=" + API_KEY, "hf-token=" + HF_TOKEN);
                ConfigurableApplicationContext readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                        .run(
                                "--server.port=0",
                                "--readygate.engine.base-url=" + withUserInfo(engine.baseUrl(), URL_PASSWORD),
                                "--readygate.engine.api-key-file=" + keyFile,
                                "--readygate.state-dir=" + state,
                                "--readygate.evidence.engine-log=" + engine.engineLogFile(),
                                "--readygate.evidence.daemon-health-url="
                                        + withUserInfo(engine.daemonHealthUrl(), DAEMON_PASSWORD) + "?token="
                                        + QUERY_TOKEN,
                                "--readygate.probe.representative.prompt-tokens=100",
                                "--readygate.probe.representative.output-tokens=4")) {
            WebTestClient client = ReadygateClients.client(readygate);
            ReadygateClients.awaitReady(client);
            // The live start is recorded (with the engine's args, which hold the API key and the HF token).
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> ReadygateClients.status(client)
                                    .at("/restarts/history")
                                    .size()
                            >= 2);
            assertThat(Files.readString(engine.engineLogFile()))
                    .as("the engine logs its secrets, as vLLM does")
                    .contains(HF_TOKEN, API_KEY);

            logTheCorpus();

            List<Output> outputs = new ArrayList<>();
            outputs.add(new Output("/status", get(client, "/status")));
            outputs.add(new Output("/readyz", get(client, "/readyz")));
            outputs.add(new Output("/status/restarts.json", get(client, "/status/restarts.json")));
            outputs.add(new Output("/status/restarts.csv", get(client, "/status/restarts.csv")));
            outputs.add(new Output("/actuator/prometheus", get(client, "/actuator/prometheus")));
            outputs.add(new Output("page", page(readygate)));
            // What the live readygate wrote to its history (the seeded old line is the earlier version's).
            String history = Files.readString(state.resolve("restarts.jsonl"), StandardCharsets.UTF_8);
            outputs.add(new Output(
                    "restarts.jsonl (new lines)", history.substring(oldRecord().length())));
            assertThat(get(client, "/status"))
                    .as("the engine's args are shown, redacted")
                    .contains("'hf_token': '<redacted>'")
                    .contains("http://<redacted>@127.0.0.1");
            outputs.add(new Output("log output", output.getAll()));
            assertNoSecret(outputs);
        }
    }

    /**
     * An engine start that dies with a bare token in vLLM's exception text: the failure reaches {@code /readyz},
     * {@code /status}, the history's file and exports and the log, each without the token.
     */
    @Test
    void aBareTokenInTheEnginesErrorTextIsShownNowhere(CapturedOutput output) throws Exception {
        Path state = workDir.resolve("state");
        try (RunningSimulator engine = RunningSimulator.serving(
                        workDir.resolve("engine"),
                        "preload.enabled=false",
                        "auto-restart-delay=3s",
                        "faults.startup-failure=" + REFUSED_DOWNLOAD);
                ConfigurableApplicationContext readygate = new SpringApplicationBuilder(ReadygateApplication.class)
                        .run(
                                "--server.port=0",
                                "--readygate.engine.base-url=" + engine.baseUrl(),
                                "--readygate.state-dir=" + state,
                                "--readygate.evidence.engine-log=" + engine.engineLogFile(),
                                "--readygate.restart.loop-hold=0s",
                                "--readygate.probe.generation.enabled=false",
                                "--readygate.probe.representative.prompt-tokens=100",
                                "--readygate.probe.representative.output-tokens=4")) {
            WebTestClient client = ReadygateClients.client(readygate);
            ReadygateClients.awaitReady(client);
            engine.fault("startup-failure", false);
            engine.crash();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> ReadygateClients.status(client)
                            .path("reason")
                            .asString("")
                            .equals("start_failed"));
            String status = get(client, "/status");
            assertThat(status)
                    .as("the engine's exception reached /status, redacted")
                    .contains("401 Client Error", "token <redacted>", "Bearer <redacted>");
            String readyz = get(client, "/readyz");
            engine.clearFault("startup-failure");
            assertThat(Files.readString(engine.engineLogFile()))
                    .as("the engine logs the token, as vLLM does")
                    .contains(BARE_HF_TOKEN);
            logTheCorpus();

            assertNoSecret(List.of(
                    new Output("/status", status),
                    new Output("/readyz", readyz),
                    new Output("/status/restarts.json", get(client, "/status/restarts.json")),
                    new Output("/status/restarts.csv", get(client, "/status/restarts.csv")),
                    new Output("restarts.jsonl", Files.readString(state.resolve("restarts.jsonl"))),
                    new Output("log output", output.getAll())));
        }
    }

    /**
     * readygate as it starts for real (its own JVM, its {@code main}) with a bad engine URL that holds a password:
     * everything the process prints (the failure report, any stack trace) names the key and not the password. The
     * exception that {@code SpringApplication.run} throws in-process still quotes the value (Spring's conversion
     * message); it is never printed: Spring Boot logs the failure once, through the redacting log output.
     */
    @Test
    void startUpErrorsNameTheBadUrlWithoutItsUserInfo() throws Exception {
        for (String url : List.of(
                "ftp://" + URL_USER + ":" + URL_PASSWORD + "@127.0.0.1:8000",
                "http://" + URL_USER + ":" + URL_PASSWORD + "@[::1:8000/")) {
            Path out = workDir.resolve("start-up.out");
            Process process = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-cp",
                            System.getProperty("java.class.path"),
                            ReadygateApplication.class.getName(),
                            "--server.port=0",
                            "--readygate.engine.base-url=" + url,
                            "--readygate.state-dir=" + workDir.resolve("state-bad"))
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("readygate with a bad URL did not exit within 60 s");
            }
            String printed = Files.readString(out);
            assertThat(process.exitValue()).as(printed).isNotZero();
            assertThat(printed).contains("APPLICATION FAILED TO START").contains("readygate.engine.base-url");
            assertNoSecret(List.of(new Output("start-up output for a bad URL", printed)));
        }
    }

    /** Secrets in every other form, logged as other code (a library, an exception) would log them. */
    static void logTheCorpus() {
        Logger logger = LoggerFactory.getLogger("corpus");
        logger.warn(
                "Engine command line: vllm serve Qwen/Qwen3-0.6B --hf-token {} --api-key={} --max-num-batched-tokens"
                        + " 512",
                CLI_TOKEN,
                CLI_KEY);
        logger.warn("Engine environment: HF_TOKEN={} HOME=/root", ENV_TOKEN);
        logger.warn("argv: ['vllm', 'serve', '--api-key', '{}']", CLI_KEY);
        logger.warn("Sent Authorization: Bearer {} to the engine", BEARER);
        logger.warn(
                "Request failed",
                new IllegalStateException("GET http://" + URL_USER + ":" + EXCEPTION_PASSWORD
                        + "@engine:8000/health?api_key=" + CLI_KEY));
        logger.warn("Engine said: {}", REFUSED_DOWNLOAD);
        logger.warn(
                "Upstream refused",
                new IllegalStateException(
                        "403 for key " + BARE_SK_KEY + " and " + BARE_AWS_KEY + ", sent Bearer " + BARE_BEARER));
    }

    static String withUserInfo(String url, String password) {
        URI uri = URI.create(url);
        return uri.getScheme() + "://" + URL_USER + ":" + password + "@" + uri.getHost() + ":" + uri.getPort()
                + uri.getPath();
    }

    static String oldRecord() {
        return """
                {"id":"old-1","engineStart":"2026-11-30T12:00:00Z","engineStartSource":"log","firstSeen":true,\
                "path":"cold","evidence":[],"fallbackReason":null,"wrongWeightsFromCache":false,"phases":{},\
                "loggedDurations":{},"outcome":"ready","notReadyReason":null,"readinessLatency":"PT30S",\
                "vllmVersion":"0.31.0","engineArgs":"{'model_tag': 'm', 'hf_token': '%s', 'max_num_batched_tokens': \
                8192}","model":"m","modelRoot":"m","revision":null,"maxModelLen":4096,"kvCacheSizeTokens":null,\
                "probeConfigHash":"abc","readygateVersion":"0.0.9","node":{},"memory":{}}
                """.formatted(OLD_HF_TOKEN);
    }

    static String get(WebTestClient client, String path) {
        return client.get()
                .uri(path)
                .header("Accept", "application/json, text/csv, text/plain, */*")
                .exchange()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    String page(ConfigurableApplicationContext readygate) throws Exception {
        StatusPageBrowserTests browser = new StatusPageBrowserTests();
        browser.workDir = workDir;
        int port = ((WebServerApplicationContext) readygate).getWebServer().getPort();
        StatusPageBrowserTests.Browser dom =
                browser.browse(StatusPageBrowserTests.chromium(), "--dump-dom", "http://127.0.0.1:" + port + "/status");
        assertThat(dom.stdout()).as("the page drew the status").contains("<div id=\"verdict\" class=\"ready\">");
        return dom.stdout();
    }

    record Output(String name, String text) {}

    static void assertNoSecret(List<Output> outputs) {
        List<String> leaks = new ArrayList<>();
        for (Output output : outputs) {
            for (String secret : SECRETS) {
                if (output.text().contains(secret)) {
                    int at = output.text().indexOf(secret);
                    leaks.add(output.name() + " shows " + secret + ": ..."
                            + output.text()
                                    .substring(
                                            Math.max(0, at - 80),
                                            Math.min(output.text().length(), at + secret.length() + 20))
                                    .replace('\n', ' ')
                            + "...");
                }
            }
        }
        assertThat(leaks).as("secrets shown").isEmpty();
    }
}
