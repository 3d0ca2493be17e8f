package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.restart.RestartPath;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import reactor.core.scheduler.Schedulers;

/**
 * {@code POST /gateway/drain}: the operator's announcement of an engine stop, from the pod itself only, and none while
 * gateway mode is off.
 */
class GatewayDrainControllerTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    final EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 3), T0, change -> {}, () -> "s1");
    final RulesAdmission admission = new RulesAdmission(
            machine,
            () -> RestartPath.COLD,
            List::of,
            new RulesAdmission.Limits(8, 8, Duration.ofSeconds(5), true, false),
            Schedulers.parallel(),
            Clock.fixed(T0, java.time.ZoneOffset.UTC),
            TrafficEvents.NONE);

    static ReadygateProperties properties(boolean enabled) {
        return GatewayModeSwitchTests.properties("readygate.gateway.enabled=" + enabled);
    }

    static MockServerHttpRequest from(String address) {
        return MockServerHttpRequest.post(GatewayDrainController.PATH)
                .remoteAddress(new InetSocketAddress(address, 40000))
                .build();
    }

    @Test
    void fromAnotherHostTheAnnouncementIsRefusedAndTheTrafficGoesOn() {
        machine.apply(new Observation.HealthOk(T0));
        machine.apply(new Observation.ModelListed(T0, "m"));
        machine.apply(new Observation.Verified(T0, "ok"));
        GatewayDrainController controller =
                new GatewayDrainController(admission, new WorkInFlight(true), properties(true), Schedulers.parallel());

        var answer = controller.announce(from("10.0.0.7")).block();

        assertThat(answer.getStatusCode().value()).isEqualTo(403);
        assertThat(admission.announcement()).isNull();
        assertThat(admission.admit().block()).isInstanceOf(Admission.Admitted.class);
    }

    @Test
    void fromThePodItselfNewRequestsWaitForTheNextStartAndTheAnswerSaysNothingIsInFlight() {
        machine.apply(new Observation.HealthOk(T0));
        machine.apply(new Observation.ModelListed(T0, "m"));
        machine.apply(new Observation.Verified(T0, "ok"));
        GatewayDrainController controller =
                new GatewayDrainController(admission, new WorkInFlight(true), properties(true), Schedulers.parallel());

        var answer = controller.announce(from("127.0.0.1")).block();

        assertThat(answer.getStatusCode().value()).isEqualTo(200);
        assertThat(answer.getBody()).containsEntry("drained", true).containsEntry("startId", "s1");
        assertThat(admission.announcement()).isNotNull();
        assertThat(admission.queued()).isZero();
        admission.admit().subscribe();
        assertThat(admission.queued())
                .as("a new request waits for the next start")
                .isOne();

        controller.withdraw(from("127.0.0.1"));

        assertThat(admission.queued()).as("withdrawn: it goes to the engine").isZero();
        assertThat(admission.inFlight()).isOne();
    }

    @Test
    void withGatewayModeOffThereIsNothingToAnnounce() {
        GatewayDrainController controller = new GatewayDrainController(
                admission, new WorkInFlight(false), properties(false), Schedulers.parallel());

        assertThat(controller
                        .announce(from("127.0.0.1"))
                        .block()
                        .getStatusCode()
                        .value())
                .isEqualTo(404);
    }
}
