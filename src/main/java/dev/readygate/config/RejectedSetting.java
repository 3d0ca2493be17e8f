package dev.readygate.config;

import java.net.URI;
import java.net.URL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.core.ResolvableType;
import org.springframework.util.unit.DataSize;

/**
 * Says why a value was refused, in the user's terms: {@code <key>: <problem> (was <value as written>)}, then where it
 * was written.
 *
 * <p>A record's own check says it as {@code <key> <problem>}, ending in {@code (was <value>)} where the value
 * matters; another {@code readygate.*} key it names is echoed too ({@code ...; readygate.probe.heavy-interval is
 * 60s, the default}). The value shown is the text of the source that set it, not the converted value the record
 * saw ({@code -64MB}, not {@code -67108864B}; {@code 2m}, not {@code PT2M}). A value Spring's own conversion refused
 * ({@code 30 seconds} for a duration) is described by the form its type takes. The simulator's records follow the
 * same convention, so their messages come out the same way.
 */
final class RejectedSetting {

    /** A {@code readygate.*} key at the start of a message, then the problem. */
    private static final Pattern KEYED = Pattern.compile("(readygate\\.[^\\s:]+):?\\s+(.*)", Pattern.DOTALL);

    /** The {@code (was ...)} a record's message ends in. */
    private static final Pattern WAS = Pattern.compile("\\s*\\(was (.*)\\)$", Pattern.DOTALL);

    /** A {@code readygate.*} key named inside a problem. */
    private static final Pattern KEY = Pattern.compile("readygate\\.[a-z0-9.\\-\\[\\]_]*[a-z0-9\\]]");

    private RejectedSetting() {}

    /**
     * What refused a value said: the key it names, the problem, and whether the value is to be echoed.
     *
     * @param key the setting refused
     * @param problem why, without the value
     * @param echo whether the value as written belongs in the message
     */
    private record Refusal(String key, String problem, boolean echo) {

        static Refusal of(
                ConfigurationPropertyName name,
                ResolvableType target,
                @Nullable ConfigurationProperty property,
                Throwable failure) {
            Throwable own = ownCheck(failure);
            if (own == null) {
                // Spring's own conversion refused it: say what the type looks like.
                return new Refusal(name.toString(), expectedForm(target), true);
            }
            String message = String.valueOf(own.getMessage());
            Matcher keyed = KEYED.matcher(message);
            String problem = keyed.matches() ? keyed.group(2) : message;
            Matcher was = WAS.matcher(problem);
            boolean echo = was.find() || (property != null && !keyed.matches());
            return new Refusal(keyed.matches() ? keyed.group(1) : name.toString(), was.replaceFirst(""), echo);
        }
    }

    /**
     * The message for a failure to bind {@code name}, one of readygate's settings or records.
     *
     * @param name what was being bound: the setting (a conversion failure) or the record that refused its values
     * @param target its type
     * @param property the value being converted, for a conversion failure
     * @param sources where the values are read from, to echo them as written
     */
    static String describe(
            ConfigurationPropertyName name,
            ResolvableType target,
            @Nullable ConfigurationProperty property,
            Throwable failure,
            Iterable<ConfigurationPropertySource> sources,
            SettingsMetadata metadata) {
        UnboundConfigurationPropertiesException unbound = cause(failure, UnboundConfigurationPropertiesException.class);
        if (unbound != null) {
            return gaps(name, unbound);
        }
        Refusal refusal = Refusal.of(name, target, property, failure);
        ConfigurationPropertyName keyName = nameOf(refusal.key());
        WrittenSetting written = property != null && keyName.equals(property.getName())
                ? WrittenSetting.of(property, property.getSource())
                : WrittenSetting.find(keyName, sources);

        List<String> values = new ArrayList<>();
        List<WrittenSetting> set = new ArrayList<>();
        String text = refusal.echo() ? valueText(keyName, written, metadata) : null;
        if (text != null) {
            values.add("was " + text);
        }
        if (written != null) {
            set.add(written);
        }
        for (String other : relatedKeys(refusal)) {
            WrittenSetting otherWritten = WrittenSetting.find(nameOf(other), sources);
            String otherText = valueText(nameOf(other), otherWritten, metadata);
            if (otherText != null) {
                values.add(other + " is " + otherText);
            }
            if (otherWritten != null) {
                set.add(otherWritten);
            }
        }

        StringBuilder line = new StringBuilder(refusal.key()).append(": ").append(refusal.problem());
        if (!values.isEmpty()) {
            line.append(" (").append(String.join("; ", values)).append(')');
        }
        for (WrittenSetting where : set) {
            line.append("\n    ");
            if (set.size() > 1 || written == null) {
                line.append(where.name()).append(' ');
            }
            line.append(where.where());
        }
        return line.toString();
    }

