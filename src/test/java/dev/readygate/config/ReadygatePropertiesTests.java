package dev.readygate.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineDialect;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** readygate's configuration: defaults bind, and every bad value fails at start with a message naming its key. */
class ReadygatePropertiesTests {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(ReadygateProperties.class)
    @Import({TokenBudgetConverter.class, NvidiaSmiFormat.Binding.class})
    static class Config {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(Config.class)
            .withPropertyValues("readygate.engine.base-url=http://127.0.0.1:8000");

    @Test
    void defaultsBind() {
        runner.run(context -> {
            ReadygateProperties properties = context.getBean(ReadygateProperties.class);
            assertThat(properties.probe().notReadyInterval()).isEqualTo(Duration.ofMillis(100));
            assertThat(properties.probe().readyInterval()).isEqualTo(Duration.ofSeconds(1));
            assertThat(properties.probe().failureThreshold()).isEqualTo(3);
            assertThat(properties.probe().representative().promptTokens()).isEqualTo(new TokenBudget(512, null));
            assertThat(properties.probe().canary().prompt()).isEqualTo("The capital of France is");
            assertThat(properties.probe().canary().configured()).isFalse();
            assertThat(properties.engine().requestTimeout()).isEqualTo(Duration.ofMillis(800));
            assertThat(properties.server().idleTimeout()).isEqualTo(Duration.ofSeconds(60));
            assertThat(properties.server().maxConnections()).isEqualTo(256);
        });
    }

    @Test
    void promptTokensBindAsACountOrAFraction() {
        runner.withPropertyValues("readygate.probe.representative.prompt-tokens=0.25")
                .run(context -> assertThat(context.getBean(ReadygateProperties.class)
                                .probe()
                                .representative()
                                .promptTokens()
                                .resolve(4096))
                        .isEqualTo(1024));
        runner.withPropertyValues("readygate.probe.representative.prompt-tokens=50%")
                .run(context -> assertThat(context.getBean(ReadygateProperties.class)
                                .probe()
                                .representative()
                                .promptTokens()
                                .resolve(4096))
                        .isEqualTo(2048));
    }

    @Test
    void configuredCanaryExpectationBinds() {
        runner.withPropertyValues(
                        "readygate.probe.canary.expected-token-ids=12095",
                        "readygate.probe.canary.expected-text= Paris",
                        "readygate.probe.canary.expected-logprob=-0.4243")
                .run(context -> {
                    ReadygateProperties.Canary canary =
                            context.getBean(ReadygateProperties.class).probe().canary();
                    assertThat(canary.configured()).isTrue();
                    assertThat(canary.expectedTokenIds()).containsExactly(12095);
                    assertThat(canary.expectedLogprob()).isEqualTo(-0.4243);
                });
    }

    @Test
    void readinessObjectivesBindByRestartPathAsTheirMetricLabels() {
        runner.withPropertyValues(
                        "readygate.restart.readiness-objectives.cold=15m",
                        "readygate.restart.readiness-objectives.preload-hit=90s",
                        "readygate.restart.readiness-objectives[snapshot_restore]=1m")
                .run(context -> assertThat(context.getBean(ReadygateProperties.class)
                                .restart()
                                .readinessObjectives())
                        .containsExactlyInAnyOrderEntriesOf(Map.of(
                                "cold", Duration.ofMinutes(15),
                                "preload_hit", Duration.ofSeconds(90),
                                "snapshot_restore", Duration.ofMinutes(1))));
        runner.run(context -> assertThat(
                        context.getBean(ReadygateProperties.class).restart().readinessObjectives())
                .isEmpty());
    }

    @Test
    void engineDialectAndContextLengthBind() {
        runner.withPropertyValues("readygate.engine.dialect=llama.cpp", "readygate.engine.max-model-len=2048")
                .run(context -> {
                    ReadygateProperties.Engine engine =
                            context.getBean(ReadygateProperties.class).engine();
                    assertThat(engine.dialect()).isEqualTo("llama.cpp");
                    assertThat(engine.maxModelLen()).isEqualTo(2048);
                    assertThat(EngineDialect.setting(engine.dialect())).contains(EngineDialect.LLAMA_CPP);
                });
        runner.run(context -> assertThat(
                        context.getBean(ReadygateProperties.class).engine().dialect())
                .isEqualTo("auto"));
    }

