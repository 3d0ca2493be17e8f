package dev.readygate.restart;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import dev.readygate.statedir.StateDir;
import dev.readygate.statedir.Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The engine starts readygate saw begin and has not recorded yet, kept in {@code <state-dir>/}{@value #FILE_NAME} so
 * that a start readygate is killed during ({@code kill -9}, an OOM kill) is recorded after readygate's restart, once.
 *
 * <p>A start is written in when it begins and taken out once a record of it is kept (the history's line is appended
 * first, on the same writer thread). The file is replaced atomically (a temporary file forced to disk, then renamed),
 * so it is never torn; no file means no start in progress. What the file held when readygate started, less the starts
 * the history already holds, is {@linkplain #takeFound() found}: the restarted readygate's first start continues one
 * of them when it is the same engine process ({@link #continues}), and the others are recorded with outcome
 * {@link Outcome#UNKNOWN}. Readiness never depends on it: every write goes through {@link StateDir#write} on the
 * history's writer (a read-only, full or locked directory is a degraded reason, and no journal is kept), and only
 * the state directory's writer reads it at start.
 */
final class StartJournal {

    /** The journal's file name in the state directory. */
    static final String FILE_NAME = "starts-in-progress.json";

    /** How many starts it holds at most (a history that cannot be written leaves them in). */
    static final int HELD = 16;

    /**
     * How far apart two datings of one engine process may be: a log's first line (whole seconds) and the process start
     * time, or two readings of one.
     */
    static final Duration SAME_PROCESS = StartEvidence.LOG_CLOCK_TOLERANCE;

    private static final Logger logger = LoggerFactory.getLogger(StartJournal.class);

    /**
     * A start readygate saw begin.
     *
     * @param id the start's id
     * @param since when it began, as readiness dated it
     * @param source where {@code since} came from
     * @param awaited whether it is a start readygate saw begin before it answered: the old engine went away (or
     *     nothing answered at readygate's first look) and no new one answers yet, so readiness has no start yet;
     *     {@code id} is the journal's own, and the start that begins next takes its place
     */
    record Entry(String id, Instant since, StartSource source, boolean awaited) {

        /** A start readiness began. */
        Entry(String id, Instant since, StartSource source) {
            this(id, since, source, false);
        }

        static Entry of(EngineStart start) {
            return new Entry(start.id(), start.since(), start.source());
        }
    }

    private final Path file;
    private final StateDir stateDir;
    private final Executor writer;
    private final JsonMapper json;
    /** The starts not recorded yet, oldest first (guarded by this). */
    private final Map<String, Entry> open = new LinkedHashMap<>();
    /** What an earlier readygate left, not taken yet (guarded by this). */
    private List<Entry> found;

    /**
     * The journal in {@code file}, with what an earlier readygate left in it (read now, blocking).
     *
     * @param recorded the ids the history holds: a start whose record was appended before readygate died is no
     *     longer in progress
     * @param writer the history's writer: writes run after the appends handed to it before
     */
    StartJournal(Path file, StateDir stateDir, Executor writer, JsonMapper json, Set<String> recorded) {
        this.file = file;
        this.stateDir = stateDir;
        this.writer = writer;
        this.json = json;
        // A readygate that runs read-only beside the directory's writer leaves that one's journal alone.
        List<Entry> left = stateDir.writer() ? read(file, json) : List.of();
        this.found =
                left.stream().filter(entry -> !recorded.contains(entry.id())).toList();
        found.forEach(entry -> open.put(entry.id(), entry));
        if (!found.isEmpty()) {
            logger.info(
                    "{} engine start(s) an earlier readygate saw begin were not recorded (it was killed or restarted"
                            + " during them): {}",
                    found.size(),
                    found.stream().map(Entry::id).toList());
        }
    }

    /** A start began: kept until its record is. A first-seen start is not one readygate saw begin. */
    void begun(EngineStart start) {
        if (start.firstSeen()) {
            return;
        }
        synchronized (this) {
            if (open.containsKey(start.id())) {
                return;
            }
            // The start awaited since the engine went away is this one.
            open.values().removeIf(Entry::awaited);
            keep(Entry.of(start));
        }
        save();
    }

    /**
     * The engine went away at {@code since} (or nothing answered at readygate's first look) and no start is in
     * progress: the next start is one readygate saw begin, although readiness begins it only once it answers (a vLLM
     * load, minutes). Kept, as awaited, until it begins; one awaited start at a time (the earliest sighting).
     */
    void awaited(Instant since, String id) {
        synchronized (this) {
            if (open.values().stream().anyMatch(Entry::awaited)) {
                return;
            }
            keep(new Entry(id, since, StartSource.OBSERVED_DOWN, true));
        }
        save();
    }

    /**
     * The engine dated the start {@code id} itself ({@code process_start_time_seconds}): kept so, once, so that a
     * restarted readygate tells this process from a later one (the engine restarted again while none ran), which a
     * sighting cannot.
     */
    void dated(String id, Instant processStart) {
        synchronized (this) {
            Entry entry = open.get(id);
            if (entry == null || entry.source().fromEngine()) {
                return;
            }
            open.put(id, new Entry(id, processStart, StartSource.PROCESS_START_TIME));
        }
        save();
    }

    private void keep(Entry entry) {
        open.put(entry.id(), entry);
        while (open.size() > HELD) {
            open.remove(open.keySet().iterator().next());
        }
    }

    /** A record of the start {@code id} was kept: it is no longer in progress. */
    void recorded(String id) {
        synchronized (this) {
            if (open.remove(id) == null) {
                return;
            }
        }
        save();
    }

    /** What an earlier readygate left in progress, oldest first; once (later calls get nothing). */
    synchronized List<Entry> takeFound() {
        List<Entry> taken = found;
        found = List.of();
        return taken;
    }

    /**
     * Whether the start a restarted readygate found is the one an earlier readygate saw begin: the same engine process.
     * Decided by the engine's own dating where both have one (within {@link #SAME_PROCESS}); where only the found start
     * has one, by whether it fits what the earlier readygate saw (a process started at or after the old one went away;
     * at or before it was first seen); where neither has one, nothing tells them apart and it is taken as the same.
     *
     * @param begun the start an earlier readygate saw begin
     * @param origin the engine's own dating of the found start (process start time or log's first line), or null
     */
    static boolean continues(Entry begun, @Nullable Instant origin) {
        if (origin == null) {
            return true;
        }
        return switch (begun.source()) {
            case PROCESS_START_TIME, LOG ->
                !origin.isBefore(begun.since().minus(SAME_PROCESS))
                        && !origin.isAfter(begun.since().plus(SAME_PROCESS));
            case OBSERVED_DOWN -> !origin.isBefore(begun.since().minus(SAME_PROCESS));
            // No wake is journaled (its process began before it); one an older file holds is a process seen running.
            case FIRST_OBSERVED, WAKE -> !origin.isAfter(begun.since().plus(SAME_PROCESS));
        };
    }

    /** Writes the starts in progress on the history's writer, after what was handed to it before. */
    private void save() {
        writer.execute(() -> stateDir.write(Store.START_JOURNAL, this::write));
    }

    private void write() throws IOException {
        List<Entry> entries;
        synchronized (this) {
            entries = List.copyOf(open.values());
        }
        if (entries.isEmpty()) {
            Files.deleteIfExists(file);
            return;
        }
        List<Map<String, Object>> starts = new ArrayList<>();
        for (Entry entry : entries) {
            Map<String, Object> start = new LinkedHashMap<>();
            start.put("id", entry.id());
            start.put("since", entry.since().toString());
            start.put("source", entry.source().value());
            if (entry.awaited()) {
                start.put("awaited", true);
            }
            starts.add(start);
        }
        byte[] bytes = json.writeValueAsBytes(Map.of("starts", starts));
        StateDir.replaceAtomically(file, bytes);
    }

    /** The starts a journal file holds; none when there is none or it cannot be read (said once). Blocking. */
    static List<Entry> read(Path file, JsonMapper json) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<Entry> entries = new ArrayList<>();
            for (JsonNode start : json.readTree(Files.readAllBytes(file)).path("starts")) {
                entries.add(new Entry(
                        start.path("id").asString(),
                        Instant.parse(start.path("since").asString()),
                        StartSource.of(start.path("source").asString()),
                        start.path("awaited").asBoolean(false)));
            }
            return List.copyOf(entries);
        } catch (IOException | RuntimeException ex) {
            logger.warn("Ignoring the unreadable journal of starts in progress {}: {}", file, ex.getMessage());
            return List.of();
        }
    }
}
