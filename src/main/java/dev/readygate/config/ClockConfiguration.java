package dev.readygate.config;

import java.time.Clock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The one {@link Clock} every feature takes its time from, and the one {@link Scheduler} their timers run on (delays,
 * timeouts, the GPU memory monitor's interval), so tests can move both.
 */
@Configuration(proxyBeanMethods = false)
class ClockConfiguration {

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    /** Reactor's shared parallel scheduler: not readygate's to dispose. */
    @Bean(destroyMethod = "")
    Scheduler timerScheduler() {
        return Schedulers.parallel();
    }
}
