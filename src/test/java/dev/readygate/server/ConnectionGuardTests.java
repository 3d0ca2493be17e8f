package dev.readygate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The connection cap on Netty's embedded channels: which connection makes room for a new one. The requests are
 * decoded already (the guard's request counter sits after the HTTP codec).
 */
class ConnectionGuardTests {

    static final int CAP = 8;

    final AtomicLong nanos = new AtomicLong();
    final ConnectionGuard guard = new ConnectionGuard(CAP, nanos::get, Clock.systemUTC());
    final List<EmbeddedChannel> channels = new ArrayList<>();

    /** A connection accepted after the one before it has had its first request's grace. */
    EmbeddedChannel connect() {
        return connect(ConnectionGuard.FIRST_REQUEST_GRACE.plusMillis(1));
    }

    EmbeddedChannel connect(Duration after) {
        nanos.addAndGet(after.toNanos());
        EmbeddedChannel channel = new EmbeddedChannel(guard, guard.requests());
        channels.add(channel);
        channels.forEach(EmbeddedChannel::runPendingTasks);
        return channel;
    }

    static void request(EmbeddedChannel channel) {
        channel.writeInbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/status"));
    }

    static FullHttpResponse answer(EmbeddedChannel channel) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        response.headers().set(HttpHeaderNames.CONTENT_LENGTH, 0);
        channel.writeOutbound(response);
        return channel.readOutbound();
    }

    @Test
    void theLeastRecentlyActiveIdleConnectionMakesRoom() {
        for (int i = 0; i < CAP; i++) {
            connect();
        }
        EmbeddedChannel newest = connect();
        assertThat(channels.getFirst().isOpen()).isFalse();
        assertThat(newest.isOpen()).isTrue();
        assertThat(guard.evicted()).isEqualTo(1);
        assertThat(guard.open()).isEqualTo(CAP);
    }

    @Test
    void aConnectionWhoseRequestWaitsForItsAnswerIsNeverClosed() {
        EmbeddedChannel waiting = connect();
        request(waiting);
        for (int i = 1; i < CAP; i++) {
            connect();
        }
        // The waiting connection is the least recently active: the next oldest makes room instead.
        connect();
        assertThat(waiting.isOpen()).isTrue();
        assertThat(channels.get(1).isOpen()).isFalse();
        assertThat(guard.waiting()).isEqualTo(1);
        // Answered, it is idle again: in its turn, it makes room too.
        answer(waiting);
        assertThat(guard.waiting()).isZero();
        for (int i = 0; i < CAP; i++) {
            connect();
        }
        assertThat(waiting.isOpen()).isFalse();
    }

    @Test
    void aConnectionWhoseRequestArrivesBeforeItIsClosedStays() {
        EmbeddedChannel chosen = connect();
        for (int i = 1; i < CAP; i++) {
            connect();
        }
        // Chosen to make room, but its loop reads a request before it closes it.
        nanos.addAndGet(ConnectionGuard.FIRST_REQUEST_GRACE.plusMillis(1).toNanos());
        EmbeddedChannel newest = new EmbeddedChannel(guard, guard.requests());
        request(chosen);
        chosen.runPendingTasks();
        assertThat(chosen.isOpen()).isTrue();
        assertThat(guard.spared()).isEqualTo(1);
        assertThat(newest.isOpen()).isTrue();
    }

    @Test
    void whenEveryOtherConnectionWaitsTheNewOneIsHeldBeyondTheCap() {
        for (int i = 0; i < CAP; i++) {
            request(connect());
        }
        EmbeddedChannel probe = connect();
        assertThat(probe.isOpen()).isTrue();
        assertThat(channels).allMatch(EmbeddedChannel::isOpen);
        assertThat(guard.open()).isEqualTo(CAP + 1);
        assertThat(guard.evicted()).isZero();
    }

    @Test
    void atTheCapAnswersCloseTheirConnection() {
        EmbeddedChannel first = connect();
        request(first);
        assertThat(answer(first).headers().contains(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE, true))
                .isFalse();
        for (int i = 1; i < CAP; i++) {
            connect();
        }
        request(first);
        assertThat(answer(first).headers().contains(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE, true))
                .isTrue();
    }

    @Test
    void aProbeJustAcceptedIsNotClosedBeforeItsRequestIsRead() {
        // 500 pollers waiting for their answers (delayed 503s): the probe's new connection was the one idle
        // connection, and the next poller to connect closed it before its request was read (301 of 596 probes cut).
        for (int i = 0; i < CAP; i++) {
            request(connect());
        }
        EmbeddedChannel probe = connect();
        EmbeddedChannel poller = connect(Duration.ofMillis(5));
        assertThat(probe.isOpen()).isTrue();
        assertThat(poller.isOpen()).isTrue();
        assertThat(guard.evicted()).isZero();
        request(probe);
        assertThat(answer(probe).status()).isEqualTo(HttpResponseStatus.OK);
    }

    @Test
    void aConnectionThatSentNothingWithinItsGraceMakesRoom() {
        for (int i = 0; i < CAP - 1; i++) {
            request(connect());
        }
        EmbeddedChannel silent = connect();
        connect(ConnectionGuard.FIRST_REQUEST_GRACE.minusMillis(1));
        assertThat(silent.isOpen()).isTrue();
        connect(Duration.ofMillis(1));
        assertThat(silent.isOpen()).isFalse();
        assertThat(guard.evicted()).isEqualTo(1);
    }

    @Test
    void beyondTheAllowanceOfNewConnectionsTheOldestOfThemMakesRoom() {
        for (int i = 0; i < CAP; i++) {
            request(connect());
        }
        EmbeddedChannel first = connect();
        for (int i = 0; i < ConnectionGuard.FRESH_ALLOWANCE; i++) {
            connect(Duration.ofNanos(1_000));
        }
        assertThat(first.isOpen()).isTrue();
        connect(Duration.ofNanos(1_000));
        assertThat(first.isOpen()).isFalse();
        assertThat(guard.open()).isEqualTo(CAP + ConnectionGuard.FRESH_ALLOWANCE + 1);
    }
}
