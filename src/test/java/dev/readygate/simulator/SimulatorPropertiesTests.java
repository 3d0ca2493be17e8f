package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

class SimulatorPropertiesTests {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(SimulatorProperties.class)
    static class Config {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Config.class);

    @Test
    void defaultsBind() {
        runner.run(context -> {
            SimulatorProperties properties = context.getBean(SimulatorProperties.class);
            assertThat(properties.port()).isEqualTo(18000);
            assertThat(properties.adminPort()).isEqualTo(18001);
            assertThat(properties.startup()).isEqualTo(StartupPath.COLD);
            assertThat(properties.loadTime()).isEqualTo(Duration.ofSeconds(3));
            assertThat(properties.model().maxModelLen()).isEqualTo(4096);
            assertThat(properties.preload().socketNaming())
                    .isEqualTo(SimulatorProperties.Preload.SocketNaming.GPU_INDEX);
            assertThat(properties.errorShape()).isEqualTo(SimulatorProperties.ErrorShape.NESTED);
        });
    }

    @Test
    void startupPathBindsFromItsKebabName() {
        runner.withPropertyValues("readygate.simulator.startup=snapshot-restore")
                .run(context -> assertThat(
                                context.getBean(SimulatorProperties.class).startup())
                        .isEqualTo(StartupPath.SNAPSHOT_RESTORE));
    }

    @Test
    void samePortTwiceFailsNamingBothKeys() {
        runner.withPropertyValues("readygate.simulator.port=19000", "readygate.simulator.admin-port=19000")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining(
                                "readygate.simulator.port must differ from readygate.simulator.admin-port"));
    }

    @Test
    void kvCacheSmallerThanTheContextFailsNamingTheKeys() {
        runner.withPropertyValues("readygate.simulator.model.kv-cache-size-tokens=1024")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("readygate.simulator.model.kv-cache-size-tokens must be at least"
                                + " readygate.simulator.model.max-model-len, or vLLM refuses to start (was 1024)"));
    }

    @Test
    void negativeDurationsFailNamingTheKey() {
        runner.withPropertyValues("readygate.simulator.timing.decode-per-token=-1ms")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("readygate.simulator.timing.decode-per-token must not be negative"));
    }
}
