package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.SnapshotManifest;
import dev.readygate.evidence.StartLog;
import dev.readygate.probe.EngineFactsHolder;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.EngineArguments;
import dev.readygate.restart.HostFacts;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.RestartRecords;
import dev.readygate.restart.SnapshotMismatch;
import dev.readygate.restart.SnapshotScope;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * {@code /status}'s {@code restarts.snapshot}: the snapshot directory's manifest against the engine and node now (a
 * mismatch is named before the manifest is trusted, by {@link SnapshotMismatch}), and an engine configuration
 * snapshots cannot restore ({@link SnapshotScope}: wider than one GPU).
 */
@Component
final class SnapshotSection {

    private final boolean configured;
    private final EngineStateMachine machine;
    private final StartLog startLog;
    private final RestartRecords records;
    private final HostFacts hosts;
    private final EngineFactsHolder facts;

    SnapshotSection(
            ReadygateProperties properties,
            EngineStateMachine machine,
            StartLog startLog,
            RestartRecords records,
            HostFacts hosts,
            EngineFactsHolder facts) {
        this.configured = properties.evidence().snapshotDir() != null;
        this.machine = machine;
        this.startLog = startLog;
        this.records = records;
        this.hosts = hosts;
        this.facts = facts;
    }

    Map<String, Object> of(EvidenceSources.Reading now) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("configured", configured);
        List<String> unsupported = SnapshotScope.unsupported(EngineArguments.parse(engineArgs()), configured);
        out.put("supported", unsupported.isEmpty());
        out.put("unsupported", unsupported);
        SnapshotManifest manifest = now.manifest();
        if (manifest == null) {
            out.put("manifest", configured ? "none readable in the snapshot directory" : null);
            return out;
        }
        Map<String, Object> read = new LinkedHashMap<>();
        read.put("createdAt", manifest.createdAt());
        read.put("modelRevision", manifest.modelRevision());
        read.put("vllmVersion", manifest.vllmVersion());
        read.put("gpuUuid", manifest.gpuUuid());
        read.put("gpuName", manifest.gpuName());
        read.put("driverVersion", manifest.driverVersion());
        out.put("manifest", read);
        List<SnapshotMismatch> mismatches =
                SnapshotMismatch.of(manifest, hosts.latest(), facts.current().vllmVersion());
        out.put("matchesThisEngine", mismatches.isEmpty());
        out.put(
                "mismatches",
                mismatches.stream().map(SnapshotMismatch::describe).toList());
        return out;
    }

    /** The engine's arguments: the running start's as its log gave them, else the latest recorded start's. */
    private @Nullable String engineArgs() {
        EngineStart start = machine.start();
        String args = start == null ? null : startLog.findings(start.id()).engineArgs();
        return args != null ? args : latestEngineArgs(records.history());
    }

    /** The engine arguments of the latest recorded start that has them: the one place this section reads a record. */
    static @Nullable String latestEngineArgs(List<RestartRecord> history) {
        return history.reversed().stream()
                .map(record -> record.engine().engineArgs())
                .filter(Objects::nonNull)
                .findFirst()
                .orElse(null);
    }
}
