package dev.readygate.evidence;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/** What the engine's log says about each engine start. */
public interface StartLog {

    /** The findings of a start: the current one's so far, or an ended one's as they stood when it ended. */
    LogFindings findings(String startId);

    /**
     * The findings of a start once every line written so far was read (not only those of the last poll); if the start
     * ends meanwhile, its findings as they stood then.
     */
    default Mono<LogFindings> caughtUp(String startId) {
        return Mono.fromSupplier(() -> findings(startId));
    }

    /**
     * Why the log gives nothing, when it does not (a named evidence gap: lines read, none in a format readygate
     * reads); null when it is read, or not configured.
     */
    default @Nullable String unreadable() {
        return null;
    }

    /** No engine log configured. */
    StartLog NONE = startId -> LogFindings.none();
}
