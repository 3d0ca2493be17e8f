package dev.readygate.simulator;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * {@code java -jar readygate.jar simulate --readygate.simulator.port=18000 ...}: the simulator on its own, without
 * readygate. Only {@code readygate.simulator.*} settings are bound; the process runs until it is stopped.
 */
public final class SimulatorLauncher {

    /** The first command-line argument that selects the simulator. */
    public static final String COMMAND = "simulate";

    private SimulatorLauncher() {}

    public static void main(String[] args) {
        new SpringApplicationBuilder(SimulatorConfiguration.class)
                .web(WebApplicationType.NONE)
                .bannerMode(Banner.Mode.OFF)
                .properties("spring.main.keep-alive=true", "spring.config.name=simulator")
                .run(args);
    }
}
