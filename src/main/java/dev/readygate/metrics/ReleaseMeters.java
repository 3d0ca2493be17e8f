package dev.readygate.metrics;

import dev.readygate.restart.EngineArguments;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What the engine runs, as info gauges of value 1 whose tags say it: the engine's vLLM version and model with
 * readygate's version ({@link MeterNames#ENGINE_INFO}), and the release of its latest recorded start
 * ({@link MeterNames#ENGINE_RELEASE_INFO}); {@code unknown} until a start is recorded.
 */
final class ReleaseMeters {

    static final String UNKNOWN = "unknown";

    private final MultiGauge engineInfo;
    private final MultiGauge releaseInfo;
    private final String readygateVersion;

    ReleaseMeters(MeterRegistry registry, String readygateVersion) {
        this.readygateVersion = readygateVersion;
        this.engineInfo = MultiGauge.builder(MeterNames.ENGINE_INFO)
                .description("The engine's vLLM version and model, and readygate's version")
                .register(registry);
        engineInfo.register(List.of(MultiGauge.Row.of(engine(null, null, readygateVersion), 1)));
        this.releaseInfo = MultiGauge.builder(MeterNames.ENGINE_RELEASE_INFO)
                .description("The release of the engine's latest recorded start: vLLM version, model revision and"
                        + " configuration hash")
                .register(registry);
        releaseInfo.register(List.of(MultiGauge.Row.of(release(null, null, EngineArguments.UNKNOWN_CONFIGURATION), 1)));
    }

    void onRestartRecorded(RecordedStart start) {
        engineInfo.register(
                List.of(MultiGauge.Row.of(engine(start.vllmVersion(), start.model(), readygateVersion), 1)), true);
        releaseInfo.register(
                List.of(MultiGauge.Row.of(
                        release(start.vllmVersion(), start.revision(), start.configurationHash()), 1)),
                true);
    }

    /** The engine info's tags: an unknown version or model as {@value #UNKNOWN}. */
    static Tags engine(@Nullable String vllmVersion, @Nullable String model, String readygateVersion) {
        return Tags.of(
                "vllm_version",
                orUnknown(vllmVersion),
                "model",
                orUnknown(model),
                "readygate_version",
                readygateVersion);
    }

    /** The release info's tags: an unknown version or revision as {@value #UNKNOWN}. */
    static Tags release(@Nullable String vllmVersion, @Nullable String revision, String config) {
        return Tags.of("vllm_version", orUnknown(vllmVersion), "revision", orUnknown(revision), "config", config);
    }

    private static String orUnknown(@Nullable String value) {
        return value == null ? UNKNOWN : value;
    }
}
