package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;

/**
 * The image's AOT cache training run goes through the web server's start and the kubelet's first requests, with no
 * engine to reach, and ends by itself.
 */
class AotTrainingTests {

    @TempDir
    Path stateDir;

    @Test
    void aTrainingRunServesTheProbesWithNoEngineThenClosesTheSidecar() {
        SpringApplication application = new SpringApplication(ReadygateApplication.class);
        ConfigurableApplicationContext[] started = new ConfigurableApplicationContext[1];
        boolean[] closed = new boolean[1];
        application.addListeners(
                (ApplicationListener<ApplicationReadyEvent>) ready -> started[0] = ready.getApplicationContext(),
                (ApplicationListener<ContextClosedEvent>) close -> closed[0] = true);

        AotTraining.Result result = AotTraining.run(application, new String[] {
            // As the Dockerfile's training run: nothing listens there.
            "--readygate.engine.base-url=http://127.0.0.1:1", "--readygate.state-dir=" + stateDir, "--server.port=0"
        });

        assertThat(result.exitCode()).isZero();
        // The server answered: /livez never depends on the engine, /readyz says the engine cannot serve.
        assertThat(result.answers()).containsEntry("/livez", 200).containsEntry("/readyz", 503);
        assertThat(started[0]).isNotNull();
        assertThat(closed[0]).isTrue();
        assertThat(started[0].isActive()).isFalse();
    }
}
