package dev.readygate.restart;

import java.time.Instant;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * How an engine start ended, and the work it lost: the requests running and waiting at readygate's last look at the
 * engine's {@code /metrics} before it went away ({@code vllm:num_requests_running}, {@code vllm:num_requests_waiting}).
 * No restart path resumes them: a snapshot restores an initialized engine, not requests in flight; a client must retry.
 * The counts include readygate's own probes in flight at that moment (at most one).
 *
 * @param at when readygate saw the engine go away, or saw a new process in its place
 * @param how how it ended
 * @param requestsRunning {@code vllm:num_requests_running} at the last scrape, null when the engine exports none
 * @param requestsWaiting {@code vllm:num_requests_waiting} at the last scrape, null when the engine exports none
 * @param observedAt when that scrape was answered, null when this start was never scraped
 */
public record Stop(
        Instant at,
        How how,
        @Nullable Double requestsRunning,
        @Nullable Double requestsWaiting,
        @Nullable Instant observedAt) {

    /** How an engine start ended. */
    public enum How {
        /** The engine went away: its port closed, or {@code /health} said it is dead. */
        WENT_AWAY,
        /** A new engine process answered in its place before readygate saw the old one go. */
        REPLACED;

        /** The snake_case name used in records, {@code /status} and the CSV. */
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The value's constant; one this version does not know reads as went away. */
        public static How of(String value) {
            return REPLACED.value().equals(value) ? REPLACED : WENT_AWAY;
        }
    }

    /** The requests lost, running and waiting together; null when neither is known. */
    public @Nullable Double requestsLost() {
        if (requestsRunning == null && requestsWaiting == null) {
            return null;
        }
        return (requestsRunning == null ? 0 : requestsRunning) + (requestsWaiting == null ? 0 : requestsWaiting);
    }
}
