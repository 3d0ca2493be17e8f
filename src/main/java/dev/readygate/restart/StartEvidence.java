package dev.readygate.restart;

import dev.readygate.evidence.EvidenceSources;
import dev.readygate.evidence.LogFindings;
import dev.readygate.evidence.LogTimeZone;
import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What one engine start left behind, gathered from each configured evidence source. Every part is optional: a
 * source that is not configured (or said nothing) leaves it empty.
 *
 * @param log what the engine's log said about this start ({@link LogFindings#none()} without a log)
 * @param requestsAtFirstScrape {@code vllm:request_success_total} at the first scrape of this start (non-zero only
 *     after a snapshot restore: the counters come back from the image; or when readygate did not see the start begin)
 * @param sources the snapshot directory ({@code release.json} written at or after this start) and the preload
 *     daemon (health, sockets, READY line)
 * @param firstSeen whether readygate did not see this start begin (it found the engine already answering): its counters
 *     at the first scrape count what it served before readygate looked, not a snapshot's restored requests
 * @param recordedBefore for a first-seen start, the same engine start (same process start time) as an earlier readygate
 *     recorded it having seen it begin, or null
 * @param logNotThisStart why the log's lines were set aside as another process's, or null
 */
public record StartEvidence(
        LogFindings log,
        @Nullable Double requestsAtFirstScrape,
        EvidenceSources.Reading sources,
        boolean firstSeen,
        @Nullable RestartRecord recordedBefore,
        @Nullable String logNotThisStart) {

    /**
     * How much earlier than the process start time the log's first line of the start may be dated: vLLM's log
     * timestamps have whole seconds.
     */
    static final Duration LOG_CLOCK_TOLERANCE = Duration.ofSeconds(2);

    /** Evidence of a start readygate saw begin. */
    public StartEvidence(LogFindings log, @Nullable Double requestsAtFirstScrape, EvidenceSources.Reading sources) {
        this(log, requestsAtFirstScrape, sources, false, null, null);
    }

    /** No evidence at all. */
    public static StartEvidence none() {
        return new StartEvidence(LogFindings.none(), null, EvidenceSources.Reading.none());
    }

    /**
     * The evidence of a start, with what is known of its beginning.
     *
     * <p>A start readygate did not see begin is read from the log's beginning, so the log's latest lines may be an
     * earlier process's (a snapshot restore writes none): lines dated before the process started are set aside. Its
     * earlier record, if an earlier readygate saw it begin, is found in {@code history} by its process start time.
     *
     * @param firstSeen whether readygate did not see the start begin
     * @param processStart the start's process start time, or null when not known from the process itself
     * @param history the records kept, oldest first
     */
    static StartEvidence of(
            boolean firstSeen,
            @Nullable Instant processStart,
            LogFindings log,
            @Nullable Double requestsAtFirstScrape,
            EvidenceSources.Reading sources,
            List<RestartRecord> history) {
        if (!firstSeen) {
            return new StartEvidence(log, requestsAtFirstScrape, sources);
        }
        LogFindings own = log;
        String notThisStart = null;
        Instant firstLine = log.firstLineAt();
        LogTimeZone zone = log.timeZone();
        ZoneOffset offset = processStart == null || firstLine == null || (zone != null && zone.known())
                ? null
                : LogTimeZone.offsetFromProcessStart(firstLine, processStart);
        if (offset != null && offset.getTotalSeconds() != 0) {
            // Whole quarter hours from the process start: vLLM's local time, not an earlier process's lines.
            own = log.readIn(offset, LogTimeZone.Source.PROCESS_START);
            firstLine = own.firstLineAt();
        }
        if (processStart != null && firstLine != null && firstLine.isBefore(processStart.minus(LOG_CLOCK_TOLERANCE))) {
            own = LogFindings.of(List.of());
            notThisStart = "log: its latest start-up lines (from " + firstLine
                    + ") are older than this process (started " + processStart + "): an earlier process's, set aside";
        }
        return new StartEvidence(
                own,
                requestsAtFirstScrape,
                sources,
                true,
                processStart == null ? null : recordedBefore(processStart, history),
                notThisStart);
    }

    /** The latest record of the engine start that began at {@code processStart}, made by a readygate that saw it. */
    private static @Nullable RestartRecord recordedBefore(Instant processStart, List<RestartRecord> history) {
        for (RestartRecord record : history.reversed()) {
            if (!record.when().firstSeen()
                    && record.when().engineStartSource() == StartSource.PROCESS_START_TIME
                    && record.when().engineStart().equals(processStart)) {
                return record;
            }
        }
        return null;
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
