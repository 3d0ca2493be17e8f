package dev.readygate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;

/**
 * A request for {@code /status} while its budget is taken is answered 503 right after the HTTP codec, never handed on
 * to the application; anything else, or on a connection whose earlier request still waits, goes on. Netty's embedded
 * channels, with requests as the codec decodes them (the request line and headers, then the body's parts).
 */
class EarlyRejectionTests {

    final AtomicLong nanos = new AtomicLong();
    final HeavyRequestLimit limit = new HeavyRequestLimit(1);
    final Sinks.Empty<Void> answered = Sinks.empty();
    Disposable held;

    EmbeddedChannel connect(ConnectionGuard guard) {
        nanos.addAndGet(1_000_000);
        return new EmbeddedChannel(guard, new EarlyRejection(limit, guard), guard.requests());
    }

    ConnectionGuard guard(int cap) {
        return new ConnectionGuard(cap, nanos::get, Clock.systemUTC());
    }

    /** Takes the budget's one place with a {@code /status} request still being answered. */
    void takeTheBudget() {
        held = limit.filter(
                        MockServerWebExchange.from(MockServerHttpRequest.get("/status")), exchange -> answered.asMono())
                .subscribe();
        assertThat(limit.full(HeavyEndpoint.STATUS)).isTrue();
    }

    @AfterEach
    void release() {
        if (held != null) {
            held.dispose();
        }
    }

    static void get(EmbeddedChannel channel, String uri) {
        channel.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri));
        channel.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
    }

    /** What went on to the application: the request's URI, or null when nothing did. */
    static String handedOn(EmbeddedChannel channel) {
        Object first = channel.readInbound();
        if (first == null) {
            return null;
        }
        assertThat(channel.<Object>readInbound()).isInstanceOf(LastHttpContent.class);
        return ((HttpRequest) first).uri();
    }

    @Test
    void whileTheBudgetIsTakenAStatusRequestIsAnswered503BeforeTheApplication() {
        EmbeddedChannel channel = connect(guard(8));
        takeTheBudget();
        get(channel, "/status/restarts.json?limit=5");
        assertThat(handedOn(channel)).isNull();
        FullHttpResponse response = channel.readOutbound();
        assertThat(response.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(response.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
        assertThat(response.headers().get(HttpHeaderNames.CACHE_CONTROL)).isEqualTo("no-store");
        assertThat(response.headers().contains(HttpHeaderNames.CONNECTION)).isFalse();
        assertThat(response.content().toString(StandardCharsets.UTF_8))
                .isEqualTo(new String(limit.rejection(HeavyEndpoint.STATUS), StandardCharsets.UTF_8))
                .contains("readygate.server.max-heavy-requests");
        response.release();
        assertThat(limit.rejected(HeavyEndpoint.STATUS)).isEqualTo(1);
        // The connection stays; the probes, and the scrape with its own budget, go on.
        assertThat(channel.isOpen()).isTrue();
        for (String uri : new String[] {"/readyz", "/livez", "/actuator/prometheus", "/statusx"}) {
            get(channel, uri);
            assertThat(handedOn(channel)).isEqualTo(uri);
            channel.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
            channel.readOutbound();
        }
    }

    @Test
    void withRoomInTheBudgetAStatusRequestGoesOn() {
        EmbeddedChannel channel = connect(guard(8));
        get(channel, "/status");
        assertThat(handedOn(channel)).isEqualTo("/status");
        assertThat(channel.<Object>readOutbound()).isNull();
    }

    @Test
    void behindARequestStillWaitingForItsAnswerAStatusRequestGoesOn() {
        // Pipelined: an answer written here would overtake the earlier request's.
        EmbeddedChannel channel = connect(guard(8));
        get(channel, "/readyz");
        assertThat(handedOn(channel)).isEqualTo("/readyz");
        takeTheBudget();
        get(channel, "/status");
        assertThat(handedOn(channel)).isEqualTo("/status");
        assertThat(channel.<Object>readOutbound()).isNull();
    }

    @Test
    void theBodyOfARequestTurnedAwayIsDropped() {
        EmbeddedChannel channel = connect(guard(8));
        takeTheBudget();
        channel.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/status"));
        DefaultHttpContent part = new DefaultHttpContent(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8));
        channel.writeInbound(part);
        channel.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
        assertThat(handedOn(channel)).isNull();
        assertThat(part.refCnt()).isZero();
        ((FullHttpResponse) channel.readOutbound()).release();
        get(channel, "/readyz");
        assertThat(handedOn(channel)).isEqualTo("/readyz");
    }

    @Test
    void atTheConnectionCapTheAnswerClosesItsConnection() {
        EmbeddedChannel channel = connect(guard(1));
        takeTheBudget();
        channel.writeInbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/status"));
        FullHttpResponse response = channel.readOutbound();
        assertThat(response.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(response.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo("close");
        response.release();
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
    }
}
