package dev.readygate.support;

import static org.awaitility.Awaitility.await;

import dev.readygate.ReadygateClients;
import dev.readygate.readiness.EngineState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * readygate's canary beside a {@link Trickle} of one-token requests to its engine: once the canary has a baseline
 * learned from an answer given alone, the trickle runs until the engine answered {@code requests} of them, and
 * readygate is watched meanwhile: every engine state change it made (from its own events, so none falls between two
 * polls) and the canary's report at each poll of {@code /status}.
 *
 * @param sent the trickle's requests the engine answered
 * @param outs the states readygate took the engine out with while the trickle ran
 * @param canaryDetails the canary reports' details seen while it ran
 */
public record CanaryBesideTrickle(int sent, List<EngineState> outs, Set<String> canaryDetails) {

    /**
     * Runs it; {@code within} bounds the wait for the baseline and the trickle's run alike.
     *
     * @param model the model the trickle's requests name
     */
    public static CanaryBesideTrickle watch(
            ConfigurableApplicationContext readygate, String engineUrl, String model, int requests, Duration within) {
        WebTestClient client = ReadygateClients.client(readygate);
        await().atMost(within)
                .until(() -> "learned_baseline"
                        .equals(ReadygateClients.status(client)
                                .at("/probes/canary/last/canary/expectedFrom")
                                .asString("")));
        StateChanges changes = new StateChanges();
        readygate.addApplicationListener(changes);
        Instant from = Instant.now();
        Set<String> canaries = new CopyOnWriteArraySet<>();
        try (Trickle trickle = Trickle.of(engineUrl, model, 1)) {
            await().atMost(within).pollInterval(Duration.ofMillis(50)).until(() -> {
                canaries.add(ReadygateClients.status(client)
                        .at("/probes/canary/last/detail")
                        .asString(""));
                return trickle.sent() >= requests;
            });
            return new CanaryBesideTrickle(trickle.sent(), changes.outs(from), Set.copyOf(canaries));
        }
    }
}
