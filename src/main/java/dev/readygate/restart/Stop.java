package dev.readygate.restart;

import java.time.Instant;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * How an engine start ended, and the work it lost: the requests running and waiting at readygate's last look at the
 * engine's {@code /metrics} before it went away ({@code vllm:num_requests_running}, {@code vllm:num_requests_waiting}).
 * No restart path resumes them: a snapshot restores an initialized engine, not requests in flight; a client must retry.
 * The counts include readygate's own probes in flight at that moment (at most one). With gateway mode on, the gateway's
 * own count of the requests it had forwarded to the start ({@link Traffic}) is exact, not inferred.
 *
 * @param at when readygate saw the engine go away, or saw a new process in its place
 * @param how how it ended
 * @param requestsRunning {@code vllm:num_requests_running} at the last scrape, null when the engine exports none
 * @param requestsWaiting {@code vllm:num_requests_waiting} at the last scrape, null when the engine exports none
 * @param observedAt when that scrape was answered, null when this start was never scraped
 * @param traffic the gateway's own count of the start's requests at its stop; null when gateway mode is off, and until
 *     every request in flight at the stop ended (finished or cut)
 */
public record Stop(
        Instant at,
        How how,
        @Nullable Double requestsRunning,
        @Nullable Double requestsWaiting,
        @Nullable Instant observedAt,
        @Nullable Traffic traffic) {

    /** A stop without the gateway's count. */
    public Stop(
            Instant at,
            How how,
            @Nullable Double requestsRunning,
            @Nullable Double requestsWaiting,
            @Nullable Instant observedAt) {
        this(at, how, requestsRunning, requestsWaiting, observedAt, null);
    }

    /**
     * The gateway's own count of the requests it forwarded to a start that were in flight at its stop, and what became
     * of them. For a drain (the pod stopping) those in flight as it began; for a crash or a replacement, those the
     * engine cut before readygate saw it go (their connection closed, or stalled past the between-events timeout)
     * and those still in flight as it saw it. {@code inFlight = finished + cut}.
     *
     * @param inFlight requests forwarded and not ended at the stop
     * @param finished of those, the ones that ended on their own after it (the engine's answer whole, or the client
     *     went away), in the drain
     * @param cut of those, the ones cut: by the engine going away, or by the drain's deadline
     * @param cutTokens the token-carrying server-sent events the cut ones had passed to their clients (one token or
     *     more each: vLLM streams one token per event unless it batches)
     */
    public record Traffic(int inFlight, int finished, int cut, long cutTokens) {}

    /** How an engine start ended. */
    public enum How {
        /** The engine went away: its port closed, or {@code /health} said it is dead. */
        WENT_AWAY,
        /** A new engine process answered in its place before readygate saw the old one go. */
        REPLACED,
        /**
         * readygate was told to stop (SIGTERM: the pod stopping) while the engine ran; recorded with gateway mode on, as
         * its drain begins.
         */
        POD_STOPPED,
        /**
         * The engine was put to sleep (vLLM's sleep mode: {@code POST /sleep}): the process lives on and still holds
         * the GPU memory sleep did not free; its wake is the next start ({@link RestartPath#WAKE}).
         */
        SLEPT;

        /** The snake_case name used in records, {@code /status} and the CSV. */
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The value's constant; one this version does not know reads as went away. */
        public static How of(String value) {
            for (How how : values()) {
                if (how.value().equals(value)) {
                    return how;
                }
            }
            return WENT_AWAY;
        }
    }

    /** This stop with the gateway's count. */
    public Stop withTraffic(Traffic counted) {
        return new Stop(at, how, requestsRunning, requestsWaiting, observedAt, counted);
    }

    /** The requests lost, running and waiting together; null when neither is known. */
    public @Nullable Double requestsLost() {
        if (requestsRunning == null && requestsWaiting == null) {
            return null;
        }
        return (requestsRunning == null ? 0 : requestsRunning) + (requestsWaiting == null ? 0 : requestsWaiting);
    }
}
