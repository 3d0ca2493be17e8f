package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class GatewayConfigurationTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withUserConfiguration(GatewayConfiguration.class);

    @Test
    void withoutTheSettingNothingOfTheGatewayExists() {
        runner.run(context -> assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean(TrafficServer.class)
                .doesNotHaveBean(TrafficResources.class)
                .doesNotHaveBean(TrafficAdmission.class));
    }

    @Test
    void withTheSettingOffNothingOfTheGatewayExists() {
        runner.withPropertyValues("readygate.gateway.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TrafficServer.class));
    }
}