    /** The other settings a problem names ({@code must not be longer than readygate.probe.heavy-interval}). */
    private static Set<String> relatedKeys(Refusal refusal) {
        Set<String> related = new LinkedHashSet<>();
        Matcher keys = KEY.matcher(refusal.problem());
        while (keys.find()) {
            if (!keys.group().equals(refusal.key())) {
                related.add(keys.group());
            }
        }
        return related;
    }

    /** A list with elements Spring Boot could not place: numbered with a gap, or spread over several sources. */
    private static String gaps(ConfigurationPropertyName list, UnboundConfigurationPropertiesException unbound) {
        List<ConfigurationProperty> elements =
                unbound.getUnboundProperties().stream().sorted().toList();
        StringBuilder line = new StringBuilder(list.toString())
                .append(": a list's elements must be numbered from [0] without gaps, and all come from one place (was ")
                .append(elements.stream()
                        .map(element -> element.getName().toString())
                        .collect(Collectors.joining(", ")))
                .append(')');
        for (ConfigurationProperty element : elements) {
            line.append("\n    ")
                    .append(element.getName())
                    .append(' ')
                    .append(WrittenSetting.of(element, element.getSource()).where());
        }
        return line.toString();
    }

    private static <T extends Throwable> @Nullable T cause(Throwable failure, Class<T> type) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (type.isInstance(cause)) {
                return type.cast(cause);
            }
        }
        return null;
    }

    /** The check of one of readygate's records or converters in the failure's causes, if one refused the value. */
    private static @Nullable Throwable ownCheck(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            StackTraceElement[] trace = cause.getStackTrace();
            if (cause instanceof IllegalArgumentException
                    && trace.length > 0
                    && trace[0].getClassName().startsWith("dev.readygate.")) {
                return cause;
            }
        }
        return null;
    }

    /** The value as written, else its default as the record writes it, else nothing. */
    private static @Nullable String valueText(
            ConfigurationPropertyName name, @Nullable WrittenSetting written, SettingsMetadata metadata) {
        SettingsMetadata.Setting setting = metadata.setting(name).orElse(null);
        if (written != null) {
            String unit = setting != null ? setting.bareNumberUnit() : null;
            return unit != null && written.text().strip().matches("[+-]?\\d+")
                    ? written.text() + ", read as " + unit
                    : written.text();
        }
        if (setting != null && setting.defaultValue() != null) {
            return setting.defaultValue() + ", the default";
        }
        return null;
    }

    private static ConfigurationPropertyName nameOf(String key) {
        ConfigurationPropertyName name = ConfigurationPropertyName.ofIfValid(key);
        return name != null ? name : ConfigurationPropertyName.adapt(key, '.');
    }

    /** What a value of this type looks like, said as the problem of one that does not. */
    static String expectedForm(ResolvableType type) {
        Class<?> resolved = type.toClass();
        if (Collection.class.isAssignableFrom(resolved) || resolved.isArray()) {
            ResolvableType element = resolved.isArray()
                    ? type.getComponentType()
                    : type.asCollection().getGeneric();
            return "not a list of " + plural(element.toClass());
        }
        if (Map.class.isAssignableFrom(resolved)) {
            return "not a map of " + plural(type.asMap().getGeneric(1).toClass());
        }
        if (resolved.isEnum()) {
            return "must be one of "
                    + Arrays.stream(resolved.getEnumConstants())
                            .map(constant -> ((Enum<?>) constant)
                                    .name()
                                    .toLowerCase(Locale.ROOT)
                                    .replace('_', '-'))
                            .collect(Collectors.joining(", "));
        }
        return "not " + singular(resolved);
    }

    private static String singular(Class<?> type) {
        if (type == Duration.class) {
            return "a duration: write a whole number and a unit, e.g. 500ms, 30s, 5m";
        }
        if (type == DataSize.class) {
            return "a size: write a whole number and a unit, e.g. 512KB, 64MB, 1GB";
        }
        if (isWhole(type)) {
            return "a whole number";
        }
        if (isFractional(type)) {
            return "a number";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == URI.class || type == URL.class) {
            return "a URL";
        }
        if (type == Path.class) {
            return "a path";
        }
        return "a valid value";
    }

    private static String plural(Class<?> type) {
        if (type == Duration.class) {
            return "durations (500ms, 30s, 5m)";
        }
        if (type == DataSize.class) {
            return "sizes (512KB, 64MB, 1GB)";
        }
        if (isWhole(type)) {
            return "whole numbers";
        }
        if (isFractional(type)) {
            return "numbers";
        }
        return "valid values";
    }

    private static boolean isWhole(Class<?> type) {
        return type == int.class
                || type == Integer.class
                || type == long.class
                || type == Long.class
                || type == short.class
                || type == Short.class;
    }

    private static boolean isFractional(Class<?> type) {
        return type == double.class || type == Double.class || type == float.class || type == Float.class;
    }
}
