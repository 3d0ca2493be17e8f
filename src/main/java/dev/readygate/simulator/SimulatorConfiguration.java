package dev.readygate.simulator;

import java.time.Clock;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;

/**
 * Runs an {@link EngineSimulator} as part of a Spring application: standalone ({@link SimulatorLauncher}) or
 * embedded in readygate's demo profile.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SimulatorProperties.class)
public class SimulatorConfiguration {

    @Bean(destroyMethod = "close")
    EngineSimulator engineSimulator(SimulatorProperties properties, ObjectProvider<Clock> clock) {
        return new EngineSimulator(
                properties, clock.getIfAvailable(Clock::systemUTC), Schedulers.parallel(), System.out);
    }

    @Bean
    SmartLifecycle engineSimulatorLifecycle(EngineSimulator simulator) {
        return new SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                // Startup thread, not an event loop: waiting for the listeners to bind is fine here.
                simulator.start().block(Duration.ofSeconds(30));
                running = true;
            }

            @Override
            public void stop() {
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }

            @Override
            public int getPhase() {
                // Before the web server (which starts at DEFAULT_PHASE - 1024), so the engine exists first.
                return Integer.MIN_VALUE + 1000;
            }
        };
    }
}
