package dev.readygate.restart;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners;
import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * Reads a restart record back from the history's JSON object ({@link RestartRecordView#json}).
 *
 * <p>Reading is forward compatible: unknown fields are ignored, a missing or null nullable field reads as null, a
 * missing list or map as empty, a missing boolean as false; a {@code path} this version does not know reads as
 * {@link RestartPath#UNKNOWN}, an outcome as not ready, a start source as first observed, an owner as other, and a
 * phase is left out. A record without {@code readinessLatencyBound} (written before readygate said so) has a bound
 * latency when its engine start is not the engine's own ({@link StartSource#fromEngine()}). A missing non-nullable field ({@code id}, {@code engineStart}, {@code engineStartSource},
 * {@code path}, {@code outcome}, {@code probeConfigHash}, {@code readygateVersion}) or a value of the wrong type makes
 * the object invalid.
 */
final class RestartRecordReader {

    private RestartRecordReader() {}

    /**
     * The record of a JSON object.
     *
     * @throws InvalidRecordException when it is not a restart record; the message names the field, never its value
     */
    static RestartRecord read(JsonNode node) {
        if (!node.isObject()) {
            throw new InvalidRecordException("not a JSON object");
        }
        return new RestartRecord(
                required(node, "id"),
                instant(required(node, "engineStart"), "engineStart"),
                StartSource.of(required(node, "engineStartSource")),
                bool(node, "firstSeen"),
                path(required(node, "path")),
                strings(node, "evidence"),
                optional(node, "fallbackReason"),
                bool(node, "wrongWeightsFromCache"),
                phases(node),
                numbers(node, "loggedDurations"),
                Outcome.of(required(node, "outcome")),
                optional(node, "notReadyReason"),
                optional(node, "startFailure"),
                duration(node, "readinessLatency"),
                optional(node, "vllmVersion"),
                optional(node, "engineArgs"),
                optional(node, "model"),
                optional(node, "modelRoot"),
                optional(node, "revision"),
                integer(node, "maxModelLen"),
                longInteger(node, "kvCacheSizeTokens"),
                required(node, "probeConfigHash"),
                required(node, "readygateVersion"),
                stringMap(node, "node"),
                memory(node),
                recovery(node),
                stop(node),
                mismatches(node),
                latencyBound(node));
    }

    /**
     * Whether the record's readiness latency is a bound; a record written before readygate said so has one when its
     * engine start was not the engine's own (its other fields are read already).
     */
    private static boolean latencyBound(JsonNode node) {
        JsonNode bound = node.get("readinessLatencyBound");
        if (bound == null || bound.isNull()) {
            return duration(node, "readinessLatency") != null
                    && !StartSource.of(required(node, "engineStartSource")).fromEngine();
        }
        return bool(node, "readinessLatencyBound");
    }

    private static Recovery recovery(JsonNode node) {
        JsonNode recovery = node.get("recovery");
        if (recovery == null || recovery.isNull()) {
            return Recovery.UNKNOWN;
        }
        if (!recovery.isObject()) {
            throw new InvalidRecordException("recovery is not an object");
        }
        String kind = optional(recovery, "kind");
        return new Recovery(kind == null ? RecoveryKind.UNKNOWN : RecoveryKind.of(kind), strings(recovery, "changes"));
    }

    private static @Nullable Stop stop(JsonNode node) {
        JsonNode stop = node.get("stop");
        if (stop == null || stop.isNull()) {
            return null;
        }
        if (!stop.isObject()) {
            throw new InvalidRecordException("stop is not an object");
        }
        String observed = optional(stop, "observedAt");
        String how = optional(stop, "how");
        return new Stop(
                instant(required(stop, "at"), "stop.at"),
                how == null ? Stop.How.WENT_AWAY : Stop.How.of(how),
                number(stop, "requestsRunning"),
                number(stop, "requestsWaiting"),
                observed == null ? null : instant(observed, "stop.observedAt"));
    }

    private static List<SnapshotMismatch> mismatches(JsonNode node) {
        JsonNode value = node.get("snapshotMismatches");
        if (value == null || value.isNull()) {
            return List.of();
        }
        if (!value.isArray()) {
            throw new InvalidRecordException("snapshotMismatches is not an array");
        }
        List<SnapshotMismatch> mismatches = new ArrayList<>();
        for (JsonNode element : value) {
            SnapshotMismatch.Field field = SnapshotMismatch.Field.of(required(element, "field"));
            // A field a later readygate checks: this version does not know it, and leaves it out.
            if (field != null) {
                mismatches.add(
                        new SnapshotMismatch(field, required(element, "manifest"), required(element, "current")));
            }
        }
        return mismatches;
    }

