package dev.readygate.restart;

import static dev.readygate.restart.JsonSchema.BOOLEAN;
import static dev.readygate.restart.JsonSchema.DURATION;
import static dev.readygate.restart.JsonSchema.INSTANT;
import static dev.readygate.restart.JsonSchema.INTEGER;
import static dev.readygate.restart.JsonSchema.LONG;
import static dev.readygate.restart.JsonSchema.NUMBER;
import static dev.readygate.restart.JsonSchema.TEXT;
import static dev.readygate.restart.JsonSchema.TEXTS;
import static dev.readygate.restart.JsonSchema.array;
import static dev.readygate.restart.JsonSchema.object;
import static dev.readygate.restart.JsonSchema.properties;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.StartSource;
import dev.readygate.restart.JsonSchema.Codec;
import dev.readygate.restart.JsonSchema.Field;
import dev.readygate.restart.JsonSchema.InvalidRecordException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeCreator;
import tools.jackson.databind.node.ObjectNode;

/**
 * The history's JSON object of a {@link RestartRecord} (a line of {@code restarts.jsonl}, exported at
 * {@code /status/restarts.json}), written and read back from one schema: each field is declared once, with its name,
 * its type and what a missing or null value reads as, and both directions go through that declaration.
 *
 * <p>The object is flat, as it has always been: field names are the old record's component names (camelCase), in the
 * order of the nested records; every field is written (nulls as {@code null}), instants and the readiness latency as
 * ISO-8601 strings, enums as their snake_case values, map entries in a stable order (phases by time, the other maps by
 * key), memory in bytes; {@code comparable} is written for readers of the file and not read back.
 *
 * <p>Reading is forward compatible: unknown fields are ignored, a missing or null nullable field reads as null, a
 * missing list or map as empty, a missing boolean as false; a {@code path} this version does not know reads as
 * {@link RestartPath#UNKNOWN}, an outcome as not ready, a start source as first observed, an owner as other, and a
 * phase or a snapshot mismatch field is left out. A record without {@code readinessLatencyBound} (written before
 * readygate said so) has a bound latency when its engine start is not the engine's own
 * ({@link RestartRecord.Verdict#impliedBound}). A missing non-nullable field ({@code id}, {@code engineStart},
 * {@code engineStartSource}, {@code path}, {@code outcome}, {@code probeConfigHash}, {@code readygateVersion}) or a
 * value of the wrong type makes the object invalid.
 */
final class RecordJson {

    private RecordJson() {}

