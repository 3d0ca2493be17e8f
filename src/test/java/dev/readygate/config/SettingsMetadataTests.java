package dev.readygate.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.simulator.SimulatorProperties;
import java.lang.reflect.RecordComponent;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.convert.converter.GenericConverter.ConvertiblePair;

/** The known settings come from the metadata the build generates, and agree with the records that bind them. */
class SettingsMetadataTests {

    private final SettingsMetadata metadata = SettingsMetadata.load(getClass().getClassLoader());

    @Test
    void metadataHasEverySettingOfEveryRecordBoundUnderReadygate() {
        Set<String> fromRecords = new TreeSet<>();
        keys(ReadygateProperties.class, ReadygateProperties.class, "readygate", fromRecords);
        keys(SimulatorProperties.class, SimulatorProperties.class, "readygate.simulator", fromRecords);
        assertThat(metadata.all())
                .extracting(SettingsMetadata.Setting::key)
                .containsExactlyInAnyOrderElementsOf(fromRecords);
    }

    /** Every key a record binds, as the binder walks it: a member record of the root is a group, the rest leaves. */
    private static void keys(Class<?> root, Class<?> type, String prefix, Set<String> into) {
        for (RecordComponent component : type.getRecordComponents()) {
            String key = prefix + "."
                    + component.getName().replaceAll("([A-Z])", "-$1").toLowerCase();
            Class<?> componentType = component.getType();
            if (componentType.isRecord() && componentType.getName().startsWith(root.getName() + "$")) {
                keys(root, componentType, key, into);
            } else {
                into.add(key);
            }
        }
    }

    @Test
    void everySettingOfAReadygateTypeIsAnEnumOrHasAConverter() {
        // A record from another package that is not annotated @NestedConfigurationProperty is a leaf to the
        // metadata, though the binder binds its components: the unknown-setting check would reject them.
        Set<Class<?>> converted = new TokenBudgetConverter()
                .getConvertibleTypes().stream()
                        .map(ConvertiblePair::getTargetType)
                        .collect(java.util.stream.Collectors.toSet());
        assertThat(metadata.all())
                .filteredOn(setting -> setting.type().startsWith("dev.readygate."))
                .allSatisfy(setting -> {
                    Class<?> type = Class.forName(setting.type());
                    assertThat(type.isEnum() || converted.contains(type))
                            .as(
                                    "%s (%s) is an enum or has a converter: annotate a nested record"
                                            + " @NestedConfigurationProperty",
                                    setting.key(), setting.type())
                            .isTrue();
                });
    }

    @Test
    void bothRootsAreBoundUnderReadygate() {
        assertThat(ReadygateProperties.class
                        .getAnnotation(ConfigurationProperties.class)
                        .value())
                .isEqualTo("readygate");
        assertThat(SimulatorProperties.class
                        .getAnnotation(ConfigurationProperties.class)
                        .value())
                .isEqualTo("readygate.simulator");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "readygate",
                "readygate.probe",
                "readygate.probe.representative.prompt-tokens",
                "readygate.probe.representative.promptTokens",
                "readygate.probe.representative.prompt_tokens",
                "readygate.gpu.uuids[0]",
                "readygate.probe.canary.expected-token-ids[3]",
                "readygate.restart.readiness-objectives.preload-hit",
                "readygate.restart.readiness-objectives[snapshot_restore]",
                "readygate.simulator.preload.health-port"
            })
    void namesThatBindAreKnown(String name) {
        assertThat(metadata.isKnown(ConfigurationPropertyName.adapt(name, '.'))).isTrue();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "readygate.probe.prompt-tokens",
                "readygate.engine.base-url.host",
                "readygate.simulator.prot",
                "readygate.port",
                "readygate.probe.representative.prompt.tokens"
            })
    void namesThatBindToNothingAreUnknown(String name) {
        assertThat(metadata.isKnown(ConfigurationPropertyName.adapt(name, '.'))).isFalse();
    }

    @ParameterizedTest
    @CsvSource({
        "readygate.probe.prompt-tokens, readygate.probe.representative.prompt-tokens",
        "readygate.probe.representative.prompt.tokens, readygate.probe.representative.prompt-tokens",
        "readygate.engine.base-uri, readygate.engine.base-url",
        "readygate.engine.baseurl.host, readygate.engine.base-url",
        "readygate.probe.heavy-intervall, readygate.probe.heavy-interval",
        "readygate.prob.ready-interval, readygate.probe.ready-interval",
        "readygate.memory.tolerence, readygate.memory.tolerance",
        "readygate.simulator.prot, readygate.simulator.port",
        "readygate.simulator.preload.health-prot, readygate.simulator.preload.health-port",
        "readygate.probe.canary.expected-tokens, readygate.probe.canary.expected-token-ids",
        "readygate.restart.readiness-objective.cold, readygate.restart.readiness-objectives",
        "readygate.state-directory, readygate.state-dir"
    })
    void nearestKnownSettingIsTheOneMeant(String typo, String meant) {
        assertThat(metadata.nearest(ConfigurationPropertyName.adapt(typo, '.'))).isEqualTo(meant);
    }
}
