package dev.readygate.restart;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.readiness.EngineStart;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One restart record as it is shown, rendered in one place: the history's JSON object (a line of
 * {@code restarts.jsonl}, exported at {@code /status/restarts.json}), a row of {@code /status/restarts.csv}, and the
 * entry {@code /status} and its page show. What the three share is derived here once: the phases in order with their
 * offsets from engine start, the memory moments, the node facts.
 *
 * <p>The JSON object is lossless and {@link RecordJson}'s: one schema writes it and reads it back. The CSV is RFC
 * 4180 (CRLF line ends; a field with a comma, quote, CR or LF is quoted, its quotes doubled) with an empty field for
 * anything unknown, phases as plain decimal seconds from {@code engine_start} exact to the nanosecond, memory in MiB.
 * {@code /status} shows seconds to the millisecond and memory in MiB.
 */
public final class RestartRecordView {

    private final RestartRecord record;

    public RestartRecordView(RestartRecord record) {
        this.record = record;
    }

    /** The records as CSV: the header and one row per record. */
    public static String csv(List<RestartRecord> records) {
        StringBuilder csv = new StringBuilder(RecordCsv.headerLine());
        records.forEach(record -> csv.append(new RestartRecordView(record).csvLine()));
        return csv.toString();
    }

    /** The CSV header line, with its CRLF: how a streamed export starts. */
    static String csvHeaderLine() {
        return RecordCsv.headerLine();
    }

    /** This record's CSV row, with its CRLF: one record of a streamed export. */
    String csvLine() {
        return RecordCsv.line(RecordCsv.row(record, phaseOffsets(), moments().values()));
    }

    /** The records as a JSON array of the history's objects. */
    public static String json(List<RestartRecord> records, JsonMapper json) {
        ArrayNode array = json.createArrayNode();
        records.forEach(record -> array.add(new RestartRecordView(record).json(json)));
        return json.writeValueAsString(array);
    }

    /** The phases reached, in the order of the phases, each with its offset from engine start. */
    Map<Phase, Duration> phaseOffsets() {
        Map<Phase, Duration> offsets = new EnumMap<>(Phase.class);
        for (Phase phase : Phase.values()) {
            Instant at = record.verdict().phases().get(phase);
            if (at != null) {
                offsets.put(phase, Duration.between(record.when().engineStart(), at));
            }
        }
        return offsets;
    }

    /** The memory moments, in the order of a cycle, by their names in the JSON. */
    Map<String, @Nullable MemoryMoment> moments() {
        Map<String, @Nullable MemoryMoment> moments = new LinkedHashMap<>();
        moments.put("beforeStart", record.memory().beforeStart());
        moments.put("atReady", record.memory().atReady());
        moments.put("afterStop", record.memory().afterStop());
        return moments;
    }

    // ---- the history's JSON object

    /** The history's object for this record ({@link RecordJson}). */
    public ObjectNode json(JsonMapper json) {
        return RecordJson.write(record, json.getNodeFactory());
    }

    /** Bytes per owner, by owner name. */
    private static Map<String, Long> byOwner(MemoryMoment moment, Function<Long, Long> unit) {
        Map<String, Long> owners = new TreeMap<>();
        moment.byOwner().forEach((owner, bytes) -> owners.put(owner.value(), unit.apply(bytes)));
        return owners;
    }

    // ---- /status

