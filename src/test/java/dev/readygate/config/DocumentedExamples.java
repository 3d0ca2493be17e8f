package dev.readygate.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The configuration examples the project's documentation shows (README.md, docs/*.md), read from the markdown as a
 * reader sees them, so a test binds each exactly as written.
 *
 * <p>A YAML block is an {@code application.yaml} unless an HTML comment on the line before its fence says what else
 * it is:
 *
 * <ul>
 *   <li>{@code <!-- example: chart values -->}: values for {@code charts/readygate} ({@code helm install -f});
 *   <li>{@code <!-- example: simulator scenario -->}: a scenario file of the simulator;
 *   <li>{@code <!-- example: fragment under readygate.probe -->}: a deliberately partial block, meant to sit under the
 *       key named.
 * </ul>
 *
 * Any other comment fails the test, so no block is ever skipped unseen. Shell blocks give the command lines that pass
 * settings ({@code java -jar ... readygate.jar ... --readygate.x=y}, {@code docker run ... readygate ...}), and the
 * text anywhere gives the chart's {@code --set-json 'readygate.config=...'} examples.
 */
public final class DocumentedExamples {

    /** What a YAML block of the documentation is. */
    public enum Kind {
        APPLICATION,
        FRAGMENT,
        CHART_VALUES,
        SIMULATOR_SCENARIO
    }

    /**
     * One YAML block.
     *
     * @param file the markdown file
     * @param line the line of its opening fence (1-based)
     * @param kind what it is
     * @param under for a fragment, the key it sits under ({@code readygate.probe}), else null
     * @param yaml its text
     */
    public record YamlExample(
            Path file, int line, Kind kind, @Nullable String under, String yaml) {

        /** The block as a whole application.yaml: a fragment nested under its key. */
        public String asApplicationYaml() {
            if (under == null) {
                return yaml;
            }
            StringBuilder text = new StringBuilder();
            String[] keys = under.split("\\.");
            for (int i = 0; i < keys.length; i++) {
                text.append("  ".repeat(i)).append(keys[i]).append(":\n");
            }
            yaml.lines()
                    .forEach(line ->
                            text.append("  ".repeat(keys.length)).append(line).append('\n'));
            return text.toString();
        }

        @Override
        public String toString() {
            return file + ":" + line;
        }
    }

    /**
     * One command line that passes settings.
     *
     * @param file the markdown file
     * @param line its first line
     * @param simulator whether it runs the standalone simulator ({@code simulate})
     * @param settings its {@code --readygate.*} arguments, as written (an optional one's brackets removed)
     */
    public record CommandLine(Path file, int line, boolean simulator, List<String> settings) {

        @Override
        public String toString() {
            return file + ":" + line + " " + String.join(" ", settings);
        }
    }

    private static final Pattern FENCE = Pattern.compile("^\\s*```\\s*([a-z]*)\\s*$");

    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*example:\\s*(.*?)\\s*-->\\s*$");

    private static final Pattern SETTING = Pattern.compile("\\[?(--readygate\\.[^\\s\\]]+)\\]?");

    private static final Pattern SET_JSON = Pattern.compile("--set-json '(readygate\\.config)=([^']*)'");

    private DocumentedExamples() {}

