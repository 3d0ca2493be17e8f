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
    void theAdminAndDaemonHealthPortsFollowTheEnginePortUnlessSet() {
        runner.withPropertyValues("readygate.simulator.port=19600").run(context -> {
            SimulatorProperties properties = context.getBean(SimulatorProperties.class);
            assertThat(properties.adminPort()).isEqualTo(19601);
            assertThat(properties.preload().healthPort()).isEqualTo(19602);
        });
        runner.withPropertyValues(
                        "readygate.simulator.port=19600",
                        "readygate.simulator.admin-port=20001",
                        "readygate.simulator.preload.health-port=0")
                .run(context -> {
                    SimulatorProperties properties = context.getBean(SimulatorProperties.class);
                    assertThat(properties.adminPort()).isEqualTo(20001);
                    assertThat(properties.preload().healthPort())
                            .as("0: no health port")
                            .isZero();
                });
        runner.run(context -> assertThat(
                        context.getBean(SimulatorProperties.class).preload().healthPort())
                .isEqualTo(18002));
    }

    @Test
    void aPortThatCannotFollowTheEnginePortFailsNamingTheKeyToSet() {
        runner.withPropertyValues("readygate.simulator.port=65535")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessage("readygate.simulator.admin-port defaults to readygate.simulator.port + 1, which is"
                                + " no TCP port for port 65535: set readygate.simulator.admin-port"));
        runner.withPropertyValues("readygate.simulator.port=19000", "readygate.simulator.preload.health-port=19001")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageStartingWith("readygate.simulator.preload.health-port must differ from"));
    }

    @Test
    void timeScaleMultipliesEverySimulatedDuration() {
        runner.withPropertyValues(
                        "readygate.simulator.time-scale=0.25",
                        "readygate.simulator.load-time=6s",
                        "readygate.simulator.timing.daemon-load-time=3s")
                .run(context -> {
                    SimulatorProperties properties = context.getBean(SimulatorProperties.class);
                    assertThat(properties.loadTime()).isEqualTo(Duration.ofMillis(1500));
                    assertThat(properties.timing().daemonLoadTime()).isEqualTo(Duration.ofMillis(750));
                    assertThat(properties.timing().decodePerToken()).isEqualTo(Duration.ofMillis(2));
                    assertThat(properties.timing().preloadHitLoadTime()).isEqualTo(Duration.ofMillis(200));
                    assertThat(properties.autoRestartDelay()).isEqualTo(Duration.ofMillis(250));
                    assertThat(properties.faults().crashLoopUptime()).isEqualTo(Duration.ofMillis(375));
                });
        runner.withPropertyValues("readygate.simulator.time-scale=0")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessage("readygate.simulator.time-scale must be a positive number (was 0.0)"));
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
    void sleepModeIsOffByDefaultAndRefusedWithOpenaiOnlyNamingBothKeys() {
        runner.run(
                context -> assertThat(context.getBean(SimulatorProperties.class).sleepMode())
                        .isFalse());
        runner.withPropertyValues("readygate.simulator.sleep-mode=true", "readygate.simulator.openai-only=true")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("readygate.simulator.sleep-mode")
                        .hasMessageContaining("readygate.simulator.openai-only=true"));
    }

    @Test
    void sglangIsRefusedWithWhatItDoesNotSimulateNamingTheKey() {
        runner.withPropertyValues("readygate.simulator.engine=sglang")
                .run(context -> assertThat(
                                context.getBean(SimulatorProperties.class).engine())
                        .isEqualTo(SimulatorProperties.Engine.SGLANG));
        runner.withPropertyValues("readygate.simulator.engine=sglang", "readygate.simulator.sleep-mode=true")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("readygate.simulator.engine=sglang")
                        .hasMessageContaining("readygate.simulator.sleep-mode=true"));
        runner.withPropertyValues("readygate.simulator.engine=sglang", "readygate.simulator.startup=snapshot-restore")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("readygate.simulator.startup=snapshot-restore"));
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

    @Test
    void tensorParallelSizeOutsideOneToEightFailsNamingTheKey() {
        for (String size : new String[] {"0", "9"}) {
            runner.withPropertyValues("readygate.simulator.deployment.tensor-parallel-size=" + size)
                    .run(context -> assertThat(context)
                            .hasFailed()
                            .getFailure()
                            .rootCause()
                            .hasMessage("readygate.simulator.deployment.tensor-parallel-size must be between 1 and 8"
                                    + " (was " + size + ")"));
        }
        runner.withPropertyValues("readygate.simulator.deployment.tensor-parallel-size=8")
                .run(context -> assertThat(context.getBean(SimulatorProperties.class)
                                .deployment()
                                .tensorParallelSize())
                        .isEqualTo(8));
    }
}