    /**
     * The entry {@code /status} shows: seconds to the millisecond, phases as offsets from engine start, MiB, and what
     * its "ready in" cell says ({@link ReadyIn}); {@code running}: whether the start is the engine's current one.
     */
    public Map<String, Object> status(boolean running) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", record.id());
        out.put("engineStart", record.when().engineStart().toString());
        out.put("engineStartSource", record.when().engineStartSource().value());
        out.put("firstSeen", record.when().firstSeen());
        out.put("comparable", record.when().comparable());
        out.put("sleep", statusSleep(record.when().slept()));
        out.put("path", record.pathEvidence().path().value());
        out.put("evidence", record.pathEvidence().evidence());
        out.put("fallbackReason", record.pathEvidence().fallbackReason());
        out.put("wrongWeightsFromCache", record.pathEvidence().wrongWeightsFromCache());
        out.put("outcome", record.verdict().outcome().value());
        out.put("notReadyReason", record.verdict().notReadyReason());
        out.put("startFailure", record.verdict().startFailure());
        Duration latency = record.verdict().readinessLatency();
        out.put("readinessLatencySeconds", latency == null ? null : millisecondSeconds(latency));
        out.put("readinessLatencyBound", record.verdict().readinessLatencyBound());
        out.put("readyIn", ReadyIn.of(record, running).status(record));
        Map<String, Double> phases = new LinkedHashMap<>();
        phaseOffsets().forEach((phase, offset) -> phases.put(phase.value(), millisecondSeconds(offset)));
        out.put("phaseOffsetsSeconds", phases);
        out.put("loggedDurations", record.verdict().loggedDurations());
        out.put("vllmVersion", record.engine().vllmVersion());
        out.put("model", record.engine().model());
        out.put("modelRoot", record.engine().modelRoot());
        out.put("revision", record.engine().revision());
        out.put("maxModelLen", record.engine().maxModelLen());
        out.put("kvCacheSizeTokens", record.engine().kvCacheSizeTokens());
        out.put("engineArgs", record.engine().engineArgs());
        out.put("probeConfigHash", record.probeConfigHash());
        out.put("readygateVersion", record.readygateVersion());
        out.put("node", record.node());
        Map<String, Object> memory = new LinkedHashMap<>();
        moments().forEach((name, moment) -> memory.put(name, moment == null ? null : statusMoment(moment)));
        out.put("memory", memory);
        Map<String, Object> recovery = new LinkedHashMap<>();
        recovery.put("kind", record.recovery().kind().value());
        recovery.put("words", record.recovery().kind().words());
        recovery.put("changes", record.recovery().changes());
        recovery.put(
                "snapshotAfterChange",
                record.recovery()
                        .snapshotAfterChange(
                                record.pathEvidence().path(), record.verdict().outcome()));
        out.put("recovery", recovery);
        out.put("stop", statusStop(record.stop()));
        out.put(
                "snapshotMismatches",
                record.snapshotMismatches().stream()
                        .map(SnapshotMismatch::describe)
                        .toList());
        out.put("configuration", record.engine().arguments().configurationHash());
        return out;
    }

    /**
     * The sleep a wake woke from: its level, when the engine fell asleep and for how long; null for a start of an engine
     * process. A wake's {@code memory.beforeStart} is the GPU while it slept.
     */
    private static @Nullable Map<String, Object> statusSleep(EngineStart.@Nullable Slept slept) {
        if (slept == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("level", slept.level());
        out.put("fellAsleep", slept.fellAsleep().toString());
        out.put("asleepSeconds", millisecondSeconds(slept.asleep()));
        return out;
    }

    /** How the start ended and the requests it lost; null while it runs. */
    private static @Nullable Map<String, Object> statusStop(@Nullable Stop stop) {
        if (stop == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("at", stop.at().toString());
        out.put("how", stop.how().value());
        out.put("requestsRunning", stop.requestsRunning());
        out.put("requestsWaiting", stop.requestsWaiting());
        out.put(
                "observedAt",
                stop.observedAt() == null ? null : stop.observedAt().toString());
        out.put("traffic", statusTraffic(stop.traffic()));
        Double lost = stop.requestsLost();
        out.put(
                "workLost",
                lost == null
                        ? "not known: the engine's /metrics gave no request counts"
                        : Math.round(lost) + " request(s) in flight were lost (no restart path resumes them)");
        return out;
    }

    /**
     * The gateway's count of a stop's requests in flight, as {@code /status} and the record's view show it; null when
     * gateway mode was off (or the requests in flight have not all ended yet).
     */
    public static @Nullable Map<String, Object> statusTraffic(Stop.@Nullable Traffic traffic) {
        if (traffic == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("inFlight", traffic.inFlight());
        out.put("finished", traffic.finished());
        out.put("cut", traffic.cut());
        out.put("cutTokens", traffic.cutTokens());
        return out;
    }

    private static Map<String, Object> statusMoment(MemoryMoment moment) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("at", moment.at().toString());
        out.put("usedMiB", MemoryMoment.mib(moment.usedBytes()));
        out.put("byOwnerMiB", byOwner(moment, MemoryMoment::mib));
        out.put(
                "processes",
                moment.processes().stream()
                        .map(holder -> Map.of(
                                "pid", holder.pid(),
                                "owner", holder.owner().value(),
                                "MiB", MemoryMoment.mib(holder.bytes())))
                        .toList());
        return out;
    }

    private static double millisecondSeconds(Duration duration) {
        return duration.toMillis() / 1000.0;
    }
}
