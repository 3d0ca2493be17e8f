package dev.readygate.demo;

import dev.readygate.simulator.SimulatorConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Profile;

/**
 * The {@code demo} profile: readygate with the vLLM simulator embedded, so the whole restart story can be watched on
 * one machine. Beside the entry point's {@code simulate} command, the only place readygate's code touches the
 * simulator.
 */
@Configuration(proxyBeanMethods = false)
@Profile(DemoConfiguration.PROFILE)
@Import(SimulatorConfiguration.class)
public class DemoConfiguration {

    /** The profile's name: {@code --spring.profiles.active=demo}. */
    public static final String PROFILE = "demo";
}
