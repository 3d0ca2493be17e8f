package dev.readygate.engine;

import static dev.readygate.engine.EngineCalls.call;
import static dev.readygate.engine.EngineCalls.client;
import static dev.readygate.engine.EngineCalls.failure;
import static dev.readygate.engine.EngineCalls.success;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpHeaderNames;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.tcp.TcpServer;

/**
 * readygate's {@code GET}s on the plain connection ({@link PlainGets}): the probe loop's calls share one kept
 * connection and ask for what they asked before, and an answer that is not HTTP or ends early is named as such.
 */
class PlainGetsTests {

    private static final String MODELS = WebClientEngineClientFakeEngineTests.MODELS;

    @Test
    void theProbeLoopsCallsOneAfterAnotherShareOneKeptConnection() {
        try (FakeEngine engine = FakeEngine.start(routes -> routes.get("/health", (req, res) -> res.send())
                        .get("/metrics", (req, res) -> res.sendString(Mono.just("vllm:num_requests_running 0\n")))
                        .get("/v1/models", (req, res) -> WebClientEngineClientFakeEngineTests.json(res, MODELS))
                        .get(
                                "/version",
                                (req, res) ->
                                        WebClientEngineClientFakeEngineTests.json(res, "{\"version\":\"0.31.0\"}")));
                WebClientEngineClient client = client(engine.url())) {
            for (int cycle = 0; cycle < 20; cycle++) {
                assertThat(call(client.health())).isInstanceOf(EngineCall.Success.class);
                success(client.metrics());
                assertThat(success(client.model()).id()).isEqualTo("fake-model");
                assertThat(success(client.version())).isEqualTo("0.31.0");
            }

            // On llama-server each open connection holds one of its few HTTP threads.
            assertThat(engine.connections()).isOne();
        }
    }

    @Test
    void theJsonRoutesAskForJsonAndHealthAndMetricsAskForNothing() {
        Map<String, String> accept = new ConcurrentHashMap<>();
        try (FakeEngine engine = FakeEngine.start(routes -> routes.route(req -> true, (req, res) -> {
                    accept.put(req.path(), String.valueOf(req.requestHeaders().get(HttpHeaderNames.ACCEPT)));
                    return res.send();
                }));
                WebClientEngineClient client = client(engine.url())) {
            call(client.health());
            call(client.metrics());
            call(client.model());
            call(client.version());
            call(client.slots());

            assertThat(accept)
                    .containsEntry("health", "null")
                    .containsEntry("metrics", "null")
                    .containsEntry("v1/models", "application/json")
                    .containsEntry("version", "application/json")
                    .containsEntry("slots", "application/json");
        }
    }

    @Test
    void aPortThatDoesNotSpeakHttpIsAnIoErrorThatSaysSo() {
        // readygate.engine.base-url pointed at the wrong port: an SSH server greets first.
        DisposableServer ssh = TcpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((in, out) ->
                        out.sendString(Mono.just("SSH-2.0-OpenSSH_9.6\r\n")).then(Mono.never()))
                .bindNow();
        try (WebClientEngineClient client = client(URI.create("http://127.0.0.1:" + ssh.port()))) {
            EngineFailure failure = failure(client.health());

            assertThat(failure.kind()).isEqualTo(EngineFailure.Kind.IO_ERROR);
            assertThat(failure.detail()).startsWith("GET /health: ").contains("not an HTTP answer");
        } finally {
            ssh.disposeNow();
        }
    }

    @Test
    void aBodyTheEngineCutShortIsMalformedWhereItIsReadAndIgnoredWhereItIsNot() {
        DisposableServer engine = TcpServer.create()
                .host("127.0.0.1")
                .port(0)
                // The request is read first: a server that closes with a request unread resets the connection.
                .handle((in, out) -> in.receive()
                        .next()
                        .then(out.sendString(Mono.just("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                        + "Content-Length: 1000\r\n\r\nvllm:num_req"))
                                .then()))
                .bindNow();
        try (WebClientEngineClient client = client(URI.create("http://127.0.0.1:" + engine.port()))) {
            EngineFailure metrics = failure(client.metrics());

            assertThat(metrics.kind()).isEqualTo(EngineFailure.Kind.MALFORMED_BODY);
            assertThat(metrics.detail()).isEqualTo("GET /metrics: connection closed before the body was complete");
            // /health's body means nothing: its 200 is the answer.
            assertThat(call(client.health())).isInstanceOf(EngineCall.Success.class);
        } finally {
            engine.disposeNow();
        }
    }
}