    private static @Nullable Double number(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isNumber()) {
            throw new InvalidRecordException(field + " is not a number");
        }
        return value.doubleValue();
    }

    private static CycleMemory memory(JsonNode node) {
        Map<String, JsonNode> memory = object(node, "memory");
        return new CycleMemory(
                moment(memory.get("beforeStart"), "memory.beforeStart"),
                moment(memory.get("atReady"), "memory.atReady"),
                moment(memory.get("afterStop"), "memory.afterStop"));
    }

    private static @Nullable MemoryMoment moment(@Nullable JsonNode node, String field) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isObject()) {
            throw new InvalidRecordException(field + " is not an object");
        }
        Long used = longInteger(node, "usedBytes");
        if (used == null) {
            throw new InvalidRecordException(field + " has no usedBytes");
        }
        Map<ProcessOwners.Owner, Long> owners = new LinkedHashMap<>();
        object(node, "byOwner").forEach((owner, bytes) -> {
            if (!bytes.isIntegralNumber() || !bytes.canConvertToLong()) {
                throw new InvalidRecordException(field + ".byOwner has a value that is not an integer");
            }
            owners.merge(ProcessOwners.Owner.of(owner), bytes.longValue(), Long::sum);
        });
        List<MemoryMoment.Holder> holders = new ArrayList<>();
        JsonNode processes = node.get("processes");
        if (processes != null && !processes.isNull()) {
            if (!processes.isArray()) {
                throw new InvalidRecordException(field + ".processes is not an array");
            }
            for (JsonNode process : processes) {
                Integer pid = integer(process, "pid");
                Long bytes = longInteger(process, "bytes");
                String owner = optional(process, "owner");
                if (pid == null || bytes == null || owner == null) {
                    throw new InvalidRecordException(field + ".processes has an incomplete process");
                }
                holders.add(new MemoryMoment.Holder(pid, ProcessOwners.Owner.of(owner), bytes));
            }
        }
        return new MemoryMoment(instant(required(node, "at"), field + ".at"), used, owners, holders);
    }

    /** Why a JSON value is not a restart record; the message never quotes the value. */
    static final class InvalidRecordException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        InvalidRecordException(String message) {
            super(message, null, false, false);
        }
    }

    private static String required(JsonNode node, String field) {
        String value = optional(node, field);
        if (value == null) {
            throw new InvalidRecordException("no " + field);
        }
        return value;
    }

    private static @Nullable String optional(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isString()) {
            throw new InvalidRecordException(field + " is not a string");
        }
        return value.asString();
    }

    private static boolean bool(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return false;
        }
        if (!value.isBoolean()) {
            throw new InvalidRecordException(field + " is not a boolean");
        }
        return value.booleanValue();
    }

    private static @Nullable Integer integer(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt()) {
            throw new InvalidRecordException(field + " is not an integer");
        }
        return value.intValue();
    }

    private static @Nullable Long longInteger(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw new InvalidRecordException(field + " is not an integer");
        }
        return value.longValue();
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

    private static Instant instant(String value, String field) {
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException ex) {
            throw new InvalidRecordException(field + " is not an ISO-8601 instant");
        }
    }

    private static @Nullable Duration duration(JsonNode node, String field) {
        String value = optional(node, field);
        if (value == null) {
            return null;
        }
        try {
            return Duration.parse(value);
        } catch (DateTimeParseException ex) {
            throw new InvalidRecordException(field + " is not an ISO-8601 duration");
        }
    }

    private static List<String> strings(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return List.of();
        }
        if (!value.isArray()) {
            throw new InvalidRecordException(field + " is not an array");
        }
        List<String> strings = new ArrayList<>();
        for (JsonNode element : value) {
            if (!element.isString()) {
                throw new InvalidRecordException(field + " has an element that is not a string");
            }
            strings.add(element.asString());
        }
        return strings;
    }

    /** The phases this version knows; a later version's are left out. */
    private static Map<Phase, Instant> phases(JsonNode node) {
        Map<Phase, Instant> phases = new LinkedHashMap<>();
        object(node, "phases").forEach((key, value) -> {
            if (!value.isString()) {
                throw new InvalidRecordException("phases has a value that is not a string");
            }
            Instant at = instant(value.asString(), "phases");
            Phase phase = Phase.of(key);
            if (phase != null) {
                phases.put(phase, at);
            }
        });
        return phases;
    }

    private static Map<String, Double> numbers(JsonNode node, String field) {
        Map<String, Double> numbers = new LinkedHashMap<>();
        object(node, field).forEach((key, value) -> {
            if (!value.isNumber()) {
                throw new InvalidRecordException(field + " has a value that is not a number");
            }
            numbers.put(key, value.doubleValue());
        });
        return numbers;
    }

    private static Map<String, String> stringMap(JsonNode node, String field) {
        Map<String, String> strings = new LinkedHashMap<>();
        object(node, field).forEach((key, value) -> {
            if (!value.isString()) {
                throw new InvalidRecordException(field + " has a value that is not a string");
            }
            strings.put(key, value.asString());
        });
        return strings;
    }

    private static Map<String, JsonNode> object(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return Map.of();
        }
        if (!value.isObject()) {
            throw new InvalidRecordException(field + " is not an object");
        }
        Map<String, JsonNode> properties = new LinkedHashMap<>();
        value.properties().forEach(property -> properties.put(property.getKey(), property.getValue()));
        return properties;
    }
}
