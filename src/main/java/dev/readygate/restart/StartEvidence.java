package dev.readygate.restart;

import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogFindings;
import org.jspecify.annotations.Nullable;

/**
 * What one engine start left behind, gathered from each configured evidence source. Every part is optional: a
 * source that is not configured (or said nothing) leaves it empty.
 *
 * @param log what the engine's log said about this start ({@link LogFindings#none()} without a log)
 * @param requestsAtFirstScrape {@code vllm:request_success_total} at the first scrape of this start (non-zero only
 *     after a snapshot restore: the counters come back from the image)
 * @param sources the snapshot directory ({@code release.json} written at or after this start) and the preload
 *     daemon (health, sockets, READY line)
 */
public record StartEvidence(LogFindings log, @Nullable Double requestsAtFirstScrape, EvidenceSources.Reading sources) {

    /** No evidence at all. */
    public static StartEvidence none() {
        return new StartEvidence(LogFindings.none(), null, EvidenceSources.Reading.none());
    }

    /** Whether readygate reads the engine's log. */
    boolean engineLogConfigured() {
        return log.configured();
    }

    /** Whether {@code init engine (profile, create kv cache, warmup model) took} appeared. */
    boolean engineInitLogged() {
        return log.engineInitSeconds() != null;
    }
}
