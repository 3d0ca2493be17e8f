package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/architecture.md}'s table of packages and what each may import is the rule: every package of
 * {@code dev.readygate} is in it, and imports only what its row allows.
 */
class ArchitectureTests {

    static final Path SOURCES = Path.of("src/main/java/dev/readygate");
    static final Pattern ROW = Pattern.compile("^\\| `([a-z]+)` \\| (.*) \\|$");
    static final Pattern IMPORT =
            Pattern.compile("^import (?:static )?dev\\.readygate\\.([a-z]+)\\.", Pattern.MULTILINE);

    /**
     * The rows of the table of {@code docs/architecture.md} whose header line starts with {@code header} that match
     * {@code row} (each a matched {@link Matcher}), in their order; the table ends at the first blank line.
     */
    static List<Matcher> tableRows(String header, Pattern row) throws IOException {
        List<Matcher> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(Path.of("docs/architecture.md"))) {
            if (line.startsWith(header)) {
                inTable = true;
            } else if (inTable && line.isBlank()) {
                break;
            } else if (inTable) {
                Matcher matched = row.matcher(line);
                if (matched.matches()) {
                    rows.add(matched);
                }
            }
        }
        return rows;
    }

    /** The table: package, the packages it may import. */
    static Map<String, Set<String>> allowed() throws IOException {
        Map<String, Set<String>> allowed = new LinkedHashMap<>();
        for (Matcher row : tableRows("| Package | May import |", ROW)) {
            Set<String> may = new TreeSet<>();
            Matcher name = Pattern.compile("`([a-z]+)`").matcher(row.group(2));
            while (name.find()) {
                may.add(name.group(1));
            }
            allowed.put(row.group(1), may);
        }
        return allowed;
    }

    /** The code: package, the packages its main sources import. */
    static Map<String, Set<String>> imported() throws IOException {
        Map<String, Set<String>> imported = new TreeMap<>();
        try (Stream<Path> packages = Files.list(SOURCES)) {
            for (Path dir : packages.filter(Files::isDirectory).toList()) {
                String name = dir.getFileName().toString();
                Set<String> uses = new TreeSet<>();
                try (Stream<Path> files = Files.list(dir)) {
                    for (Path file :
                            files.filter(f -> f.toString().endsWith(".java")).toList()) {
                        Matcher use = IMPORT.matcher(Files.readString(file));
                        while (use.find()) {
                            uses.add(use.group(1));
                        }
                    }
                }
                uses.remove(name);
                imported.put(name, uses);
            }
        }
        return imported;
    }

    /** A main class this long (outside the simulator) needs a row of its own saying why (issue 26). */
    static final int LARGE_CLASS_LINES = 300;

    static final Pattern LARGE_ROW = Pattern.compile("^\\| `([A-Za-z.]+)` \\| (.*\\S.*) \\|$");

    /** The table of large classes: class (package-qualified below dev.readygate), why it is large. */
    static Map<String, String> largeClassesExplained() throws IOException {
        Map<String, String> explained = new TreeMap<>();
        for (Matcher row : tableRows("| Class | Why it is over ", LARGE_ROW)) {
            explained.put(row.group(1), row.group(2).strip());
        }
        return explained;
    }

    /** The main classes outside the simulator over {@link #LARGE_CLASS_LINES} lines, as {@code package.Class}. */
    static Set<String> largeClasses() throws IOException {
        Set<String> large = new TreeSet<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Path relative = SOURCES.relativize(file);
                if (relative.getNameCount() != 2
                        || relative.getName(0).toString().equals("simulator")) {
                    continue;
                }
                if (Files.readAllLines(file).size() > LARGE_CLASS_LINES) {
                    large.add(relative.getName(0) + "."
                            + relative.getFileName().toString().replace(".java", ""));
                }
            }
        }
        return large;
    }

    @Test
    void everyPackageHasItsParagraph() throws IOException {
        String document = Files.readString(Path.of("docs/architecture.md"));
        String packages = document.substring(document.indexOf("## The packages"));
        assertThat(imported().keySet())
                .as("packages without a paragraph under 'The packages' in docs/architecture.md")
                .allSatisfy(name -> assertThat(packages).contains("**`" + name + "`"));
    }

    @Test
    void everyLargeClassSaysWhyItIsLarge() throws IOException {
        // Both ways: a class that grew past the line gets a reason, and one that shrank below it leaves the table.
        assertThat(largeClassesExplained().keySet())
                .as(
                        "main classes over %d lines (outside the simulator) against the table 'Class | Why it is over"
                                + " ...' of docs/architecture.md",
                        LARGE_CLASS_LINES)
                .containsExactlyInAnyOrderElementsOf(largeClasses());
    }

    @Test
    void everyPackageIsInTheArchitectureTable() throws IOException {
        assertThat(allowed().keySet())
                .containsExactlyInAnyOrderElementsOf(imported().keySet());
    }

    @Test
    void everyPackageImportsOnlyWhatTheArchitectureTableAllows() throws IOException {
        Map<String, Set<String>> allowed = allowed();
        imported()
                .forEach((name, uses) -> assertThat(allowed.getOrDefault(name, Set.of()))
                        .as("what %s may import (docs/architecture.md)", name)
                        .containsAll(uses));
    }

    @Test
    void theTableListsNoImportTheCodeDoesNotMake() throws IOException {
        Map<String, Set<String>> imported = imported();
        List<String> unused = allowed().entrySet().stream()
                .flatMap(row -> row.getValue().stream()
                        .filter(may ->
                                !imported.getOrDefault(row.getKey(), Set.of()).contains(may))
                        .map(may -> row.getKey() + " -> " + may))
                .collect(Collectors.toList());
        assertThat(unused)
                .as("rows of docs/architecture.md the code does not need")
                .isEmpty();
        assertThat(Arrays.asList("readiness", "secret"))
                .allSatisfy(core -> assertThat(imported.get(core)).isEmpty());
        // config only the redaction policy, a leaf: its start-up messages show a bad URL without its password.
        assertThat(imported.get("config")).isSubsetOf("secret");
    }
}
