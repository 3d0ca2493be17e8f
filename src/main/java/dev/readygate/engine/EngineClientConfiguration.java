package dev.readygate.engine;

import dev.readygate.config.ReadygateProperties;
import java.time.Clock;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Creates the engine client from {@code readygate.engine.*}: the API key (read once, here, at start) and the
 * {@link WebClientEngineClient}, whose call timeouts run on the {@code engineTimeoutScheduler}.
 */
@Configuration(proxyBeanMethods = false)
class EngineClientConfiguration {

    /** The name of the scheduler the engine client's timeouts run on. */
    public static final String TIMEOUT_SCHEDULER = "engineTimeoutScheduler";

    @Bean
    EngineApiKey engineApiKey(ReadygateProperties properties) {
        return EngineApiKey.load(properties.engine(), System::getenv);
    }

    /** Reactor's shared parallel scheduler: never disposed here, since others share it. */
    @Bean(name = TIMEOUT_SCHEDULER, destroyMethod = "")
    Scheduler engineTimeoutScheduler() {
        return Schedulers.parallel();
    }

    @Bean
    WebClientEngineClient engineClient(
            ReadygateProperties properties,
            EngineApiKey engineApiKey,
            @Qualifier(TIMEOUT_SCHEDULER) Scheduler engineTimeoutScheduler,
            Clock clock) {
        return new WebClientEngineClient(
                properties.engine(), engineApiKey, System::nanoTime, engineTimeoutScheduler, clock);
    }
}
