package dev.readygate.config;

import dev.readygate.simulator.SimulatorProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * Starts readygate's configuration the way {@code java -jar readygate.jar} does: a real {@code SpringApplication}
 * that reads YAML files through Spring Boot's config data (so numbers arrive as Integer and Double, as from a real
 * file), command-line arguments and environment variables, and binds every {@code readygate.*} record. A start that
 * fails gives what Spring Boot would print as the failure's description, from the same failure analyzers.
 */
public final class SettingsStart {

    /** readygate's settings and the simulator's, and nothing else of either application. */
    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties({ReadygateProperties.class, SimulatorProperties.class})
    @Import(TokenBudgetConverter.class)
    static class Settings {}

    /** What a start gave: the bound settings, or the failure report's description. */
    public sealed interface Outcome {
        record Started(ReadygateProperties readygate, SimulatorProperties simulator) implements Outcome {}

        record Failed(String description, @Nullable String action, Throwable failure) implements Outcome {}

        default Started started() {
            if (this instanceof Failed failed) {
                throw new AssertionError("expected a start, got: " + failed.description(), failed.failure());
            }
            return (Started) this;
        }

        default Failed failed() {
            if (this instanceof Started started) {
                throw new AssertionError("expected a failed start, got " + started);
            }
            return (Failed) this;
        }
    }

    private final List<String> args = new ArrayList<>();
    private final Map<String, Object> environment = new LinkedHashMap<>();
    private final List<String> configLocations = new ArrayList<>();
    private final List<String> profiles = new ArrayList<>();
    private boolean defaultEngine = true;

    private SettingsStart() {}

    public static SettingsStart settings() {
        return new SettingsStart();
    }

    /** Command-line arguments, as typed ({@code --readygate.probe.ready-interval=2s}). */
    public SettingsStart args(String... arguments) {
        args.addAll(List.of(arguments));
        return this;
    }

    /** The process's environment variables (replacing the real ones). */
    public SettingsStart env(String name, String value) {
        environment.put(name, value);
        return this;
    }

    /** An application.yaml with this text, in {@code directory}. */
    public SettingsStart yaml(Path directory, String yaml) {
        try {
            Path file = Files.createTempFile(directory, "application-", ".yaml");
            Files.writeString(file, yaml);
            return location("file:" + file);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** An application.yaml with this text, in a temporary directory. */
    public SettingsStart yaml(String yaml) {
        try {
            Path directory = Files.createTempDirectory("readygate-settings-");
            directory.toFile().deleteOnExit();
            Path file = Files.createTempFile(directory, "application-", ".yaml");
            file.toFile().deleteOnExit();
            Files.writeString(file, yaml);
            return location("file:" + file);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A configuration file Spring Boot reads as it would read {@code spring.config.location}. */
    public SettingsStart location(String location) {
        configLocations.add(location);
        return this;
    }

    public SettingsStart profiles(String... active) {
        profiles.addAll(List.of(active));
        return this;
    }

    /**
     * Without an engine: by default a start that names no {@code readygate.engine.base-url} gets the README's
     * ({@code http://127.0.0.1:8000}, as its command passes it), at the lowest precedence.
     */
    public SettingsStart withoutDefaultEngine() {
        defaultEngine = false;
        return this;
    }

    public Outcome start() {
        SpringApplicationBuilder builder = new SpringApplicationBuilder(Settings.class)
                .web(WebApplicationType.NONE)
                .bannerMode(Banner.Mode.OFF)
                .logStartupInfo(false)
                .environment(new ProcessEnvironment(environment));
        Map<String, Object> defaults = new LinkedHashMap<>();
        if (defaultEngine) {
            defaults.put("readygate.engine.base-url", "http://127.0.0.1:8000");
        }
        // Only the files given: not the test classpath's application.yaml, nor ./config/ of the working directory.
        defaults.put(
                "spring.config.location",
                configLocations.isEmpty()
                        ? "optional:classpath:/no-such-file.yaml"
                        : String.join(",", configLocations));
        // A start here fails on purpose, and its refusal is read from the failure (analyze): Spring Boot's ERROR report
        // of it would only read as a failure in a run that passes. Set per start, this level goes with the logging
        // system's reset at the next start; the tests that check the printed report start readygate as the jar does.
        defaults.put("logging.level.org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter", "off");
        builder.properties(defaults);
        if (!profiles.isEmpty()) {
            builder.profiles(profiles.toArray(String[]::new));
        }
        try (ConfigurableApplicationContext context = builder.run(args.toArray(String[]::new))) {
            return new Outcome.Started(
                    context.getBean(ReadygateProperties.class), context.getBean(SimulatorProperties.class));
        } catch (RuntimeException ex) {
            return analyze(ex);
        }
    }

    /** What Spring Boot's failure report would say: the first analysis of the analyzers it loads, in its order. */
    static Outcome.Failed analyze(Throwable failure) {
        SpringFactoriesLoader.ArgumentResolver arguments = SpringFactoriesLoader.ArgumentResolver.of(
                        BeanFactory.class, new DefaultListableBeanFactory())
                .and(Environment.class, new StandardEnvironment());
        for (FailureAnalyzer analyzer : SpringFactoriesLoader.forDefaultResourceLocation()
                .load(
                        FailureAnalyzer.class,
                        arguments,
                        SpringFactoriesLoader.FailureHandler.logging(
                                org.apache.commons.logging.LogFactory.getLog(SettingsStart.class)))) {
            FailureAnalysis analysis = analyzer.analyze(failure);
            if (analysis != null) {
                return new Outcome.Failed(analysis.getDescription(), analysis.getAction(), failure);
            }
        }
        return new Outcome.Failed(Objects.toString(failure.getMessage()), null, failure);
    }

    /** An environment whose variables are the given ones, not the test JVM's. */
    private static final class ProcessEnvironment extends StandardEnvironment {

        ProcessEnvironment(Map<String, Object> variables) {
            MutablePropertySources sources = getPropertySources();
            sources.replace(
                    SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                    new SystemEnvironmentPropertySource(SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
        }
    }
}
