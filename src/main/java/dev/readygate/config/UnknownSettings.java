package dev.readygate.config;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;

/**
 * The {@code readygate.*} names in the environment that bind to nothing: typos, and settings that do not exist.
 * Names of other prefixes ({@code spring.}, {@code server.}, {@code management.}, {@code logging.}) are not looked at.
 */
final class UnknownSettings {

    /**
     * A name that binds to nothing.
     *
     * @param written the name and where it was written (its value is never shown: it may be a secret)
     * @param nearest the known setting nearest to it
     */
    record Unknown(WrittenSetting written, String nearest) {

        /** From an environment variable: the environment is shared, so such a name only earns a warning. */
        boolean fromEnvironment() {
            return written.environmentVariable() != null;
        }

        String problem() {
            if (fromEnvironment()) {
                return "Unknown setting " + written.name() + " (environment variable " + written.environmentVariable()
                        + "); did you mean " + nearest + "?";
            }
            return "Unknown setting " + written.name() + "; did you mean " + nearest + "?\n    " + written.where();
        }
    }

    private UnknownSettings() {}

    /** Every unknown name, once each (list indexes folded into their list), in the sources' order. */
    static List<Unknown> find(Iterable<ConfigurationPropertySource> sources, SettingsMetadata metadata) {
        Set<ConfigurationPropertyName> seen = new LinkedHashSet<>();
        List<Unknown> unknown = new ArrayList<>();
        for (ConfigurationPropertySource source : sources) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            for (ConfigurationPropertyName name : iterable.filter(SettingsMetadata.ROOT::isAncestorOf)) {
                ConfigurationProperty property = source.getConfigurationProperty(name);
                if (metadata.isKnown(name) || property == null) {
                    continue;
                }
                WrittenSetting written = WrittenSetting.of(property, source);
                if (written.environmentVariable() != null && metadata.isKnownVariable(written.environmentVariable())) {
                    continue;
                }
                ConfigurationPropertyName reported = name;
                while (reported.isLastElementIndexed()) {
                    reported = reported.getParent();
                }
                if (seen.add(reported)) {
                    unknown.add(new Unknown(
                            new WrittenSetting(reported, "", written.where(), written.environmentVariable()),
                            metadata.nearest(reported)));
                }
            }
        }
        return unknown;
    }
}
