package dev.readygate.statedir;

import dev.readygate.config.ReadygateProperties;
import java.time.Clock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The state directory, opened (and locked) once, before anything reads or writes it. */
@Configuration(proxyBeanMethods = false)
public class StateDirConfiguration {

    @Bean(destroyMethod = "close")
    StateDir stateDir(ReadygateProperties properties, Clock clock) {
        return new StateDir(properties.stateDir(), clock);
    }
}
