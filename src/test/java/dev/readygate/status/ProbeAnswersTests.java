package dev.readygate.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.Reason;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.availability.ReadinessState;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ProbeAnswersTests {

    static final JsonMapper json = JsonMapper.builder().build();
    static final Instant T0 = Instant.parse("2026-12-05T06:00:00Z");

    final AtomicReference<EngineState> engine = new AtomicReference<>(new EngineState.Ready(T0, "m"));
    final AtomicReference<ReadinessState> readiness = new AtomicReference<>(ReadinessState.ACCEPTING_TRAFFIC);
    final AtomicReference<LivenessState> liveness = new AtomicReference<>(LivenessState.CORRECT);
    final ProbeAnswers answers = new ProbeAnswers(engine::get, readiness::get, liveness::get, json);

    @Test
    void readyEngineAndBootAcceptingIs200WithTheEngineComponent() {
        ProbeAnswers.Answer answer = answers.readiness();

        assertThat(answer.status()).isEqualTo(200);
        JsonNode body = json.readTree(answer.json());
        assertThat(body.path("status").asString()).isEqualTo("UP");
        assertThat(body.at("/components/engine/status").asString()).isEqualTo("UP");
        assertThat(body.at("/components/engine/details/state").asString()).isEqualTo("ready");
        assertThat(body.at("/components/engine/details/since").asString()).isEqualTo(T0.toString());
        assertThat(body.at("/components/readinessState/status").asString()).isEqualTo("UP");
    }

    @Test
    void theSameStatesGetTheSameBytesWithoutRenderingAgain() {
        byte[] first = answers.readiness().json();

        assertThat(answers.readiness().json()).isSameAs(first);
        // An equal state that is another object is rendered again, to the same body.
        engine.set(new EngineState.Ready(T0, "m"));
        byte[] again = answers.readiness().json();
        assertThat(again).isNotSameAs(first).isEqualTo(first);
    }

    @Test
    void aChangeOfEitherStateIsAnsweredAtOnce() {
        assertThat(answers.readiness().status()).isEqualTo(200);

        engine.set(new EngineState.Down(T0.plusSeconds(1), Reason.ENGINE_DEAD, "503 from /health"));
        ProbeAnswers.Answer down = answers.readiness();
        assertThat(down.status()).isEqualTo(503);
        JsonNode body = json.readTree(down.json());
        assertThat(body.path("status").asString()).isEqualTo("OUT_OF_SERVICE");
        assertThat(body.at("/components/engine/details/reason").asString()).isEqualTo("engine_dead");
        assertThat(body.at("/components/engine/details/detail").asString()).isEqualTo("503 from /health");

        // SIGTERM: Boot refuses traffic first, whatever the engine says.
        engine.set(new EngineState.Ready(T0.plusSeconds(2), "m"));
        readiness.set(ReadinessState.REFUSING_TRAFFIC);
        ProbeAnswers.Answer closing = answers.readiness();
        assertThat(closing.status()).isEqualTo(503);
        assertThat(json.readTree(closing.json())
                        .at("/components/readinessState/status")
                        .asString())
                .isEqualTo("OUT_OF_SERVICE");
        assertThat(json.readTree(closing.json()).at("/components/engine/status").asString())
                .isEqualTo("UP");
    }

    @Test
    void livenessNeverReadsTheEngine() {
        engine.set(new EngineState.Down(T0, Reason.ENGINE_DEAD, "gone"));
        assertThat(answers.liveness().status()).isEqualTo(200);
        assertThat(json.readTree(answers.liveness().json()).path("status").asString())
                .isEqualTo("UP");

        liveness.set(LivenessState.BROKEN);
        assertThat(answers.liveness().status()).isEqualTo(503);
        assertThat(json.readTree(answers.liveness().json()).path("status").asString())
                .isEqualTo("DOWN");
    }

    @Test
    void contentTypeIsActuatorsUnlessPlainJsonIsAsked() {
        assertThat(ProbeRoutes.contentType(null)).isEqualTo(ProbeRoutes.ACTUATOR_JSON);
        assertThat(ProbeRoutes.contentType("*/*")).isEqualTo(ProbeRoutes.ACTUATOR_JSON);
        assertThat(ProbeRoutes.contentType("application/json")).isEqualTo("application/json");
        assertThat(ProbeRoutes.contentType("application/vnd.spring-boot.actuator.v3+json, application/json"))
                .isEqualTo(ProbeRoutes.ACTUATOR_JSON);
    }

    @Test
    void theGatewaysReadinessIsItsTrafficPortOnceTheEngineWasVerified() {
        assertThat(ProbeAnswers.gateway(true, true, true).status()).isEqualTo(200);
        assertThat(body(ProbeAnswers.gateway(true, true, true))).isEqualTo("{\"status\":\"UP\"}");
        assertThat(ProbeAnswers.gateway(true, true, false).status()).isEqualTo(503);
        assertThat(body(ProbeAnswers.gateway(true, true, false))).contains("engine_never_verified");
        assertThat(ProbeAnswers.gateway(true, false, true).status()).isEqualTo(503);
        assertThat(body(ProbeAnswers.gateway(true, false, true))).contains("traffic_port_closed");
        assertThat(ProbeAnswers.gateway(false, true, true).status()).isEqualTo(503);
        assertThat(body(ProbeAnswers.gateway(false, false, false))).contains("gateway_off");
    }

    private static String body(ProbeAnswers.Answer answer) {
        return new String(answer.json(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
