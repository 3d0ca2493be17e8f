package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineState;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * The {@code /status} document, section by section in the order it shows them: the verdict (ready, the state's
 * details, {@code now}), then {@code engine}, {@code probes}, {@code restarts}, {@code gpu}, {@code memory},
 * {@code stateDir} and {@code configuration}, each built by a section of its own. Read from memory; never triggers a
 * probe.
 */
@Component
final class StatusDocument {

    private final EngineFactsHolder facts;
    private final EngineSection engine;
    private final ProbesSection probes;
    private final RestartsSection restarts;
    private final GpuSection gpu;
    private final MemorySection memory;
    private final StateDirSection stateDir;
    private final ReadygateProperties properties;

    StatusDocument(
            EngineFactsHolder facts,
            EngineSection engine,
            ProbesSection probes,
            RestartsSection restarts,
            GpuSection gpu,
            MemorySection memory,
            StateDirSection stateDir,
            ReadygateProperties properties) {
        this.facts = facts;
        this.engine = engine;
        this.probes = probes;
        this.restarts = restarts;
        this.gpu = gpu;
        this.memory = memory;
        this.stateDir = stateDir;
        this.properties = properties;
    }

    /**
     * The document for the engine's state and the sources' reading {@code now}, rendered at {@code at}.
     */
    Map<String, Object> of(EvidenceSources.Reading now, EngineState state, Instant at) {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("ready", state.acceptsTraffic());
        status.putAll(EngineHealthIndicator.details(state));
        status.put("now", at.toString());
        EngineFacts current = facts.current();
        status.put("engine", engine.of(current));
        status.put("probes", probes.of(current));
        status.put("restarts", restarts.of(now));
        status.put("gpu", gpu.of());
        status.put("memory", memory.of());
        status.put("stateDir", stateDir.of());
        status.put("configuration", ConfigurationSection.of(properties));
        return status;
    }
}
