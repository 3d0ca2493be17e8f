package dev.readygate.simulator;

import java.util.Arrays;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Splits a Server-Sent Events body into its {@code data:} payloads, checking the framing on the way. */
final class Sse {

    static final JsonMapper JSON = JsonMapper.builder().build();

    private Sse() {}

    /** The data payloads, in order; fails when an event is not exactly one {@code data: } line. */
    static List<String> events(String body) {
        if (!body.endsWith("\n\n")) {
            throw new AssertionError("SSE body does not end with a blank line: " + tail(body));
        }
        return Arrays.stream(body.substring(0, body.length() - 2).split("\n\n", -1))
                .map(event -> {
                    if (!event.startsWith("data: ") || event.contains("\n")) {
                        throw new AssertionError("not a single data line: " + event);
                    }
                    return event.substring("data: ".length());
                })
                .toList();
    }

    /** The JSON events before {@code [DONE]}; fails when the stream does not end with {@code [DONE]}. */
    static List<JsonNode> jsonEvents(String body) {
        List<String> events = events(body);
        if (!events.getLast().equals("[DONE]")) {
            throw new AssertionError("stream does not end with [DONE]: " + tail(body));
        }
        return events.subList(0, events.size() - 1).stream().map(JSON::readTree).toList();
    }

    private static String tail(String body) {
        return body.length() > 200 ? body.substring(body.length() - 200) : body;
    }
}
