package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.config.TokenBudgetConverter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.scheduler.Schedulers;

/**
 * Gateway mode is a switch read when the application starts, not a bean condition (the image's AOT-processed bean
 * definitions fixed every condition at build time): off, it opens nothing and starts no thread; on, it opens the
 * traffic port, and stopping closes the port and ends its threads.
 */
class GatewayModeSwitchTests {

    /** readygate's settings bound as at start, from {@code key=value} pairs (an engine URL given). */
    static ReadygateProperties properties(String... settings) {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("readygate.engine.base-url", "http://127.0.0.1:1");
        for (String setting : settings) {
            int eq = setting.indexOf('=');
            values.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        ApplicationConversionService conversion = new ApplicationConversionService();
        conversion.addConverter(new TokenBudgetConverter());
        return new Binder(List.of(new MapConfigurationPropertySource(values)), null, conversion)
                .bindOrCreate("readygate", ReadygateProperties.class);
    }

    private static GatewayMode mode(ReadygateProperties properties) {
        return mode(properties, Duration.ofSeconds(20));
    }

    /** @param shutdownPhase {@code spring.lifecycle.timeout-per-shutdown-phase} */
    private static GatewayMode mode(ReadygateProperties properties, Duration shutdownPhase) {
        Admission refused = new Admission.Refused(Duration.ofSeconds(1), OpenAiError.ENGINE_NOT_READY, "not ready");
        return new GatewayMode(
                properties,
                "127.0.0.1",
                new FixedAdmission(() -> refused),
                ExchangeEnds.NONE,
                new WorkInFlight(properties.gateway().enabled()),
                at -> {},
                shutdownPhase,
                Schedulers.parallel(),
                Clock.systemUTC(),
                TrafficEvents.NONE);
    }

    private static long gatewayThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && thread.getName().startsWith(TrafficResources.THREAD_PREFIX))
                .count();
    }

    @Test
    void startWhenDisabledOpensNothing() {
        GatewayMode mode = mode(properties());
        // Another test class's gateway may still be ending its threads: none may be added.
        long before = gatewayThreads();

        mode.start();

        assertThat(mode.isRunning()).isFalse();
        assertThat(mode.server()).isNull();
        assertThat(gatewayThreads()).isLessThanOrEqualTo(before);
    }

    @Test
    void startWhenEnabledOpensTheTrafficPortAndStopClosesItAndEndsItsThreads() throws IOException {
        GatewayMode mode = mode(properties("readygate.gateway.enabled=true", "readygate.gateway.port=0"));

        mode.start();
        int port = Objects.requireNonNull(mode.server()).port();
        WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + port)
                .build()
                .get()
                .uri("/v1/models")
                .exchange()
                .expectStatus()
                .isEqualTo(503);
        assertThat(gatewayThreads()).isPositive();
        mode.stop();

        assertThat(mode.isRunning()).isFalse();
        try (Socket socket = new Socket()) {
            assertThat(catchThrowable(() -> socket.connect(new InetSocketAddress("127.0.0.1", port), 2000)))
                    .isInstanceOf(java.net.ConnectException.class);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> gatewayThreads() == 0);
    }

    @Test
    void aDrainTimeoutThatDoesNotFitSpringsShutdownPhaseIsRefusedNamingBothSettings() {
        ReadygateProperties properties =
                properties("readygate.gateway.enabled=true", "readygate.gateway.drain-timeout=20s");

        assertThat(catchThrowable(() -> mode(properties, Duration.ofSeconds(20))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("readygate.gateway.drain-timeout (PT20S)")
                .hasMessageContaining("spring.lifecycle.timeout-per-shutdown-phase (PT20S)");
    }
}
