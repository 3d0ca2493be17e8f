package dev.readygate.restart;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeCreator;
import tools.jackson.databind.node.ObjectNode;

/**
 * What {@link RecordJson} declares its fields with: a {@link Codec} per kind of value (how it is written, how it is
 * read back) and a {@link Field} per name (its codec and what it reads as when missing or null). Reading is strict
 * about types (a number is not a string) and says what is wrong with an {@link InvalidRecordException} that names the
 * field, never its value.
 */
final class JsonSchema {

    private JsonSchema() {}

    /**
     * How one kind of value is written, and read back from a node that is there and not null.
     *
     * @param write the node of a value, made with the creator given
     * @param read the value of a node, or an {@link InvalidRecordException} naming the label given
     */
    record Codec<T>(BiFunction<T, JsonNodeCreator, JsonNode> write, BiFunction<JsonNode, String, T> read) {

        /** Values written as this codec's: {@code to} one, read back {@code from} one. */
        <U> Codec<U> as(Function<U, T> to, BiFunction<T, String, U> from) {
            return new Codec<>(
                    (value, nodes) -> write.apply(to.apply(value), nodes),
                    (node, label) -> from.apply(read.apply(node, label), label));
        }
    }

    static final Codec<String> TEXT =
            scalar("a string", JsonNode::isString, JsonNode::asString, (v, n) -> n.stringNode(v));
    static final Codec<Boolean> BOOLEAN =
            scalar("a boolean", JsonNode::isBoolean, JsonNode::booleanValue, (v, n) -> n.booleanNode(v));
    static final Codec<Integer> INTEGER = scalar(
            "an integer",
            node -> node.isIntegralNumber() && node.canConvertToInt(),
            JsonNode::intValue,
            (v, n) -> n.numberNode(v));
    static final Codec<Long> LONG = scalar(
            "an integer",
            node -> node.isIntegralNumber() && node.canConvertToLong(),
            JsonNode::longValue,
            (v, n) -> n.numberNode(v));
    static final Codec<Double> NUMBER =
            scalar("a number", JsonNode::isNumber, JsonNode::doubleValue, (v, n) -> n.numberNode(v));
    static final Codec<Instant> INSTANT = parsed(Instant::parse, "an ISO-8601 instant");
    static final Codec<Duration> DURATION = parsed(Duration::parse, "an ISO-8601 duration");

    static final Codec<List<String>> TEXTS = new Codec<>(
            (values, nodes) -> {
                ArrayNode array = nodes.arrayNode();
                values.forEach(array::add);
                return array;
            },
            (node, label) -> {
                List<String> strings = new ArrayList<>();
                for (JsonNode element : array(node, label)) {
                    if (!element.isString()) {
                        throw new InvalidRecordException(label + " has an element that is not a string");
                    }
                    strings.add(element.asString());
                }
                return strings;
            });

    private static <T> Codec<T> scalar(
            String what,
            Predicate<JsonNode> is,
            Function<JsonNode, T> value,
            BiFunction<T, JsonNodeCreator, JsonNode> write) {
        return new Codec<>(write, (node, label) -> {
            if (!is.test(node)) {
                throw new InvalidRecordException(label + " is not " + what);
            }
            return value.apply(node);
        });
    }

    /** A value written as its {@code toString()} and read back by {@code parse}. */
    private static <T> Codec<T> parsed(Function<String, T> parse, String what) {
        return TEXT.as(Object::toString, (text, label) -> {
            try {
                return parse.apply(text);
            } catch (DateTimeParseException ex) {
                throw new InvalidRecordException(label + " is not " + what);
            }
        });
    }

    /**
     * A named field of an object: how its value is written and read back, and what it reads as when missing or null.
     *
     * @param name the field's name in its object
     * @param label how a message names it (its path from the line, where it is nested)
     * @param codec how its value is written and read
     * @param absent what it reads as when missing or null, from the object it is missing from
     */
    record Field<T>(String name, String label, Codec<T> codec, Function<JsonNode, T> absent) {

        /** A field without which the object is invalid. */
        static <T> Field<T> required(String name, Codec<T> codec) {
            return new Field<>(name, name, codec, object -> {
                throw new InvalidRecordException("no " + name);
            });
        }

        /** A field that reads as null when missing. */
        static <T> Field<@Nullable T> optional(String name, Codec<T> codec) {
            Codec<@Nullable T> nullable = new Codec<>(
                    (value, nodes) -> codec.write().apply(value, nodes),
                    (node, label) -> codec.read().apply(node, label));
            return new Field<>(name, name, nullable, object -> null);
        }

        /** A field that reads as {@code fallback} when missing. */
        static <T> Field<T> orElse(String name, Codec<T> codec, T fallback) {
            return new Field<>(name, name, codec, object -> fallback);
        }

        /** This field named in messages as nested in {@code parent}. */
        Field<T> in(String parent) {
            return new Field<>(name, parent + "." + name, codec, absent);
        }

        /** Its value in {@code object}. */
        T get(JsonNode object) {
            JsonNode value = object.get(name);
            return value == null || value.isNull()
                    ? absent.apply(object)
                    : codec.read().apply(value, label);
        }

        /** Writes {@code value} into {@code object}: null as {@code null}. */
        void put(ObjectNode object, @Nullable T value) {
            if (value == null) {
                object.putNull(name);
            } else {
                object.set(name, codec.write().apply(value, object));
            }
        }
    }

    /**
     * Writes a field only where it has a value: a field only some records have (a wake's sleep), left out of the others
     * so that their lines stay as they were written before it existed.
     */
    static <T> void putPresent(ObjectNode object, Field<@Nullable T> field, @Nullable T value) {
        if (value != null) {
            field.put(object, value);
        }
    }

    /** {@code node}, when it is an array. */
    static JsonNode array(JsonNode node, String label) {
        if (!node.isArray()) {
            throw new InvalidRecordException(label + " is not an array");
        }
        return node;
    }

    /** Refuses {@code node} unless it is an object. */
    static void object(JsonNode node, String label) {
        if (!node.isObject()) {
            throw new InvalidRecordException(label + " is not an object");
        }
    }

    /** The properties of {@code node}, when it is an object, in its order. */
    static Map<String, JsonNode> properties(JsonNode node, String label) {
        object(node, label);
        Map<String, JsonNode> properties = new LinkedHashMap<>();
        node.properties().forEach(property -> properties.put(property.getKey(), property.getValue()));
        return properties;
    }

    /** Why a JSON value is not a restart record; the message never quotes the value. */
    static final class InvalidRecordException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        InvalidRecordException(String message) {
            super(message, null, false, false);
        }
    }
}
