package dev.readygate.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The budget of heavy requests: beyond it, 503 with Retry-After after the rejection delay; the probes never counted or
 * turned away.
 */
class HeavyRequestLimitTests {

    final VirtualTimeScheduler timer = VirtualTimeScheduler.create();
    final HeavyRequestLimit limit = new HeavyRequestLimit(2, timer);
    final Sinks.Empty<Void> answered = Sinks.empty();
    /** A handler still writing its answer until {@link #answered} completes. */
    final WebFilterChain slow = exchange -> answered.asMono();

    static MockServerWebExchange get(String path) {
        return MockServerWebExchange.from(MockServerHttpRequest.get(path));
    }

    @Test
    void beyondTheBudgetAStatusRequestIsAnswered503WithRetryAfter() {
        Disposable first = limit.filter(get("/status"), slow).subscribe();
        Disposable second = limit.filter(get("/status/restarts.json"), slow).subscribe();
        MockServerWebExchange third = get("/status");
        Disposable rejection = limit.filter(third, slow).subscribe();
        timer.advanceTimeBy(HeavyRequestLimit.REJECTION_DELAY);
        assertThat(rejection.isDisposed()).isTrue();
        assertThat(third.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(third.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(third.getResponse().getBodyAsString().block()).contains("readygate.server.max-heavy-requests");
        assertThat(limit.rejected(HeavyEndpoint.STATUS)).isEqualTo(1);
        assertThat(limit.answering(HeavyEndpoint.STATUS)).isEqualTo(2);
        // Scrapes and probes have budgets of their own, or none.
        MockServerWebExchange scrape = get("/actuator/prometheus");
        limit.filter(scrape, exchange -> Mono.empty()).block();
        assertThat(scrape.getResponse().getStatusCode()).isNull();
        for (String probe : new String[] {"/readyz", "/livez", "/readyz", "/livez"}) {
            MockServerWebExchange exchange = get(probe);
            limit.filter(exchange, e -> Mono.empty()).block();
            assertThat(exchange.getResponse().getStatusCode()).isNull();
        }
        // Answered (or cancelled), their places are free again.
        answered.tryEmitEmpty();
        second.dispose();
        assertThat(limit.answering(HeavyEndpoint.STATUS)).isZero();
        MockServerWebExchange again = get("/status");
        limit.filter(again, exchange -> Mono.empty()).block();
        assertThat(again.getResponse().getStatusCode()).isNull();
        first.dispose();
    }

    @Test
    void aClientThatIgnoresRetryAfterGetsItsRejectionOnlyAfterTheDelay() {
        // 500 pollers looping on their 503s, answered at once, left the event loops no time for the probes.
        limit.filter(get("/status"), slow).subscribe();
        limit.filter(get("/status"), slow).subscribe();
        MockServerWebExchange over = get("/status/restarts.csv");
        Disposable rejection = limit.filter(over, slow).subscribe();
        assertThat(limit.rejected(HeavyEndpoint.STATUS)).isEqualTo(1);

        timer.advanceTimeBy(HeavyRequestLimit.REJECTION_DELAY.minusMillis(1));
        assertThat(rejection.isDisposed()).isFalse();
        assertThat(over.getResponse().isCommitted()).isFalse();
        assertThat(limit.answering(HeavyEndpoint.STATUS)).isEqualTo(2);

        timer.advanceTimeBy(Duration.ofMillis(1));
        assertThat(rejection.isDisposed()).isTrue();
        assertThat(over.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        answered.tryEmitEmpty();
    }
}
