package dev.readygate.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Keeps the Prometheus exposition clean for {@code promtool check metrics}: the few meters that Micrometer and Spring
 * Boot register against Prometheus's conventions are described, renamed or replaced. readygate's own meters follow
 * the conventions already ({@link MeterNames}).
 */
@Configuration(proxyBeanMethods = false)
class ExpositionConfiguration {

    /** Help text for Spring Boot's HTTP server meters, which have none. */
    private static final Map<String, String> DESCRIPTIONS = Map.of(
            "http.server.requests", "HTTP requests readygate served (the kubelet's probes, scrapes, /status)",
            "http.server.requests.active", "HTTP requests readygate is serving now");

    @Bean
    MeterFilter prometheusConventions() {
        return new MeterFilter() {
            @Override
            public MeterFilterReply accept(Meter.Id id) {
                // Counted in ms and ns, which Prometheus wants in seconds: JIT time is of no use here, and the
                // process's CPU time is exported in seconds instead (processCpuSeconds).
                return id.getName().equals("jvm.compilation.time")
                                || id.getName().equals("process.cpu.time")
                        ? MeterFilterReply.DENY
                        : MeterFilterReply.NEUTRAL;
            }

            @Override
            public Meter.Id map(Meter.Id id) {
                if (id.getName().equals("system.cpu.count")) {
                    // A gauge named *_count reads as a histogram's count.
                    return id.withName("system.cpus");
                }
                String description = DESCRIPTIONS.get(id.getName());
                if (description != null && id.getDescription() == null) {
                    return new Meter.Id(
                            id.getName(), Tags.of(id.getTagsAsIterable()), id.getBaseUnit(), description, id.getType());
                }
                return id;
            }
        };
    }

    /** {@code process_cpu_seconds_total}, the CPU time of readygate's JVM (Prometheus's usual name for it). */
    @Bean
    MeterBinder processCpuSeconds() {
        return registry -> {
            if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
                FunctionCounter.builder("process.cpu", os, bean -> bean.getProcessCpuTime() / 1e9)
                        .description("CPU time used by readygate's JVM")
                        .baseUnit("seconds")
                        .register(registry);
            }
        };
    }
}
