package dev.readygate.config;

import java.io.IOException;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.boot.origin.TextResourceOrigin;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;

/**
 * A setting as the user wrote it: its text (what the file, the command line or the variable holds, before any
 * conversion: {@code -64MB}, never {@code -67108864B}) and where it was written.
 *
 * @param name the setting's name
 * @param text its value as written
 * @param where where it was written, in words: {@code set on the command line}, {@code set in
 *     /etc/readygate/application.yaml, line 4}, {@code set by the environment variable READYGATE_PROBE_...}
 * @param environmentVariable the variable's name when it came from the environment, else null
 */
record WrittenSetting(
        ConfigurationPropertyName name,
        String text,
        String where,
        @Nullable String environmentVariable) {

    /** The setting as the highest-precedence source holds it, or null where none does. */
    static @Nullable WrittenSetting find(
            ConfigurationPropertyName name, Iterable<ConfigurationPropertySource> sources) {
        for (ConfigurationPropertySource source : sources) {
            ConfigurationProperty property = source.getConfigurationProperty(name);
            if (property != null) {
                return of(property, source);
            }
        }
        return null;
    }

    static WrittenSetting of(ConfigurationProperty property, @Nullable ConfigurationPropertySource source) {
        Object underlying = source != null ? source.getUnderlyingSource() : null;
        PropertySource<?> propertySource = underlying instanceof PropertySource<?> found ? found : null;
        Origin origin = unwrap(property.getOrigin());
        String variable = origin instanceof SystemEnvironmentOrigin environment
                ? environment.getProperty()
                : propertySource instanceof SystemEnvironmentPropertySource ? variableOf(property.getName()) : null;
        return new WrittenSetting(
                property.getName(), String.valueOf(property.getValue()), where(origin, propertySource), variable);
    }

    /** The variable a name is read from, as Spring Boot maps it ({@code readygate.gpu.uuids[0]}: READYGATE_GPU_UUIDS_0_). */
    private static String variableOf(ConfigurationPropertyName name) {
        return name.toString()
                .replace("-", "")
                .replace("[", "_")
                .replace("]", "_")
                .replace('.', '_')
                .replace("__", "_")
                .toUpperCase(Locale.ROOT);
    }

    /** The origin a property source gave, inside the one naming the source (Boot 4 wraps them so). */
    private static @Nullable Origin unwrap(@Nullable Origin origin) {
        return origin instanceof PropertySourceOrigin named && named.getOrigin() != null ? named.getOrigin() : origin;
    }

    private static String where(@Nullable Origin origin, @Nullable PropertySource<?> source) {
        if (origin instanceof SystemEnvironmentOrigin environment) {
            return "set by the environment variable " + environment.getProperty();
        }
        if (origin instanceof TextResourceOrigin text && text.getResource() != null) {
            String file = describe(text.getResource());
            return text.getLocation() != null
                    ? "set in " + file + ", line " + (text.getLocation().getLine() + 1)
                    : "set in " + file;
        }
        String sourceName = origin instanceof PropertySourceOrigin named
                ? named.getPropertySource().getName()
                : source != null ? source.getName() : null;
        if (sourceName == null) {
            return origin != null ? "set in " + origin : "set where Spring Boot reads settings";
        }
        return switch (sourceName) {
            case "commandLineArgs" -> "set on the command line";
            case "systemProperties" -> "set as a Java system property (-D)";
            case "systemEnvironment" -> "set in the environment";
            case "spring.application.json" -> "set in SPRING_APPLICATION_JSON";
            case "defaultProperties" -> "set as a default property of the application";
            default -> "set in " + sourceName;
        };
    }

    private static String describe(Resource resource) {
        if (resource instanceof ClassPathResource classPath) {
            return "classpath:" + classPath.getPath();
        }
        if (resource.isFile()) {
            try {
                return resource.getFile().getPath();
            } catch (IOException ex) {
                // Described below instead.
            }
        }
        return resource.getDescription();
    }
}