    /** README.md and every docs/*.md, in a stable order. */
    public static List<Path> markdownFiles() {
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            List<Path> files = new ArrayList<>(List.of(Path.of("README.md")));
            docs.filter(file -> file.toString().endsWith(".md")).sorted().forEach(files::add);
            return files;
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Every YAML block of the documentation; a marker the test does not understand fails here. */
    public static List<YamlExample> yamlExamples() {
        List<YamlExample> examples = new ArrayList<>();
        for (Path file : markdownFiles()) {
            List<String> lines = read(file);
            for (Block block : blocks(lines)) {
                if (block.language().equals("yaml") || block.language().equals("yml")) {
                    examples.add(yamlExample(file, block, lines));
                }
            }
        }
        return examples;
    }

    /** The YAML blocks of one kind. */
    public static List<YamlExample> yamlExamples(Kind kind) {
        return yamlExamples().stream().filter(example -> example.kind() == kind).toList();
    }

    private static YamlExample yamlExample(Path file, Block block, List<String> lines) {
        int before = block.line() - 2;
        while (before >= 0 && lines.get(before).isBlank()) {
            before--;
        }
        Matcher marker = before >= 0 ? MARKER.matcher(lines.get(before)) : null;
        if (marker == null || !marker.matches()) {
            return new YamlExample(file, block.line(), Kind.APPLICATION, null, block.text());
        }
        String what = marker.group(1);
        if (what.equals("application")) {
            return new YamlExample(file, block.line(), Kind.APPLICATION, null, block.text());
        }
        if (what.equals("chart values")) {
            return new YamlExample(file, block.line(), Kind.CHART_VALUES, null, block.text());
        }
        if (what.equals("simulator scenario")) {
            return new YamlExample(file, block.line(), Kind.SIMULATOR_SCENARIO, null, block.text());
        }
        Matcher fragment =
                Pattern.compile("fragment under (readygate(\\.[a-z0-9-]+)*)").matcher(what);
        if (fragment.matches()) {
            return new YamlExample(file, block.line(), Kind.FRAGMENT, fragment.group(1), block.text());
        }
        throw new AssertionError(file + ":" + (before + 1) + ": unknown example marker '" + what + "' (use application,"
                + " chart values, simulator scenario or fragment under <key>)");
    }

    /** Every command line of a shell block that starts readygate or its simulator with {@code --readygate.*}. */
    public static List<CommandLine> commandLines() {
        List<CommandLine> commands = new ArrayList<>();
        for (Path file : markdownFiles()) {
            for (Block block : blocks(read(file))) {
                if (!block.language().equals("bash") && !block.language().equals("sh")) {
                    continue;
                }
                int line = block.line();
                StringBuilder command = new StringBuilder();
                int start = line + 1;
                for (String text : block.text().lines().toList()) {
                    line++;
                    if (command.isEmpty()) {
                        start = line;
                    }
                    String code = text.strip().startsWith("#") ? "" : text.replaceFirst("\\s+#.*$", "");
                    if (code.endsWith("\\")) {
                        command.append(code, 0, code.length() - 1).append(' ');
                        continue;
                    }
                    command.append(code);
                    commandLine(file, start, command.toString()).ifPresent(commands::add);
                    command.setLength(0);
                }
            }
        }
        return commands;
    }

    private static Optional<CommandLine> commandLine(Path file, int line, String command) {
        boolean readygate = command.contains("readygate.jar") || command.matches(".*docker run .*readygate( .*)?");
        if (!readygate || command.contains("helm ")) {
            return Optional.empty();
        }
        List<String> settings = new ArrayList<>();
        Matcher setting = SETTING.matcher(command);
        while (setting.find()) {
            settings.add(setting.group(1));
        }
        return settings.isEmpty()
                ? Optional.empty()
                : Optional.of(new CommandLine(file, line, command.contains(" simulate "), settings));
    }

    /** The JSON of every {@code --set-json 'readygate.config=...'} the documentation shows. */
    public static List<String> chartConfigJson() {
        List<String> json = new ArrayList<>();
        for (Path file : markdownFiles()) {
            Matcher setJson = SET_JSON.matcher(String.join("\n", read(file)));
            while (setJson.find()) {
                json.add(setJson.group(2));
            }
        }
        return json;
    }

    private record Block(int line, String language, String text) {}

    private static List<Block> blocks(List<String> lines) {
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            StringBuilder text = new StringBuilder();
            int close = i + 1;
            while (close < lines.size() && !FENCE.matcher(lines.get(close)).matches()) {
                text.append(lines.get(close)).append('\n');
                close++;
            }
            blocks.add(new Block(i + 1, open.group(1), text.toString()));
            i = close;
        }
        return blocks;
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
