package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gateway.StreamWatch.Body;
import dev.readygate.simulator.Fault;
import dev.readygate.simulator.SimulatorFixture;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link StreamWatch} and {@link TrafficJudge} on the bytes a running vLLM simulator writes, read in small chunks as a
 * proxy passes them: a healthy stream and body, a GPU fault's error event inside a 200 stream and its 500, a cut
 * stream, a malformed one, a client's bad request.
 */
class TrafficJudgeSimulatorTests {

    @TempDir
    static Path workDir;

    static SimulatorFixture simulator;

    static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        simulator = SimulatorFixture.serving(workDir, "preload.enabled=false");
    }

    @AfterAll
    static void stop() {
        simulator.close();
    }

    @AfterEach
    void clearFaults() {
        simulator.clearFaults();
    }

    static String completion(int maxTokens, boolean stream) {
        return "{\"model\":\"" + simulator.servedModelName()
                + "\",\"prompt\":\"The capital of France is\",\"max_tokens\":"
                + maxTokens + ",\"ignore_eos\":true,\"stream\":" + stream
                + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    }

    record Judged(StreamWatch.Seen seen, TrafficJudge.Verdict verdict) {}

    /** Sends {@code body} to {@code /v1/completions} and watches the answer 16 bytes at a time, as a proxy would. */
    static Judged exchange(String body) throws InterruptedException {
        Instant started = Instant.now();
        HttpResponse<InputStream> response;
        try {
            response = HTTP.send(
                    HttpRequest.newBuilder(URI.create(simulator.engineUrl() + "/v1/completions"))
                            .header("Content-Type", "application/json")
                            .timeout(Duration.ofSeconds(10))
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException ex) {
            return judged(null, StreamWatch.Seen.nothing(Body.OTHER), ExchangeEnding.ENGINE_CLOSED, started);
        }
        String type = response.headers().firstValue("Content-Type").orElse("");
        Body kind = type.startsWith("text/event-stream")
                ? Body.EVENT_STREAM
                : type.startsWith("application/json") ? Body.JSON : Body.OTHER;
        StreamWatch watch = new StreamWatch(kind, StreamWatch.DEFAULT_MAX_EVENT_BYTES, List.of());
        ExchangeEnding ending = ExchangeEnding.COMPLETED;
        try (InputStream in = response.body()) {
            byte[] buffer = new byte[16];
            int read;
            while ((read = in.read(buffer)) >= 0) {
                watch.feed(Unpooled.wrappedBuffer(buffer, 0, read), Instant.now());
            }
        } catch (IOException ex) {
            ending = ExchangeEnding.ENGINE_CLOSED;
        }
        return judged(response.statusCode(), watch.finish(Instant.now()), ending, started);
    }

    static Judged judged(Integer status, StreamWatch.Seen seen, ExchangeEnding ending, Instant started) {
        TrafficJudge.Exchange exchange = new TrafficJudge.Exchange(
                TrafficJudge.Kind.GENERATION, status, false, seen, ending, started, Instant.now());
        return new Judged(seen, TrafficJudge.judge(exchange));
    }

    @Test
    void judgeWhenTheStreamIsHealthyIsASuccessThatProvesGeneration() throws Exception {
        Judged judged = exchange(completion(6, true));
        assertThat(judged.verdict().outcome()).isEqualTo(TrafficOutcome.SUCCESS);
        assertThat(judged.verdict().provesGeneration()).isTrue();
        assertThat(judged.seen().tokenEvents()).isEqualTo(6);
        assertThat(judged.seen().completionTokens()).isEqualTo(6);
        assertThat(judged.seen().done()).isTrue();
        assertThat(judged.seen().firstTokenAt()).isNotNull();
    }

    @Test
    void judgeWhenTheBodyIsHealthyIsASuccessWithItsUsage() throws Exception {
        Judged judged = exchange(completion(4, false));
        assertThat(judged.verdict().outcome()).isEqualTo(TrafficOutcome.SUCCESS);
        assertThat(judged.seen().body()).isEqualTo(Body.JSON);
        assertThat(judged.seen().completionTokens()).isEqualTo(4);
    }

    @Test
    void judgeWhenGenerationFailsInsideA200StreamIsAnErrorEvent() throws Exception {
        simulator.fault(Fault.GENERATION_FAILS);
        Judged judged = exchange(completion(6, true));
        assertThat(judged.verdict().outcome()).isEqualTo(TrafficOutcome.ERROR_EVENT);
        assertThat(judged.seen().errorCode()).isEqualTo(500);
        assertThat(judged.verdict().detail())
                .startsWith("error event in a 200 stream")
                .contains("EngineCore encountered an issue");
    }

    @Test
    void judgeWhenGenerationFailsWithoutAStreamIsTheEnginesStatus() throws Exception {
        simulator.fault(Fault.GENERATION_FAILS);
        Judged judged = exchange(completion(4, false));
        assertThat(judged.verdict().outcome()).isEqualTo(TrafficOutcome.ENGINE_STATUS);
        assertThat(judged.verdict().detail()).startsWith("HTTP 500: EngineCore encountered an issue");
    }

    @Test
    void judgeWhenTheStreamIsCutIsTruncated() throws Exception {
        simulator.fault(Fault.TRUNCATED_SSE);
        assertThat(exchange(completion(6, true)).verdict().outcome()).isEqualTo(TrafficOutcome.TRUNCATED_STREAM);
    }

    @Test
    void judgeWhenAnEventIsNotJsonIsMalformed() throws Exception {
        simulator.fault(Fault.MALFORMED_JSON);
        assertThat(exchange(completion(6, true)).verdict().outcome()).isEqualTo(TrafficOutcome.MALFORMED);
    }

    @Test
    void judgeWhenTheClientAsksForNothingIsTheClientsError() throws Exception {
        Judged judged = exchange(completion(0, true));
        assertThat(judged.verdict().outcome()).isEqualTo(TrafficOutcome.CLIENT_ERROR);
        assertThat(judged.verdict().detail()).startsWith("HTTP 400: max_tokens must be at least 1");
    }
}
