package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.config.TokenBudgetConverter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** {@link EngineClientConfiguration} builds the key and the client from {@code readygate.engine.*}, or fails at start. */
class EngineClientConfigurationTests {

    @TempDir
    Path dir;

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(Properties.class, TokenBudgetConverter.class, EngineClientConfiguration.class)
            .withBean(java.time.Clock.class, java.time.Clock::systemUTC)
            .withPropertyValues("readygate.engine.base-url=http://127.0.0.1:8000");

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(ReadygateProperties.class)
    static class Properties {}

    @Test
    void contextWhenEngineIsConfiguredHasTheClientAndNoKey() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(WebClientEngineClient.class).hasSingleBean(EngineClient.class);
            assertThat(context.getBean(EngineApiKey.class).isPresent()).isFalse();
            assertThat(context).hasBean(EngineClientConfiguration.TIMEOUT_SCHEDULER);
        });
    }

    @Test
    void contextWhenApiKeyFileIsSetReadsTheKey() throws IOException {
        Path file = Files.writeString(dir.resolve("api-key"), "sk-from-file\n");

        runner.withPropertyValues("readygate.engine.api-key-file=" + file)
                .run(context -> assertThat(context.getBean(EngineApiKey.class).isPresent())
                        .isTrue());
    }

    @Test
    void contextWhenApiKeyFileIsMissingFailsNamingTheKey() {
        Path missing = dir.resolve("missing");

        runner.withPropertyValues("readygate.engine.api-key-file=" + missing)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("readygate.engine.api-key-file")
                        .hasMessageContaining(missing.toString()));
    }
}