    /** The phases by time, then in their order; a phase a later version knows is left out when read. */
    private static final Codec<Map<Phase, Instant>> PHASES = new Codec<>(
            (phases, nodes) -> {
                ObjectNode object = nodes.objectNode();
                phases.entrySet().stream()
                        .sorted(Map.Entry.<Phase, Instant>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                        .forEach(phase -> object.put(
                                phase.getKey().value(), phase.getValue().toString()));
                return object;
            },
            (node, label) -> {
                Map<Phase, Instant> phases = new LinkedHashMap<>();
                properties(node, label).forEach((key, value) -> {
                    if (!value.isString()) {
                        throw new InvalidRecordException(label + " has a value that is not a string");
                    }
                    Instant at = INSTANT.read().apply(value, label);
                    Phase phase = Phase.of(key);
                    if (phase != null) {
                        phases.put(phase, at);
                    }
                });
                return phases;
            });

    /** Numbers by key; a non-finite number is not JSON: such a value (never logged by the engine) is left out. */
    private static final Codec<Map<String, Double>> NUMBERS = new Codec<>(
            (numbers, nodes) -> {
                ObjectNode object = nodes.objectNode();
                new TreeMap<>(numbers)
                        .entrySet().stream()
                                .filter(number -> Double.isFinite(number.getValue()))
                                .forEach(number -> object.put(number.getKey(), number.getValue()));
                return object;
            },
            (node, label) -> {
                Map<String, Double> numbers = new LinkedHashMap<>();
                properties(node, label).forEach((key, value) -> {
                    if (!value.isNumber()) {
                        throw new InvalidRecordException(label + " has a value that is not a number");
                    }
                    numbers.put(key, value.doubleValue());
                });
                return numbers;
            });

    private static final Codec<Map<String, String>> TEXT_MAP = new Codec<>(
            (texts, nodes) -> {
                ObjectNode object = nodes.objectNode();
                new TreeMap<>(texts).forEach(object::put);
                return object;
            },
            (node, label) -> {
                Map<String, String> texts = new LinkedHashMap<>();
                properties(node, label).forEach((key, value) -> {
                    if (!value.isString()) {
                        throw new InvalidRecordException(label + " has a value that is not a string");
                    }
                    texts.put(key, value.asString());
                });
                return texts;
            });

    /** Bytes by owner, by the owner's name; owners a later version knows read as other, their bytes added up. */
    private static final Codec<Map<Owner, Long>> BYTES_BY_OWNER = new Codec<>(
            (owners, nodes) -> {
                ObjectNode object = nodes.objectNode();
                Map<String, Long> byName = new TreeMap<>();
                owners.forEach((owner, bytes) -> byName.put(owner.value(), bytes));
                byName.forEach(object::put);
                return object;
            },
            (node, label) -> {
                Map<Owner, Long> owners = new LinkedHashMap<>();
                properties(node, label).forEach((owner, bytes) -> {
                    if (!bytes.isIntegralNumber() || !bytes.canConvertToLong()) {
                        throw new InvalidRecordException(label + " has a value that is not an integer");
                    }
                    owners.merge(Owner.of(owner), bytes.longValue(), Long::sum);
                });
                return owners;
            });

    private static final Field<@Nullable Integer> PID = Field.optional("pid", INTEGER);
    private static final Field<@Nullable String> OWNER = Field.optional("owner", TEXT);
    private static final Field<@Nullable Long> BYTES = Field.optional("bytes", LONG);

    /** A process holding memory; each of its fields is required. */
    private static final Codec<MemoryMoment.Holder> PROCESS = new Codec<>(
            (holder, nodes) -> {
                ObjectNode object = nodes.objectNode();
                PID.put(object, holder.pid());
                OWNER.put(object, holder.owner().value());
                BYTES.put(object, holder.bytes());
                return object;
            },
            (node, label) -> {
                Integer pid = PID.get(node);
                Long bytes = BYTES.get(node);
                String owner = OWNER.get(node);
                if (pid == null || bytes == null || owner == null) {
                    throw new InvalidRecordException(label + " has an incomplete process");
                }
                return new MemoryMoment.Holder(pid, Owner.of(owner), bytes);
            });

    private static final Codec<List<MemoryMoment.Holder>> PROCESSES = new Codec<>(
            (holders, nodes) -> {
                ArrayNode array = nodes.arrayNode();
                holders.forEach(holder -> array.add(PROCESS.write().apply(holder, array)));
                return array;
            },
            (node, label) -> {
                List<MemoryMoment.Holder> holders = new ArrayList<>();
                for (JsonNode process : array(node, label)) {
                    holders.add(PROCESS.read().apply(process, label));
                }
                return holders;
            });

    private static final Field<Instant> MOMENT_AT = Field.required("at", INSTANT);
    private static final Field<@Nullable Long> USED_BYTES = Field.optional("usedBytes", LONG);
    private static final Field<Map<Owner, Long>> BY_OWNER = Field.orElse("byOwner", BYTES_BY_OWNER, Map.of());
    private static final Field<List<MemoryMoment.Holder>> HOLDERS = Field.orElse("processes", PROCESSES, List.of());

    private static final Codec<MemoryMoment> MOMENT = new Codec<>(
            (moment, nodes) -> {
                ObjectNode object = nodes.objectNode();
                MOMENT_AT.put(object, moment.at());
                USED_BYTES.put(object, moment.usedBytes());
                BY_OWNER.put(object, moment.byOwner());
                HOLDERS.put(object, moment.processes());
                return object;
            },
            (node, label) -> {
                object(node, label);
                Long used = USED_BYTES.get(node);
                if (used == null) {
                    throw new InvalidRecordException(label + " has no usedBytes");
                }
                Map<Owner, Long> owners = BY_OWNER.in(label).get(node);
                List<MemoryMoment.Holder> holders = HOLDERS.in(label).get(node);
                return new MemoryMoment(MOMENT_AT.in(label).get(node), used, owners, holders);
            });

    private static final Field<@Nullable MemoryMoment> BEFORE_START = Field.optional("beforeStart", MOMENT);
    private static final Field<@Nullable MemoryMoment> AT_READY = Field.optional("atReady", MOMENT);
    private static final Field<@Nullable MemoryMoment> AFTER_STOP = Field.optional("afterStop", MOMENT);

    private static final Codec<CycleMemory> MEMORY = new Codec<>(
            (memory, nodes) -> {
                ObjectNode object = nodes.objectNode();
                BEFORE_START.put(object, memory.beforeStart());
                AT_READY.put(object, memory.atReady());
                AFTER_STOP.put(object, memory.afterStop());
                return object;
            },
            (node, label) -> {
                object(node, label);
                return new CycleMemory(
                        BEFORE_START.in(label).get(node),
                        AT_READY.in(label).get(node),
                        AFTER_STOP.in(label).get(node));
            });

    private static final Field<RecoveryKind> RECOVERY_KIND = Field.orElse(
            "kind", TEXT.as(RecoveryKind::value, (value, label) -> RecoveryKind.of(value)), RecoveryKind.UNKNOWN);
    private static final Field<List<String>> RECOVERY_CHANGES = Field.orElse("changes", TEXTS, List.of());

    private static final Codec<Recovery> RECOVERY = new Codec<>(
            (recovery, nodes) -> {
                ObjectNode object = nodes.objectNode();
                RECOVERY_KIND.put(object, recovery.kind());
                RECOVERY_CHANGES.put(object, recovery.changes());
                return object;
            },
            (node, label) -> {
                object(node, label);
                return new Recovery(RECOVERY_KIND.get(node), RECOVERY_CHANGES.get(node));
            });

    private static final Field<Instant> STOP_AT = Field.required("at", INSTANT).in("stop");
    private static final Field<Stop.How> STOP_HOW =
            Field.orElse("how", TEXT.as(Stop.How::value, (value, label) -> Stop.How.of(value)), Stop.How.WENT_AWAY);
    private static final Field<@Nullable Double> REQUESTS_RUNNING = Field.optional("requestsRunning", NUMBER);
    private static final Field<@Nullable Double> REQUESTS_WAITING = Field.optional("requestsWaiting", NUMBER);
    private static final Field<@Nullable Instant> OBSERVED_AT =
            Field.optional("observedAt", INSTANT).in("stop");

    private static final Field<Integer> TRAFFIC_IN_FLIGHT =
            Field.required("inFlight", INTEGER).in("stop.traffic");
    private static final Field<Integer> TRAFFIC_FINISHED =
            Field.required("finished", INTEGER).in("stop.traffic");
    private static final Field<Integer> TRAFFIC_CUT =
            Field.required("cut", INTEGER).in("stop.traffic");
    private static final Field<Long> TRAFFIC_CUT_TOKENS =
            Field.required("cutTokens", LONG).in("stop.traffic");

    private static final Codec<Stop.Traffic> TRAFFIC = new Codec<>(
            (traffic, nodes) -> {
                ObjectNode object = nodes.objectNode();
                TRAFFIC_IN_FLIGHT.put(object, traffic.inFlight());
                TRAFFIC_FINISHED.put(object, traffic.finished());
                TRAFFIC_CUT.put(object, traffic.cut());
                TRAFFIC_CUT_TOKENS.put(object, traffic.cutTokens());
                return object;
            },
            (node, label) -> {
                object(node, label);
                return new Stop.Traffic(
                        TRAFFIC_IN_FLIGHT.get(node),
                        TRAFFIC_FINISHED.get(node),
                        TRAFFIC_CUT.get(node),
                        TRAFFIC_CUT_TOKENS.get(node));
            });

    /** The gateway's count: written only when there is one, so a line without it is written back as it was read. */
    private static final Field<Stop.@Nullable Traffic> STOP_TRAFFIC =
            Field.optional("traffic", TRAFFIC).in("stop");

    private static final Codec<Stop> STOP = new Codec<>(
            (stop, nodes) -> {
                ObjectNode object = nodes.objectNode();
                STOP_AT.put(object, stop.at());
                STOP_HOW.put(object, stop.how());
                REQUESTS_RUNNING.put(object, stop.requestsRunning());
                REQUESTS_WAITING.put(object, stop.requestsWaiting());
                OBSERVED_AT.put(object, stop.observedAt());
                if (stop.traffic() != null) {
                    STOP_TRAFFIC.put(object, stop.traffic());
                }
                return object;
            },
            (node, label) -> {
                object(node, label);
                return new Stop(
                        STOP_AT.get(node),
                        STOP_HOW.get(node),
                        REQUESTS_RUNNING.get(node),
                        REQUESTS_WAITING.get(node),
                        OBSERVED_AT.get(node),
                        STOP_TRAFFIC.get(node));
            });

    private static final Field<String> MISMATCH_FIELD = Field.required("field", TEXT);
    private static final Field<String> MISMATCH_MANIFEST = Field.required("manifest", TEXT);
    private static final Field<String> MISMATCH_CURRENT = Field.required("current", TEXT);

    /** The mismatches; one of a field a later readygate checks is left out when read (this version does not know it). */
    private static final Codec<List<SnapshotMismatch>> MISMATCHES = new Codec<>(
            (mismatches, nodes) -> {
                ArrayNode array = nodes.arrayNode();
                mismatches.forEach(mismatch -> {
                    ObjectNode object = array.addObject();
                    MISMATCH_FIELD.put(object, mismatch.field().value());
                    MISMATCH_MANIFEST.put(object, mismatch.manifest());
                    MISMATCH_CURRENT.put(object, mismatch.current());
                });
                return array;
            },
            (node, label) -> {
                List<SnapshotMismatch> mismatches = new ArrayList<>();
                for (JsonNode element : array(node, label)) {
                    SnapshotMismatch.Field field = SnapshotMismatch.Field.of(MISMATCH_FIELD.get(element));
                    if (field != null) {
                        mismatches.add(new SnapshotMismatch(
                                field, MISMATCH_MANIFEST.get(element), MISMATCH_CURRENT.get(element)));
                    }
                }
                return mismatches;
            });

    // ---- the record's fields, in the order of the line

    private static final Field<String> ID = Field.required("id", TEXT);

    private static final Field<Instant> ENGINE_START = Field.required("engineStart", INSTANT);
    private static final Field<StartSource> ENGINE_START_SOURCE =
            Field.required("engineStartSource", TEXT.as(StartSource::value, (value, label) -> StartSource.of(value)));
    private static final Field<Boolean> FIRST_SEEN = Field.orElse("firstSeen", BOOLEAN, false);
    private static final Field<@Nullable Integer> SLEEP_LEVEL = Field.optional("sleepLevel", INTEGER);
    private static final Field<@Nullable Instant> FELL_ASLEEP = Field.optional("fellAsleep", INSTANT);
    /** Written for readers of the file ({@link RestartRecord.When#comparable()}); not read back. */
    private static final Field<Boolean> COMPARABLE = Field.orElse("comparable", BOOLEAN, true);

    private static final Field<RestartPath> PATH =
            Field.required("path", TEXT.as(RestartPath::value, (value, label) -> path(value)));
    private static final Field<List<String>> EVIDENCE = Field.orElse("evidence", TEXTS, List.of());
    private static final Field<@Nullable String> FALLBACK_REASON = Field.optional("fallbackReason", TEXT);
    private static final Field<Boolean> WRONG_WEIGHTS_FROM_CACHE =
            Field.orElse("wrongWeightsFromCache", BOOLEAN, false);

    private static final Field<Map<Phase, Instant>> PHASES_FIELD = Field.orElse("phases", PHASES, Map.of());
    private static final Field<Map<String, Double>> LOGGED_DURATIONS =
            Field.orElse("loggedDurations", NUMBERS, Map.of());
    private static final Field<Outcome> OUTCOME =
            Field.required("outcome", TEXT.as(Outcome::value, (value, label) -> Outcome.of(value)));
    private static final Field<@Nullable String> NOT_READY_REASON = Field.optional("notReadyReason", TEXT);
    private static final Field<@Nullable String> START_FAILURE = Field.optional("startFailure", TEXT);
    private static final Field<@Nullable Duration> READINESS_LATENCY = Field.optional("readinessLatency", DURATION);
    /** A line written before readygate said whether the latency is a bound: as {@link RestartRecord.Verdict#impliedBound}. */
    private static final Field<Boolean> READINESS_LATENCY_BOUND = new Field<>(
            "readinessLatencyBound",
            "readinessLatencyBound",
            BOOLEAN,
            line -> RestartRecord.Verdict.impliedBound(READINESS_LATENCY.get(line), ENGINE_START_SOURCE.get(line)));

    private static final Field<@Nullable String> VLLM_VERSION = Field.optional("vllmVersion", TEXT);
    private static final Field<@Nullable String> ENGINE_ARGS = Field.optional("engineArgs", TEXT);
    private static final Field<@Nullable String> MODEL = Field.optional("model", TEXT);
    private static final Field<@Nullable String> MODEL_ROOT = Field.optional("modelRoot", TEXT);
    private static final Field<@Nullable String> REVISION = Field.optional("revision", TEXT);
    private static final Field<@Nullable Integer> MAX_MODEL_LEN = Field.optional("maxModelLen", INTEGER);
    private static final Field<@Nullable Long> KV_CACHE_SIZE_TOKENS = Field.optional("kvCacheSizeTokens", LONG);

    private static final Field<String> PROBE_CONFIG_HASH = Field.required("probeConfigHash", TEXT);
    private static final Field<String> READYGATE_VERSION = Field.required("readygateVersion", TEXT);
    private static final Field<Map<String, String>> NODE = Field.orElse("node", TEXT_MAP, Map.of());
    private static final Field<CycleMemory> MEMORY_FIELD = Field.orElse("memory", MEMORY, CycleMemory.NONE);
    private static final Field<Recovery> RECOVERY_FIELD = Field.orElse("recovery", RECOVERY, Recovery.UNKNOWN);
    private static final Field<@Nullable Stop> STOP_FIELD = Field.optional("stop", STOP);
    private static final Field<List<SnapshotMismatch>> SNAPSHOT_MISMATCHES =
            Field.orElse("snapshotMismatches", MISMATCHES, List.of());

    /** The history's object of a record, its fields in the order of the line, built with {@code nodes}. */
    static ObjectNode write(RestartRecord record, JsonNodeCreator nodes) {
        ObjectNode line = nodes.objectNode();
        ID.put(line, record.id());
        RestartRecord.When when = record.when();
        ENGINE_START.put(line, when.engineStart());
        ENGINE_START_SOURCE.put(line, when.engineStartSource());
        FIRST_SEEN.put(line, when.firstSeen());
        COMPARABLE.put(line, when.comparable());
        EngineStart.Slept slept = when.slept();
        // Only a wake has them: every other line stays as it was written before wakes were recorded.
        JsonSchema.putPresent(line, SLEEP_LEVEL, slept == null ? null : slept.level());
        JsonSchema.putPresent(line, FELL_ASLEEP, slept == null ? null : slept.fellAsleep());
        RestartRecord.PathEvidence pathEvidence = record.pathEvidence();
        PATH.put(line, pathEvidence.path());
        EVIDENCE.put(line, pathEvidence.evidence());
        FALLBACK_REASON.put(line, pathEvidence.fallbackReason());
        WRONG_WEIGHTS_FROM_CACHE.put(line, pathEvidence.wrongWeightsFromCache());
        RestartRecord.Verdict verdict = record.verdict();
        PHASES_FIELD.put(line, verdict.phases());
        LOGGED_DURATIONS.put(line, verdict.loggedDurations());
        OUTCOME.put(line, verdict.outcome());
        NOT_READY_REASON.put(line, verdict.notReadyReason());
        START_FAILURE.put(line, verdict.startFailure());
        READINESS_LATENCY.put(line, verdict.readinessLatency());
        READINESS_LATENCY_BOUND.put(line, verdict.readinessLatencyBound());
        RestartRecord.Engine engine = record.engine();
        VLLM_VERSION.put(line, engine.vllmVersion());
        ENGINE_ARGS.put(line, engine.engineArgs());
        MODEL.put(line, engine.model());
        MODEL_ROOT.put(line, engine.modelRoot());
        REVISION.put(line, engine.revision());
        MAX_MODEL_LEN.put(line, engine.maxModelLen());
        KV_CACHE_SIZE_TOKENS.put(line, engine.kvCacheSizeTokens());
        PROBE_CONFIG_HASH.put(line, record.probeConfigHash());
        READYGATE_VERSION.put(line, record.readygateVersion());
        NODE.put(line, record.node());
        MEMORY_FIELD.put(line, record.memory());
        RECOVERY_FIELD.put(line, record.recovery());
        STOP_FIELD.put(line, record.stop());
        SNAPSHOT_MISMATCHES.put(line, record.snapshotMismatches());
        return line;
    }

    /**
     * The record of a history's object.
     *
     * @throws InvalidRecordException when it is not a restart record; the message names the field, never its value
     */
    static RestartRecord read(JsonNode line) {
        if (!line.isObject()) {
            throw new InvalidRecordException("not a JSON object");
        }
        return new RestartRecord(
                ID.get(line),
                new RestartRecord.When(
                        ENGINE_START.get(line), ENGINE_START_SOURCE.get(line), FIRST_SEEN.get(line), slept(line)),
                new RestartRecord.PathEvidence(
                        PATH.get(line),
                        EVIDENCE.get(line),
                        FALLBACK_REASON.get(line),
                        WRONG_WEIGHTS_FROM_CACHE.get(line)),
                new RestartRecord.Verdict(
                        PHASES_FIELD.get(line),
                        LOGGED_DURATIONS.get(line),
                        OUTCOME.get(line),
                        NOT_READY_REASON.get(line),
                        START_FAILURE.get(line),
                        READINESS_LATENCY.get(line),
                        READINESS_LATENCY_BOUND.get(line)),
                new RestartRecord.Engine(
                        VLLM_VERSION.get(line),
                        ENGINE_ARGS.get(line),
                        MODEL.get(line),
                        MODEL_ROOT.get(line),
                        REVISION.get(line),
                        MAX_MODEL_LEN.get(line),
                        KV_CACHE_SIZE_TOKENS.get(line)),
                PROBE_CONFIG_HASH.get(line),
                READYGATE_VERSION.get(line),
                NODE.get(line),
                MEMORY_FIELD.get(line),
                RECOVERY_FIELD.get(line),
                STOP_FIELD.get(line),
                SNAPSHOT_MISMATCHES.get(line));
    }

    /** The sleep a wake woke from: both its fields, or none (a start of an engine process). */
    private static EngineStart.@Nullable Slept slept(JsonNode line) {
        Integer level = SLEEP_LEVEL.get(line);
        Instant fellAsleep = FELL_ASLEEP.get(line);
        return level == null || fellAsleep == null
                ? null
                : new EngineStart.Slept(level, fellAsleep, ENGINE_START.get(line));
    }

    private static RestartPath path(String value) {
        for (RestartPath path : RestartPath.values()) {
            if (path.value().equals(value)) {
                return path;
            }
        }
        // A path a later readygate knows: the record is kept, its path is unknown to this version.
        return RestartPath.UNKNOWN;
    }
}
