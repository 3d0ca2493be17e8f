package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** The simulator's admin API: restarts, faults, daemon, log, state. */
class AdminApiTests {

    @TempDir
    Path workDir;

    RunningSimulator running;

    @BeforeEach
    void start() {
        running = RunningSimulator.serving(workDir);
    }

    @AfterEach
    void stop() {
        running.close();
    }

    JsonNode state() {
        return Sse.JSON.readTree(running.admin()
                .get()
                .uri("/admin/state")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult()
                .getResponseBody());
    }

    JsonNode post(String uri) {
        return Sse.JSON.readTree(running.admin()
                .post()
                .uri(uri)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult()
                .getResponseBody());
    }

    @Test
    void stateDescribesTheEngineTheDaemonTheSnapshotAndThePorts() {
        JsonNode state = state();
        assertThat(state.at("/engine/phase").asString()).isEqualTo("serving");
        assertThat(state.at("/engine/path").asString()).isEqualTo("cold");
        assertThat(state.at("/engine/start").intValue()).isEqualTo(1);
        assertThat(state.at("/engine/ableToServe").booleanValue()).isTrue();
        assertThat(state.at("/engine/ableToServeSince").asString())
                .isEqualTo(state.at("/engine/listeningSince").asString());
        assertThat(state.at("/engine/processStartTime").isString()).isTrue();
        assertThat(state.at("/engine/servedCheckpoint").asString()).isEqualTo("qwen3-0.6b-base");
        assertThat(state.at("/daemon/phase").asString()).isEqualTo("serving");
        assertThat(state.at("/daemon/checkpoint").asString()).isEqualTo("qwen3-0.6b-base");
        assertThat(state.at("/snapshot/oracleTokenIds").size()).isEqualTo(1);
        assertThat(state.at("/faults").isEmpty()).isTrue();
        assertThat(state.at("/ports/engine").intValue()).isEqualTo(running.properties.port());
    }

    @Test
    void restartAnswersAtOnceAndTheStateFollowsTheStart() {
        JsonNode answer = post("/admin/restart?path=preload-hit");
        assertThat(answer.at("/engine/phase").asString()).isEqualTo("loading");
        assertThat(answer.at("/engine/requestedPath").asString()).isEqualTo("preload-hit");
        assertThat(answer.at("/engine/listeningSince").isNull()).isTrue();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> state().at("/engine/phase").asString().equals("serving"));
        JsonNode state = state();
        assertThat(state.at("/engine/path").asString()).isEqualTo("preload-hit");
        assertThat(state.at("/engine/start").intValue()).isEqualTo(2);
    }

    @Test
    void faultsAreSwitchedOnAndOffWithTheirScope() {
        JsonNode on = post("/admin/fault?name=hang&scope=all");
        assertThat(on.at("/faults/0/name").asString()).isEqualTo("hang");
        assertThat(on.at("/faults/0/scope").asString()).isEqualTo("all");
        assertThat(on.at("/engine/ableToServe").booleanValue()).isFalse();
        JsonNode off = post("/admin/fault?name=hang&enabled=false");
        assertThat(off.at("/faults").isEmpty()).isTrue();
        assertThat(off.at("/engine/ableToServe").booleanValue()).isTrue();
        post("/admin/fault?name=slow");
        post("/admin/fault?name=truncate-prompt");
        assertThat(post("/admin/faults/clear").at("/faults").isEmpty()).isTrue();
    }

    @Test
    void badArgumentsAre400NamingWhatIsAccepted() {
        running.admin()
                .post()
                .uri("/admin/restart?path=warm")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.error")
                .value(
                        String.class,
                        message -> assertThat(message)
                                .contains("unknown startup path 'warm'")
                                .contains("snapshot-restore"));
        running.admin()
                .post()
                .uri("/admin/fault?name=melt")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.error")
                .value(String.class, message -> assertThat(message).contains("unknown fault 'melt'"));
        running.admin()
                .post()
                .uri("/admin/restart")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.error")
                .isEqualTo("query parameter 'path' is required");
        running.admin().get().uri("/admin/nothing").exchange().expectStatus().isNotFound();
    }

    @Test
    void crashAndStopCloseTheEngine() {
        JsonNode crashed = post("/admin/crash");
        assertThat(crashed.at("/engine/phase").asString()).isEqualTo("stopped");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> state().at("/engine/phase").asString().equals("serving"));
        JsonNode stopped = post("/admin/stop");
        assertThat(stopped.at("/engine/phase").asString()).isEqualTo("stopped");
    }

    @Test
    void daemonCanBeStoppedAndStartedWithAnotherCheckpoint() {
        assertThat(post("/admin/daemon?action=stop").at("/daemon/phase").asString())
                .isEqualTo("stopped");
        JsonNode started = post("/admin/daemon?action=start&checkpoint=other-step");
        assertThat(started.at("/daemon/phase").asString()).isEqualTo("loading");
        assertThat(started.at("/daemon/checkpoint").asString()).isEqualTo("other-step");
        await().atMost(Duration.ofSeconds(5))
                .until(() -> state().at("/daemon/phase").asString().equals("serving"));
    }

    @Test
    void logCanBeRotatedAndTruncatedLikeAShippedLogFile() {
        post("/admin/log?action=rotate");
        running.simulator.flushLogs();
        assertThat(workDir.resolve("engine.log.1")).exists().content().contains("Application startup complete.");
        assertThat(workDir.resolve("engine.log")).doesNotExist();
        post("/admin/restart?path=cold");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> running.engineLog().contains("Application startup complete."));
        post("/admin/log?action=truncate");
        assertThat(running.engineLog()).isEmpty();
    }
}
