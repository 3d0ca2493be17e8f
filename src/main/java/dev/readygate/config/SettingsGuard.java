package dev.readygate.config;

import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Guards every start of the jar (readygate, and {@code simulate}) against settings it would otherwise ignore or
 * report in framework terms: an unknown {@code readygate.*} name stops the start naming the nearest known setting,
 * and a refused value is said by its key and as it was written. Registered in {@code META-INF/spring.factories}.
 *
 * <p>Unknown names from environment variables only earn a warning: the environment is shared with what readygate does
 * not own (Kubernetes adds {@code READYGATE_SERVICE_HOST}, {@code READYGATE_PORT}, ... for a Service named
 * {@code readygate}, and scripts export their own {@code READYGATE_*} variables).
 */
public final class SettingsGuard implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    private static final Log log = LogFactory.getLog(SettingsGuard.class);

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        SettingsMetadata metadata = SettingsMetadata.load(context.getClassLoader());
        List<UnknownSettings.Unknown> unknown =
                UnknownSettings.find(ConfigurationPropertySources.get(context.getEnvironment()), metadata);
        unknown.stream()
                .filter(UnknownSettings.Unknown::fromEnvironment)
                .forEach(variable -> log.warn(variable.problem() + " It is ignored."));
        List<String> fatal = unknown.stream()
                .filter(name -> !name.fromEnvironment())
                .map(UnknownSettings.Unknown::problem)
                .toList();
        if (!fatal.isEmpty()) {
            throw new InvalidSettingsException(fatal);
        }
        ConfigurationPropertiesBindHandlerAdvisor advisor = parent -> new SettingsBindHandler(parent, metadata);
        context.getBeanFactory().registerSingleton("readygateSettingsBindHandlerAdvisor", advisor);
    }
}