    @Test
    void everyDialectNameTheConfigurationAcceptsIsOneTheEngineKnows() {
        for (String name : ReadygateProperties.Engine.DIALECTS) {
            assertThat(name.equals("auto") || EngineDialect.setting(name).isPresent())
                    .as(name)
                    .isTrue();
        }
        assertThat(ReadygateProperties.Engine.DIALECTS).hasSize(EngineDialect.values().length + 1);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "readygate.probe.representative.output-tokens=-1|readygate.probe.representative.output-tokens must be at least 1",
                "readygate.probe.failure-threshold=0|readygate.probe.failure-threshold must be at least 1",
                "readygate.probe.success-threshold=-2|readygate.probe.success-threshold must be at least 1",
                "readygate.probe.heavy-timeout=6m|readygate.probe.heavy-timeout must not be longer than its interval readygate.probe.heavy-interval (was PT6M)",
                "readygate.engine.request-timeout=5s|readygate.engine.request-timeout must not be longer than its interval readygate.probe.ready-interval (was PT5S)",
                "readygate.probe.not-ready-interval=0s|readygate.probe.not-ready-interval must be positive",
                "readygate.probe.down-interval=0s|readygate.probe.down-interval must be positive",
                "readygate.probe.health-interval=2s|readygate.probe.health-interval must not be longer than readygate.probe.ready-interval (was PT2S)",
                "readygate.probe.representative.prompt-tokens=1.5|a fraction of max_model_len must be between 0 and 1",
                "readygate.probe.representative.prompt-tokens=lots|not a token count or a fraction of max_model_len (was lots)",
                "readygate.probe.canary.logprob-tolerance=-1|readygate.probe.canary.logprob-tolerance must not be negative",
                "readygate.engine.base-url=localhost:8000|readygate.engine.base-url must be an http(s) URL with a host",
                "readygate.engine.max-body-size=10B|readygate.engine.max-body-size must be at least 1KB",
                "readygate.gpu.nvidia-smi-format=json|readygate.gpu.nvidia-smi-format must be csv or xml (was json)",
                "readygate.gpu.dcgm-url=dcgm:9400/metrics|readygate.gpu.dcgm-url must be an http(s) URL with a host",
                "readygate.memory.leak-cycles=1|readygate.memory.leak-cycles must be at least 2",
                "readygate.memory.window=2|readygate.memory.window must be at least readygate.memory.leak-cycles (was 2)",
                "readygate.memory.tolerance=0B|readygate.memory.tolerance must be positive",
                "readygate.memory.after-stop-delay=-1s|readygate.memory.after-stop-delay must not be negative",
                "readygate.memory.kv-shrink-fraction=1.5|readygate.memory.kv-shrink-fraction must be between 0 and 1",
                "readygate.restart.readiness-objectives.warm=1m|readygate.restart.readiness-objectives.warm is not a restart path",
                "readygate.restart.readiness-objectives.cold=0s|readygate.restart.readiness-objectives.cold must be positive",
                "readygate.engine.dialect=ollama|readygate.engine.dialect must be auto, vllm, llama-cpp, sglang, tgi or openai (was ollama)",
                "readygate.engine.max-model-len=0|readygate.engine.max-model-len must be at least 1",
                "readygate.check.wait-for-engine=-1s|readygate.check.wait-for-engine must not be negative",
                "readygate.server.idle-timeout=0s|readygate.server.idle-timeout must be positive",
                "readygate.server.max-connections=2|readygate.server.max-connections must be at least 8"
            })
    void badValueFailsAtStartNamingItsKey(String property, String message) {
        runner.withPropertyValues(property)
                .run(context ->
                        assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining(message));
    }
}
