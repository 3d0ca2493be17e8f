package dev.readygate.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.json.JsonParserFactory;

/**
 * Every {@code readygate.*} setting there is, from the configuration metadata the build generates from the binding
 * records ({@code META-INF/spring-configuration-metadata.json}): readygate's and the simulator's, and whatever record
 * is added later, with no list kept by hand.
 */
final class SettingsMetadata {

    static final String LOCATION = "META-INF/spring-configuration-metadata.json";

    static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("readygate");

    /**
     * One setting.
     *
     * @param name its name (relaxed: equal to every form that binds to it)
     * @param key its name as documented ({@code readygate.probe.ready-interval})
     * @param type its type as the metadata writes it ({@code java.time.Duration}, {@code java.util.List<...>})
     * @param defaultValue its default as written in the record ({@code 60s}), or null
     */
    record Setting(
            ConfigurationPropertyName name,
            String key,
            String type,
            @Nullable String defaultValue) {

        /** A list, set, map or array: any name below it binds (an index, a map key). */
        boolean container() {
            return type.startsWith("java.util.Map")
                    || type.startsWith("java.util.List")
                    || type.startsWith("java.util.Set")
                    || type.startsWith("java.util.Collection")
                    || type.endsWith("[]");
        }

        /** What a bare number means for this setting's type, or null where it means itself. */
        @Nullable
        String bareNumberUnit() {
            return switch (type) {
                case "java.time.Duration" -> "milliseconds";
                case "org.springframework.util.unit.DataSize" -> "bytes";
                default -> null;
            };
        }
    }

    private final Map<ConfigurationPropertyName, Setting> settings;
    private final List<ConfigurationPropertyName> groups;

    private SettingsMetadata(Map<ConfigurationPropertyName, Setting> settings, List<ConfigurationPropertyName> groups) {
        this.settings = settings;
        this.groups = groups;
    }

    /** The {@code readygate.*} part of every metadata file on the class path. */
    static SettingsMetadata load(@Nullable ClassLoader classLoader) {
        ClassLoader loader = classLoader != null ? classLoader : SettingsMetadata.class.getClassLoader();
        Map<ConfigurationPropertyName, Setting> settings = new LinkedHashMap<>();
        List<ConfigurationPropertyName> groups = new ArrayList<>();
        try {
            Enumeration<URL> files = loader.getResources(LOCATION);
            while (files.hasMoreElements()) {
                read(files.nextElement(), settings, groups);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot read " + LOCATION, ex);
        }
        if (settings.isEmpty()) {
            throw new IllegalStateException("no readygate.* settings in " + LOCATION + " on the class path: the build"
                    + " generates it with spring-boot-configuration-processor (an annotation processor path of"
                    + " maven-compiler-plugin)");
        }
        return new SettingsMetadata(Collections.unmodifiableMap(settings), List.copyOf(groups));
    }

    @SuppressWarnings("unchecked")
    private static void read(
            URL file, Map<ConfigurationPropertyName, Setting> settings, List<ConfigurationPropertyName> groups)
            throws IOException {
        String json;
        try (InputStream in = file.openStream()) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!json.contains("\"readygate")) {
            // Another library's (Spring Boot's own are large): not parsed, to keep the start fast.
            return;
        }
        Map<String, Object> metadata = JsonParserFactory.getJsonParser().parseMap(json);
        for (Object group : (List<Object>) metadata.getOrDefault("groups", List.of())) {
            String key = (String) ((Map<String, Object>) group).get("name");
            ConfigurationPropertyName name = ConfigurationPropertyName.of(key);
            if (ROOT.equals(name) || ROOT.isAncestorOf(name)) {
                groups.add(name);
            }
        }
        for (Object property : (List<Object>) metadata.getOrDefault("properties", List.of())) {
            Map<String, Object> entry = (Map<String, Object>) property;
            String key = (String) entry.get("name");
            ConfigurationPropertyName name = ConfigurationPropertyName.of(key);
            if (ROOT.isAncestorOf(name)) {
                Object defaultValue = entry.get("defaultValue");
                settings.put(
                        name,
                        new Setting(
                                name,
                                key,
                                Objects.toString(entry.get("type"), "java.lang.Object"),
                                defaultValue == null || defaultValue instanceof List<?>
                                        ? null
                                        : String.valueOf(defaultValue)));
            }
        }
    }

    /** Every setting, in the metadata's order. */
    List<Setting> all() {
        return List.copyOf(settings.values());
    }

    Optional<Setting> setting(ConfigurationPropertyName name) {
        return Optional.ofNullable(settings.get(name));
    }

    /**
     * Whether something binds to this name: a setting, an element of a list or map setting, or a group (an empty
     * mapping in YAML, {@code probe: {}}, arrives as the group's own name).
     */
    boolean isKnown(ConfigurationPropertyName name) {
        if (settings.containsKey(name) || groups.contains(name) || ROOT.equals(name)) {
            return true;
        }
        for (Setting setting : settings.values()) {
            if ((setting.container() && setting.name().isAncestorOf(name)) || name.isAncestorOf(setting.name())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether an environment variable binds to a setting: Spring Boot reads {@code readygate.state-dir} from
     * {@code READYGATE_STATEDIR} and from the legacy {@code READYGATE_STATE_DIR}, and a list or map setting's
     * elements from variables below its standard form only ({@code READYGATE_GPU_UUIDS_0_},
     * {@code READYGATE_RESTART_READINESSOBJECTIVES_COLD}). The legacy form cannot be told from a nested name by
     * mapping the variable to a name, so the settings are mapped to variables instead.
     */
    boolean isKnownVariable(String variable) {
        String upper = variable.toUpperCase(Locale.ROOT);
        for (Setting setting : settings.values()) {
            String key = setting.key().toUpperCase(Locale.ROOT).replace('.', '_');
            String standard = key.replace("-", "");
            if (upper.equals(standard)
                    || upper.equals(key.replace('-', '_'))
                    || (setting.container() && upper.startsWith(standard + "_"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The setting nearest to a name that is none: by edit distance over the whole name, with the last element counting
     * twice, so {@code readygate.probe.prompt-tokens} finds {@code readygate.probe.representative.prompt-tokens}
     * rather than a sibling whose name merely has a similar length. The name's ancestors are tried too (the
     * elements dropped count as deleted), so {@code readygate.engine.baseurl.host} finds
     * {@code readygate.engine.base-url}, not another {@code host}.
     */
    String nearest(ConfigurationPropertyName name) {
        return settings.values().stream()
                .min(Comparator.comparingInt((Setting setting) -> distance(name, setting.name()))
                        .thenComparing(Setting::key))
                .map(Setting::key)
                .orElseThrow();
    }

    private static int distance(ConfigurationPropertyName name, ConfigurationPropertyName setting) {
        String known = uniform(setting);
        String knownLast = setting.getLastElement(Form.UNIFORM);
        int best = Integer.MAX_VALUE;
        int dropped = 0;
        for (ConfigurationPropertyName candidate = name;
                candidate.getNumberOfElements() >= 2;
                candidate = candidate.getParent()) {
            String last = candidate.getLastElement(Form.UNIFORM);
            best = Math.min(best, distance(uniform(candidate), known) + 2 * distance(last, knownLast) + dropped);
            dropped += last.length();
        }
        return best;
    }

    private static String uniform(ConfigurationPropertyName name) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            text.append(name.getElement(i, Form.UNIFORM));
        }
        return text.toString();
    }

    /** Levenshtein distance. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
