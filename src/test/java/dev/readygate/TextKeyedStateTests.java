package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What is known about an engine start has one owner, the start ledger: a per-start map elsewhere is how six holders
 * with six eviction bounds grew before. Every instance field of readygate's main code (the simulator aside) that is a
 * map or set keyed by text is a row of {@code docs/architecture.md}'s table "Text-keyed state", which says what keys
 * it and why it is not in the ledger; a new one fails here until it is named and justified there.
 */
class TextKeyedStateTests {

    static final Pattern FIELD = Pattern.compile(
            "^\\s*private (?:final )?(?:Map|HashMap|LinkedHashMap|ConcurrentHashMap|Set|HashSet|LinkedHashSet)"
                    + "<String[,>][^;(]*\\s(\\w+)\\s*(?:=|;)",
            Pattern.MULTILINE);
    static final Pattern ROW = Pattern.compile("^\\| `([a-z]+)\\.([A-Za-z.]+)\\.(\\w+)` \\| (.+) \\| (.+) \\|$");

    /** The text-keyed instance fields in the code: package.Class.field (nested classes by their simple name). */
    static Set<String> inTheCode() throws IOException {
        Set<String> fields = new TreeSet<>();
        try (Stream<Path> files = Files.walk(ArchitectureTests.SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String pkg =
                        ArchitectureTests.SOURCES.relativize(file).getName(0).toString();
                if (pkg.equals("simulator")) {
                    continue;
                }
                String source = Files.readString(file);
                Matcher field = FIELD.matcher(source);
                while (field.find()) {
                    fields.add(pkg + "." + file.getFileName().toString().replace(".java", "") + "." + field.group(1));
                }
            }
        }
        return fields;
    }

    static Set<String> inTheTable() throws IOException {
        Set<String> rows = new TreeSet<>();
        for (Matcher row : ArchitectureTests.tableRows("| Field | Keyed by |", ROW)) {
            // A nested class's field is named Outer.Nested.field; its file is Outer's.
            String outer = row.group(2).contains(".")
                    ? row.group(2).substring(0, row.group(2).indexOf('.'))
                    : row.group(2);
            rows.add(row.group(1) + "." + outer + "." + row.group(3));
        }
        return rows;
    }

    @Test
    void everyTextKeyedFieldSaysWhatKeysItAndWhyItIsNotInTheLedger() throws IOException {
        assertThat(inTheTable())
                .as("docs/architecture.md, table \"Text-keyed state\": a row per field")
                .containsAll(inTheCode());
    }

    @Test
    void everyRowOfTheTableIsAFieldOfTheCode() throws IOException {
        assertThat(inTheCode()).as("rows of fields that are gone").containsAll(inTheTable());
    }

    @Test
    void theFieldPatternFindsAPerStartMapAndNotAnEnumMap() {
        assertThat(FIELD.matcher("    private final Map<String, EngineFacts> byStart = new LinkedHashMap<>();")
                        .find())
                .isTrue();
        assertThat(FIELD.matcher("    private final Set<String> recordedHere = new LinkedHashSet<>();")
                        .find())
                .isTrue();
        assertThat(FIELD.matcher("    private final Map<ProbeKind, ProbeReport> last = new EnumMap<>(ProbeKind.class);")
                        .find())
                .isFalse();
        assertThat(FIELD.matcher("    private static final Map<String, String> PATHS = Map.of(")
                        .find())
                .isFalse();
        assertThat(FIELD.matcher("    private Map<String, Object> circuitBreaker() {")
                        .find())
                .isFalse();
    }
}
