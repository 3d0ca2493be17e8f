package dev.readygate.demo;

import org.springframework.aot.AotDetector;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.context.ApplicationListener;

/**
 * With the demo profile active, readygate's context is built at run time even where the JVM runs with
 * {@code -Dspring.aot.enabled=true} (the image does): the build's AOT processing ran without the profile, so the bean
 * definitions it generated hold neither {@link DemoConfiguration} nor the simulator. Decided once the environment
 * knows its profiles, before the context is created.
 */
public final class DemoBuiltAtRunTime implements ApplicationListener<ApplicationEnvironmentPreparedEvent> {

    @Override
    public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
        if (event.getEnvironment().matchesProfiles(DemoConfiguration.PROFILE)) {
            System.setProperty(AotDetector.AOT_ENABLED, "false");
        }
    }
}
