package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.Reason;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class EngineStateAdmissionTests {

    private static final Instant NOW = Instant.parse("2026-12-03T14:00:00Z");

    @Test
    void decideWhenReadyAdmits() {
        assertThat(EngineStateAdmission.decide(new EngineState.Ready(NOW, "m"), "s1"))
                .isEqualTo(new Admission.Admitted("s1"));
    }

    @Test
    void decideWhenStartingRefusesNamingTheStateWithRetryAfter() {
        Admission admission = EngineStateAdmission.decide(new EngineState.Starting(NOW), null);

        assertThat(admission).isInstanceOfSatisfying(Admission.Refused.class, refused -> {
            assertThat(refused.retryAfterSeconds()).isEqualTo(1);
            assertThat(refused.error()).isEqualTo(OpenAiError.ENGINE_NOT_READY);
            assertThat(refused.message()).contains("starting");
        });
    }

    @Test
    void decideWhenDownRefusesNamingTheReason() {
        Admission admission =
                EngineStateAdmission.decide(new EngineState.Down(NOW, Reason.ENGINE_DOWN, "connection refused"), null);

        assertThat(admission)
                .isInstanceOfSatisfying(
                        Admission.Refused.class,
                        refused -> assertThat(refused.message()).contains(Reason.ENGINE_DOWN.value()));
    }

    @Test
    void retryAfterSecondsRoundsUpAndIsAtLeastOne() {
        assertThat(new Admission.Refused(Duration.ZERO, OpenAiError.ENGINE_NOT_READY, "m").retryAfterSeconds())
                .isEqualTo(1);
        assertThat(new Admission.Refused(Duration.ofMillis(2100), OpenAiError.ENGINE_NOT_READY, "m")
                        .retryAfterSeconds())
                .isEqualTo(3);
        assertThat(new Admission.Refused(Duration.ofSeconds(5), OpenAiError.ENGINE_NOT_READY, "m").retryAfterSeconds())
                .isEqualTo(5);
    }
}
