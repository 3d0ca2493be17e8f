package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gateway.ExchangeEnding;
import dev.readygate.gateway.OpenAiError;
import dev.readygate.gateway.ProxiedExchange;
import dev.readygate.gateway.StreamWatch;
import dev.readygate.gateway.WorkInFlight;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class TrafficMetersTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final WorkInFlight work = new WorkInFlight(true);
    final TrafficMeters meters = new TrafficMeters(registry, () -> null, work);

    static ProxiedExchange exchange(
            @Nullable Integer engineStatus, StreamWatch.Body body, ExchangeEnding ending, @Nullable Duration ttft) {
        return new ProxiedExchange(
                "/v1/completions",
                "s1",
                engineStatus == null ? 502 : engineStatus,
                engineStatus,
                false,
                StreamWatch.Seen.nothing(body),
                ending,
                ttft,
                T0,
                T0.plusSeconds(1),
                false);
    }

    double requests(String outcome) {
        return registry.get(MeterNames.GATEWAY_REQUESTS)
                .tag("outcome", outcome)
                .counter()
                .count();
    }

    @Test
    void everyOutcomeIsThereAtZeroFromTheStartEachUnderItsOwnTag() {
        // Every ending, every refusal, and an attempt sent again.
        int outcomes = ExchangeEnding.values().length + OpenAiError.values().length + 1;
        assertThat(registry.get(MeterNames.GATEWAY_REQUESTS).counters())
                .hasSize(outcomes)
                .allSatisfy(counter -> assertThat(counter.count()).isZero());
        Set<String> tags = new HashSet<>();
        registry.get(MeterNames.GATEWAY_REQUESTS)
                .counters()
                .forEach(c -> tags.add(c.getId().getTag("outcome")));
        assertThat(tags)
                .hasSize(outcomes)
                .contains(
                        "completed",
                        "client_cancelled",
                        "stalled",
                        "not_ready",
                        "draining",
                        "saturated",
                        "too_large",
                        "route_not_proxied");
        assertThat(registry.get(MeterNames.GATEWAY_HELD).timers()).hasSize(2);
        assertThat(registry.get(MeterNames.GATEWAY_TTFT).timer().count()).isZero();
        assertThat(registry.get(MeterNames.GATEWAY_IN_FLIGHT).gauge().value()).isZero();
        assertThat(registry.get(MeterNames.GATEWAY_CONNECTIONS).gauge().value()).isZero();
        assertThat(registry.get(MeterNames.GATEWAY_CONNECTIONS_REFUSED)
                        .functionCounter()
                        .count())
                .isZero();
    }

    @Test
    void refusedCountsTheRefusalsOutcome() {
        meters.refused(OpenAiError.ENGINE_NOT_READY);
        meters.refused(OpenAiError.ENGINE_NOT_READY);
        meters.refused(OpenAiError.REQUEST_TOO_LARGE);

        assertThat(requests("not_ready")).isEqualTo(2);
        assertThat(requests("too_large")).isEqualTo(1);
        assertThat(Arrays.stream(OpenAiError.values()).map(TrafficMeters::refusal))
                .doesNotHaveDuplicates()
                .noneMatch(tag -> Arrays.stream(ExchangeEnding.values())
                        .anyMatch(ending -> ending.name().equalsIgnoreCase(tag)));
    }

    @Test
    void aForwardedRequestIsInFlightUntilItsClientHasItAllAndItsEndCountsItsEnding() {
        work.began("s1");
        work.began("s1");
        assertThat(registry.get(MeterNames.GATEWAY_IN_FLIGHT).gauge().value()).isEqualTo(2);

        meters.ended(exchange(200, StreamWatch.Body.EVENT_STREAM, ExchangeEnding.STALLED, Duration.ofMillis(30)));
        work.released();

        assertThat(registry.get(MeterNames.GATEWAY_IN_FLIGHT).gauge().value()).isEqualTo(1);
        assertThat(requests("stalled")).isEqualTo(1);
        assertThat(requests("completed")).isZero();
    }

    @Test
    void anAttemptSentAgainIsCountedApartFromWhatItsClientSaw() {
        ProxiedExchange refused = exchange(null, StreamWatch.Body.OTHER, ExchangeEnding.CONNECT_REFUSED, null);
        meters.ended(new ProxiedExchange(
                refused.path(),
                refused.startId(),
                0,
                null,
                false,
                refused.seen(),
                refused.ending(),
                null,
                refused.startedAt(),
                refused.endedAt(),
                true));

        assertThat(requests("sent_again")).isEqualTo(1);
        assertThat(requests("connect_refused")).isZero();
    }

    @Test
    void timeToFirstTokenIsAClientsOfA2xxStreamOnly() {
        for (ProxiedExchange exchange : List.of(
                exchange(200, StreamWatch.Body.EVENT_STREAM, ExchangeEnding.COMPLETED, Duration.ofMillis(40)),
                exchange(200, StreamWatch.Body.JSON, ExchangeEnding.COMPLETED, Duration.ofSeconds(3)),
                exchange(500, StreamWatch.Body.EVENT_STREAM, ExchangeEnding.COMPLETED, Duration.ofMillis(5)),
                exchange(null, StreamWatch.Body.OTHER, ExchangeEnding.CONNECT_REFUSED, null))) {
            meters.ended(exchange);
        }

        assertThat(registry.get(MeterNames.GATEWAY_TTFT).timer().count()).isEqualTo(1);
        assertThat(registry.get(MeterNames.GATEWAY_TTFT).timer().totalTime(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(40);
        assertThat(requests("completed")).isEqualTo(3);
        assertThat(requests("connect_refused")).isEqualTo(1);
    }

    @Test
    void heldRecordsTheTimeByWhatFollowed() {
        meters.held(Duration.ofSeconds(2), true);
        meters.held(Duration.ofSeconds(30), false);

        assertThat(registry.get(MeterNames.GATEWAY_HELD)
                        .tag("result", "forwarded")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get(MeterNames.GATEWAY_HELD)
                        .tag("result", "refused")
                        .timer()
                        .max(java.util.concurrent.TimeUnit.SECONDS))
                .isEqualTo(30);
    }
}
