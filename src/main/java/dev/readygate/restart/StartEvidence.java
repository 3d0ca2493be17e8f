package dev.readygate.restart;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What one engine start left behind, gathered from each configured evidence source. Every part is optional: a
 * source that is not configured (or said nothing) leaves it null or false.
 *
 * @param engineLogConfigured whether readygate reads the engine's log
 * @param headerLogged whether this start logged vLLM's start-up header (version, engine config)
 * @param loadingWeightsSeconds {@code Loading weights took X seconds}: weights read from disk
 * @param mappedTensors {@code Mapped N tensors from the weight cache daemon}: a preload cache hit
 * @param mappedMode the mapping mode ({@code zero_copy}, {@code copy})
 * @param cacheFallbackReason the reason of {@code Weight cache unusable (...); falling back to disk loading}
 * @param engineInitLogged whether {@code init engine (profile, create kv cache, warmup model) took} appeared
 * @param snapshotReleasedAt when the snapshot directory's {@code release.json} (release: true) was written, if at or
 *     after this start
 * @param requestsAtFirstScrape {@code vllm:request_success_total} at the first scrape of this start (non-zero only
 *     after a snapshot restore: the counters come back from the image)
 * @param daemonHealthy the preload daemon's {@code /health} answer (true: 200), or null when not configured
 * @param daemonSockets weight-cache sockets in the daemon's socket directory, or -1 when not configured
 * @param daemonReadyAt when the daemon's log last said every rank serves, or null
 */
record StartEvidence(
        boolean engineLogConfigured,
        boolean headerLogged,
        @Nullable Double loadingWeightsSeconds,
        @Nullable Integer mappedTensors,
        @Nullable String mappedMode,
        @Nullable String cacheFallbackReason,
        boolean engineInitLogged,
        @Nullable Instant snapshotReleasedAt,
        @Nullable Double requestsAtFirstScrape,
        @Nullable Boolean daemonHealthy,
        int daemonSockets,
        @Nullable Instant daemonReadyAt) {

    /** No evidence at all. */
    public static StartEvidence none() {
        return new StartEvidence(false, false, null, null, null, null, false, null, null, null, -1, null);
    }
}
