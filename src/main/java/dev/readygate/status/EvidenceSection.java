package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.evidence.DaemonReadyFile;
import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.StartLog;
import dev.readygate.secret.SecretRedaction;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * {@code /status}'s {@code restarts.evidence}: where restart evidence comes from (the engine's log, the preload daemon,
 * the snapshot directory; URLs without secrets), and what the engine log, the daemon and the snapshot directory say
 * right now (an engine log whose lines readygate cannot read is a named gap, not "no log").
 */
@Component
final class EvidenceSection {

    static final String NOT_CONFIGURED = "not configured";

    private final ReadygateProperties.Evidence settings;

    private final StartLog log;

    EvidenceSection(ReadygateProperties properties, StartLog log) {
        this.settings = properties.evidence();
        this.log = log;
    }

    Map<String, Object> of(EvidenceSources.Reading now) {
        return of(settings, now, log.unreadable());
    }

    /** The section for these settings and what the sources say now, with no gap in the engine log. */
    static Map<String, Object> of(ReadygateProperties.Evidence evidence, EvidenceSources.Reading now) {
        return of(evidence, now, null);
    }

    /**
     * The section for these settings and what the sources say now, {@code unreadable} saying why the engine log gives
     * nothing if it does not: a pure function, table-tested.
     */
    static Map<String, Object> of(
            ReadygateProperties.Evidence evidence, EvidenceSources.Reading now, @Nullable String unreadable) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(
                "engineLog",
                evidence.engineLog() == null
                        ? NOT_CONFIGURED
                        : evidence.engineLog().toString());
        if (evidence.engineLog() != null) {
            out.put("engineLogNow", unreadable == null ? "read" : unreadable);
        }
        out.put(
                "daemonHealthUrl",
                evidence.daemonHealthUrl() == null
                        ? NOT_CONFIGURED
                        : SecretRedaction.redact(evidence.daemonHealthUrl()));
        out.put(
                "daemonSocketDir",
                evidence.daemonSocketDir() == null
                        ? NOT_CONFIGURED
                        : evidence.daemonSocketDir().toString());
        out.put(
                "snapshotDir",
                evidence.snapshotDir() == null
                        ? NOT_CONFIGURED
                        : evidence.snapshotDir().toString());
        // What the preload daemon and the snapshot directory say right now.
        if (now.daemonHealthy() != null) {
            out.put("daemonNow", now.daemonHealthy() ? "serving (/health 200)" : "not serving");
        }
        if (now.daemonSockets() >= 0) {
            out.put("daemonSocketsNow", now.daemonSockets());
        }
        if (!now.daemonReadyFiles().isEmpty()) {
            // SGLang's daemons' own word that they serve, and whether it still holds (its process, its socket).
            out.put(
                    "daemonReadyFilesNow",
                    now.daemonReadyFiles().stream()
                            .map(DaemonReadyFile::describe)
                            .toList());
        }
        if (evidence.daemonLog() != null) {
            out.put(
                    "daemonReadyLoggedAt",
                    now.daemonReadyAt() == null
                            ? "not yet"
                            : now.daemonReadyAt().toString());
        }
        if (evidence.snapshotDir() != null) {
            out.put(
                    "snapshotReleasedAt",
                    now.snapshotReleasedAt() == null
                            ? "never (no release.json)"
                            : now.snapshotReleasedAt().toString());
        }
        return out;
    }
}
