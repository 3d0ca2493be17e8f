package dev.readygate.simulator;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * A timed sequence of restarts and faults, read from YAML (the demo's: {@code classpath:simulator/demo.yaml}). Each step waits
 * {@code after} (from the previous step) and then does exactly one thing.
 *
 * @param name a name for logs and {@code /admin/state}
 * @param repeat whether the steps start over after the last one
 * @param steps the steps, in order
 */
record Scenario(String name, boolean repeat, List<Step> steps) {

    /** One step: wait, then act. */
    record Step(Duration after, Action action, @Nullable String note) {}

    /** What a step does. */
    sealed interface Action {
        record Restart(StartupPath path) implements Action {}

        record SetFault(Fault fault, boolean enabled, FaultSet.Scope scope) implements Action {}

        record ClearFaults() implements Action {}

        record Crash() implements Action {}

        record Stop() implements Action {}

        record Daemon(
                boolean start,
                @Nullable String checkpoint,
                @Nullable String layout) implements Action {}

        record Log(boolean rotate) implements Action {}

        /** The engine serves another revision from its next start on (a rollout); the daemon keeps what it holds. */
        record Switch(String revision) implements Action {}

        /** Users' traffic: this many clients send long streamed completions, one after the other (0: none). */
        record Traffic(int clients) implements Action {}

        /** Sleep mode: {@code POST /sleep?level=N} (needs {@code readygate.simulator.sleep-mode}). */
        record Sleep(int level) implements Action {}

        /** Sleep mode: {@code POST /wake_up} with these tags (none: every sleeping tag). */
        record Wake(List<String> tags) implements Action {}

        /** Sleep mode: {@code POST /collective_rpc} {@code {"method": "reload_weights"}} (after a level 2 wake). */
        record ReloadWeights() implements Action {}

        record Note() implements Action {}
    }

    private static final Set<String> ACTIONS = Set.of(
            "restart",
            "fault",
            "clear-faults",
            "crash",
            "stop",
            "daemon",
            "log",
            "switch",
            "traffic",
            "sleep",
            "wake",
            "reload-weights",
            "note");

    /** The prefix of a scenario that ships in the jar: {@code classpath:simulator/demo.yaml}. */
    static final String CLASSPATH = "classpath:";

    /**
     * Reads the scenario {@code readygate.simulator.scenario} names: {@code classpath:} and a resource, or a file's
     * path (relative to the working directory; {@code file:} in front is allowed).
     */
    static Scenario load(String location) {
        if (location.startsWith(CLASSPATH)) {
            String resource = location.substring(CLASSPATH.length()).replaceFirst("^/+", "");
            InputStream in = Scenario.class.getClassLoader().getResourceAsStream(resource);
            if (in == null) {
                throw new IllegalArgumentException(
                        "readygate.simulator.scenario: no " + resource + " on the class path (was " + location + ")");
            }
            try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                return parse(yaml().load(reader), location);
            } catch (IOException ex) {
                throw new IllegalArgumentException(
                        "readygate.simulator.scenario: cannot read " + location + ": " + ex.getMessage(), ex);
            }
        }
        Path file = Path.of(location.startsWith("file:") ? location.substring("file:".length()) : location);
        try (Reader reader = Files.newBufferedReader(file)) {
            return parse(yaml().load(reader), location);
        } catch (IOException ex) {
            throw new IllegalArgumentException(
                    "readygate.simulator.scenario: cannot read " + location + " (from "
                            + Path.of("").toAbsolutePath() + "): " + ex
                            + "; the demo's own is classpath:simulator/demo.yaml",
                    ex);
        }
    }

    private static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

    /** This scenario with every step's wait multiplied by {@code factor} ({@code readygate.simulator.time-scale}). */
    Scenario scaled(double factor) {
        return new Scenario(
                name,
                repeat,
                steps.stream()
                        .map(step ->
                                new Step(SimulatorProperties.scaled(step.after(), factor), step.action(), step.note()))
                        .toList());
    }

    static Scenario parse(@Nullable Object document, String source) {
        if (!(document instanceof Map<?, ?> root)) {
            throw new IllegalArgumentException("scenario " + source + ": expected a mapping with 'steps'");
        }
        Object steps = root.get("steps");
        if (!(steps instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalArgumentException("scenario " + source + ": 'steps' must be a non-empty list");
        }
        List<Step> parsed = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            String where = "scenario " + source + " step " + (i + 1);
            if (!(list.get(i) instanceof Map<?, ?> step)) {
                throw new IllegalArgumentException(where + ": expected a mapping");
            }
            parsed.add(step(step, where));
        }
        Object name = root.get("name");
        return new Scenario(
                name == null ? source : name.toString(), Boolean.TRUE.equals(root.get("repeat")), List.copyOf(parsed));
    }

    private static Step step(Map<?, ?> step, String where) {
        List<String> actions = step.keySet().stream()
                .map(String::valueOf)
                .filter(ACTIONS::contains)
                .toList();
        Object note = step.get("note");
        if (actions.size() > 1 && actions.contains("note")) {
            actions = actions.stream().filter(a -> !a.equals("note")).toList();
        }
        if (actions.size() != 1) {
            throw new IllegalArgumentException(where + ": needs exactly one of " + ACTIONS + ", found " + actions);
        }
        Duration after;
        try {
            Object value = step.get("after");
            after = value == null ? Duration.ZERO : DurationStyle.detectAndParse(value.toString());
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(where + ": 'after' is not a duration: " + step.get("after"), ex);
        }
        if (after.isNegative()) {
            throw new IllegalArgumentException(where + ": 'after' must not be negative");
        }
        try {
            return new Step(after, action(actions.getFirst(), step), note == null ? null : note.toString());
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(where + ": " + ex.getMessage(), ex);
        }
    }

    private static Action action(String kind, Map<?, ?> step) {
        Object value = step.get(kind);
        return switch (kind) {
            case "restart" -> new Action.Restart(StartupPath.fromValue(String.valueOf(value)));
            case "fault" ->
                new Action.SetFault(
                        Fault.fromValue(String.valueOf(value)),
                        !Boolean.FALSE.equals(step.get("enabled")),
                        scope(step.get("scope")));
            case "clear-faults" -> new Action.ClearFaults();
            case "crash" -> new Action.Crash();
            case "stop" -> new Action.Stop();
            case "daemon" -> daemon(String.valueOf(value), string(step.get("checkpoint")), string(step.get("layout")));
            case "log" -> log(String.valueOf(value));
            case "switch" -> switchRevision(value == null ? null : value.toString());
            case "traffic" -> traffic(value);
            case "sleep" -> sleep(value);
            case "wake" -> wake(value);
            case "reload-weights" -> new Action.ReloadWeights();
            default -> new Action.Note();
        };
    }

    private static @Nullable String string(@Nullable Object value) {
        return value == null ? null : value.toString();
    }

    static FaultSet.Scope scope(@Nullable Object value) {
        if (value == null || value.toString().equals("inference")) {
            return FaultSet.Scope.INFERENCE;
        }
        if (value.toString().equals("all")) {
            return FaultSet.Scope.ALL;
        }
        throw new IllegalArgumentException("unknown fault scope '" + value + "' (expected inference or all)");
    }

    static Action daemon(String action, @Nullable String checkpoint, @Nullable String layout) {
        return switch (action) {
            case "start" -> new Action.Daemon(true, checkpoint, layout);
            case "stop" -> new Action.Daemon(false, null, null);
            default ->
                throw new IllegalArgumentException("unknown daemon action '" + action + "' (expected start or stop)");
        };
    }

    static Action switchRevision(@Nullable String revision) {
        if (revision == null || revision.isBlank()) {
            throw new IllegalArgumentException("switch needs a revision, e.g. 'switch: v2'");
        }
        return new Action.Switch(revision);
    }

    static Action traffic(@Nullable Object clients) {
        try {
            int count = Integer.parseInt(String.valueOf(clients).strip());
            if (count >= 0) {
                return new Action.Traffic(count);
            }
        } catch (NumberFormatException ex) {
            // named below
        }
        throw new IllegalArgumentException(
                "traffic needs a number of clients, 0 or more, e.g. 'traffic: 3' (was " + clients + ")");
    }

    static Action sleep(@Nullable Object level) {
        String text = String.valueOf(level).strip();
        if (text.equals("1") || text.equals("2")) {
            return new Action.Sleep(Integer.parseInt(text));
        }
        throw new IllegalArgumentException("sleep needs a level, 1 or 2, e.g. 'sleep: 1' (was " + level + ")");
    }

    static Action wake(@Nullable Object tags) {
        String text = String.valueOf(tags).strip();
        if (text.equals("all")) {
            return new Action.Wake(List.of());
        }
        List<String> list =
                java.util.Arrays.stream(text.split(",")).map(String::strip).toList();
        if (list.isEmpty() || !EngineSleep.TAGS.containsAll(list)) {
            throw new IllegalArgumentException(
                    "wake needs all, or tags among weights and kv_cache, e.g. 'wake: all' or 'wake: weights' (was "
                            + tags + ")");
        }
        return new Action.Wake(list);
    }

    static Action log(String action) {
        return switch (action) {
            case "rotate" -> new Action.Log(true);
            case "truncate" -> new Action.Log(false);
            default ->
                throw new IllegalArgumentException("unknown log action '" + action + "' (expected rotate or truncate)");
        };
    }
}
