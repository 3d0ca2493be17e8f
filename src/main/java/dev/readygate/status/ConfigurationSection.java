package dev.readygate.status;

import dev.readygate.secret.SecretRedaction;
import java.lang.reflect.RecordComponent;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * {@code /status}'s {@code configuration} section: the configuration in effect, {@code readygate.*} as bound, without
 * secrets. The API key is read from a file or an environment variable, and only their names appear here; a setting
 * whose name says it is a secret shows {@value SecretRedaction#REDACTED}, and every other value is shown through
 * {@link SecretRedaction} (a URL's user information, a query's token).
 */
final class ConfigurationSection {

    private ConfigurationSection() {}

    /** A setting (a record of settings, a list, a map or a value) as {@code /status} shows it. */
    static @Nullable Object of(@Nullable Object value) {
        if (value == null || value instanceof Boolean || value instanceof Number) {
            return value;
        }
        if (value instanceof Record record) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (RecordComponent component : record.getClass().getRecordComponents()) {
                try {
                    Object setting = component.getAccessor().invoke(record);
                    out.put(
                            kebab(component.getName()),
                            setting != null && SecretRedaction.isSecretName(component.getName())
                                    ? SecretRedaction.REDACTED
                                    : of(setting));
                } catch (ReflectiveOperationException ex) {
                    out.put(kebab(component.getName()), "(unreadable)");
                }
            }
            return out;
        }
        if (value instanceof Collection<?> values) {
            return values.stream().map(ConfigurationSection::of).toList();
        }
        if (value instanceof Map<?, ?> entries) {
            Map<String, Object> out = new LinkedHashMap<>();
            entries.forEach((key, entry) -> out.put(
                    String.valueOf(key),
                    entry != null && SecretRedaction.isSecretName(String.valueOf(key))
                            ? SecretRedaction.REDACTED
                            : of(entry)));
            return out;
        }
        return SecretRedaction.redact(value.toString());
    }

    /** {@code maxTokensPerMinute} as {@code max-tokens-per-minute}. */
    static String kebab(String name) {
        return name.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }
}
