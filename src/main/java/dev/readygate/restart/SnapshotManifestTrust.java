package dev.readygate.restart;

import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.SnapshotManifest;
import dev.readygate.probe.ManifestTrust;
import java.util.List;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The canary's question, answered from the snapshot directory's manifest and the node's facts now: a manifest taken on
 * another GPU, driver or vLLM version must not vouch for the engine (see {@link SnapshotMismatch}).
 */
final class SnapshotManifestTrust implements ManifestTrust {

    private final EvidenceSources sources;
    private final HostFacts hosts;

    SnapshotManifestTrust(EvidenceSources sources, HostFacts hosts) {
        this.sources = sources;
        this.hosts = hosts;
    }

    @Override
    public @Nullable String distrust(String vllmVersion) {
        SnapshotManifest manifest = sources.manifest();
        if (manifest == null) {
            return null;
        }
        List<SnapshotMismatch> mismatches = SnapshotMismatch.of(manifest, hosts.now(), vllmVersion);
        return mismatches.isEmpty()
                ? null
                : mismatches.stream().map(SnapshotMismatch::describe).collect(Collectors.joining("; "));
    }
}
