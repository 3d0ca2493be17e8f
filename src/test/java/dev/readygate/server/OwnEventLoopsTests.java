package dev.readygate.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.ReadygateApplication;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * readygate's server runs on event loops of its own, not Reactor Netty's global ones: Spring Boot's web server takes its
 * loops from the resource factory whatever a server customizer chose, and Boot's default factory disposes the global
 * loops when its context closes. Found with two readygates in one JVM (the benchmark's surge rollout): the old one's
 * stop closed the new one's port.
 */
class OwnEventLoopsTests {

    @TempDir
    Path stateDir;

    private ConfigurableApplicationContext readygate(String name) {
        return new SpringApplicationBuilder(ReadygateApplication.class)
                .run(
                        "--server.port=0",
                        "--readygate.engine.base-url=http://127.0.0.1:1",
                        "--readygate.state-dir=" + stateDir.resolve(name));
    }

    @Test
    void aReadygateThatStopsLeavesAnotherInTheSameJvmServing() {
        try (ConfigurableApplicationContext staying = readygate("staying")) {
            ConfigurableApplicationContext leaving = readygate("leaving");
            WebTestClient client = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:"
                            + ((WebServerApplicationContext) staying)
                                    .getWebServer()
                                    .getPort())
                    .build();
            client.get().uri("/livez").exchange().expectStatus().isOk();

            leaving.close();

            client.get().uri("/livez").exchange().expectStatus().isOk();
            assertThat(staying.getBean(org.springframework.http.client.ReactorResourceFactory.class)
                            .isUseGlobalResources())
                    .isFalse();
        }
    }
}
