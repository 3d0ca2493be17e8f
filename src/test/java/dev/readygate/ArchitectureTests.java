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
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/architecture.md}'s table of packages and what each may import is the rule: every package of
 * {@code dev.readygate} is in it, and imports only what its row allows. The document's names hold too: every package
 * has its paragraph naming each of its main classes, every large class its reason, and every class name the document
 * gives in backticks is the code's.
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

    /**
     * A name in backticks that looks like a class: {@code package.Class}, {@code Class}, either with a member
     * ({@code .name} or {@code .name()}); the class name has a lower-case second letter, so that constants
     * ({@code READERS}, {@code MALFORMED_BODY}) are not taken for classes.
     */
    static final Pattern CLASS_NAME =
            Pattern.compile("^(?:([a-z]+)\\.)?([A-Z][a-z0-9][A-Za-z0-9]*)(?:\\.([A-Za-z_][A-Za-z0-9_]*)(?:\\(\\))?)?$");

    static final Pattern BACKTICKED = Pattern.compile("`([^`\\n]+)`");

    /**
     * Names the document may give that are not readygate's and that its code does not import: the designs it follows.
     * Every other outside name must be one the main code imports.
     */
    static final Set<String> MODELS = Set.of("CircuitBreakerStateMachine");

    /** The backticked names of {@code text} that look like classes (fenced blocks left out), each matched. */
    static List<Matcher> classNames(String text) {
        List<Matcher> names = new ArrayList<>();
        Matcher span = BACKTICKED.matcher(text.replaceAll("(?s)```.*?```", ""));
        while (span.find()) {
            Matcher name = CLASS_NAME.matcher(span.group(1));
            if (name.matches()) {
                names.add(name);
            }
        }
        return names;
    }

    /** Every main class (the simulator's too), top-level and nested, loaded without initializing it. */
    static List<Class<?>> mainClasses() throws IOException, ClassNotFoundException {
        List<Class<?>> classes = new ArrayList<>();
        Path root = Path.of("src/main/java");
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")
                            && !f.getFileName().toString().equals("package-info.java"))
                    .toList()) {
                String name = root.relativize(file).toString().replace('/', '.').replaceAll("\\.java$", "");
                addWithNested(Class.forName(name, false, ArchitectureTests.class.getClassLoader()), classes);
            }
        }
        return classes;
    }

    static void addWithNested(Class<?> type, List<Class<?>> classes) {
        classes.add(type);
        for (Class<?> nested : type.getDeclaredClasses()) {
            addWithNested(nested, classes);
        }
    }

    /** Whether {@code type} (or a type above it) declares a method, field or nested class named {@code member}. */
    static boolean hasMember(Class<?> type, String member) {
        for (Class<?> at = type; at != null; at = at.getSuperclass()) {
            if (Stream.of(at.getDeclaredMethods()).anyMatch(m -> m.getName().equals(member))
                    || Stream.of(at.getDeclaredFields())
                            .anyMatch(f -> f.getName().equals(member))
                    || Stream.of(at.getDeclaredClasses())
                            .anyMatch(c -> c.getSimpleName().equals(member))) {
                return true;
            }
        }
        return Stream.of(type.getInterfaces()).anyMatch(i -> hasMember(i, member));
    }

    /** The simple names of the types the main code imports from outside readygate (Spring, Reactor, the JDK). */
    static Set<String> importedFromOutside() throws IOException {
        Set<String> imported = new TreeSet<>();
        Pattern outside =
                Pattern.compile("^import (?!static )(?!dev\\.readygate\\.)[\\w.]+\\.([A-Z]\\w*);$", Pattern.MULTILINE);
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher name = outside.matcher(Files.readString(file));
                while (name.find()) {
                    imported.add(name.group(1));
                }
            }
        }
        return imported;
    }

    /** A test class by its simple name ({@code ListenerOrderTests}), or null. */
    static @Nullable Class<?> testClass(String simpleName) throws IOException, ClassNotFoundException {
        Path root = Path.of("src/test/java");
        try (Stream<Path> files = Files.walk(root)) {
            Path file = files.filter(f -> f.getFileName().toString().equals(simpleName + ".java"))
                    .findFirst()
                    .orElse(null);
            if (file == null) {
                return null;
            }
            String name = root.relativize(file).toString().replace('/', '.').replaceAll("\\.java$", "");
            return Class.forName(name, false, ArchitectureTests.class.getClassLoader());
        }
    }

    /**
     * Why a backticked class name of the document does not hold, or null when it does. Rules: {@code package.Class}
     * is that main class of {@code dev.readygate.package}; a bare {@code Class} is any main class, top-level or nested,
     * of that simple name, else a test class, else a type the main code imports, else one of {@link #MODELS}; a member
     * must be a method, field or nested class of the class (outside types' members are not checked).
     */
    static @Nullable String unresolved(Matcher name, List<Class<?>> main, Set<String> imported)
            throws IOException, ClassNotFoundException {
        String pkg = name.group(1);
        String simple = name.group(2);
        String member = name.group(3);
        List<Class<?>> candidates = new ArrayList<>(main.stream()
                .filter(type -> type.getSimpleName().equals(simple))
                .filter(type -> pkg == null || type.getPackageName().equals("dev.readygate." + pkg))
                .toList());
        if (candidates.isEmpty() && pkg == null) {
            Class<?> test = testClass(simple);
            if (test != null) {
                candidates.add(test);
            } else if (imported.contains(simple) || MODELS.contains(simple)) {
                return null;
            }
        }
        if (candidates.isEmpty()) {
            return "no class " + (pkg == null ? "" : "dev.readygate." + pkg + ".") + simple;
        }
        if (member != null && candidates.stream().noneMatch(type -> hasMember(type, member))) {
            return "no member " + member + " in " + candidates;
        }
        return null;
    }

    @Test
    void everyClassTheDocumentNamesExists() throws IOException, ClassNotFoundException {
        List<Class<?>> main = mainClasses();
        Set<String> imported = importedFromOutside();
        Map<String, String> unresolved = new TreeMap<>();
        for (Matcher name : classNames(Files.readString(Path.of("docs/architecture.md")))) {
            String why = unresolved(name, main, imported);
            if (why != null) {
                unresolved.put(name.group(), why);
            }
        }
        assertThat(unresolved)
                .as("backticked class names in docs/architecture.md that the code does not have")
                .isEmpty();
    }

    /** The paragraph under "The packages" that starts a package's description ({@code **`name`}), or "". */
    static String paragraphOf(String packages, String name) {
        return Stream.of(packages.split("\\n\\s*\\n"))
                .filter(paragraph -> paragraph.contains("**`" + name + "`"))
                .findFirst()
                .orElse("");
    }

    @Test
    void everyMainClassIsNamedInItsPackageParagraph() throws IOException {
        String document = Files.readString(Path.of("docs/architecture.md"));
        String packages = document.substring(document.indexOf("## The packages"));
        Map<String, List<String>> unnamed = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")
                            && !f.getFileName().toString().equals("package-info.java"))
                    .toList()) {
                Path relative = SOURCES.relativize(file);
                String pkg =
                        relative.getNameCount() == 1 ? "" : relative.getName(0).toString();
                if (pkg.equals("simulator")) {
                    continue;
                }
                String simple = relative.getFileName().toString().replace(".java", "");
                // A class of the root package (the entry point) may be named anywhere.
                String where = pkg.isEmpty() ? document : paragraphOf(packages, pkg);
                boolean named = classNames(where).stream()
                        .anyMatch(name -> name.group(2).equals(simple));
                if (!named) {
                    unnamed.computeIfAbsent(pkg, p -> new ArrayList<>()).add(simple);
                }
            }
        }
        assertThat(unnamed)
                .as("main classes not named (in backticks) in their package's paragraph of docs/architecture.md")
                .isEmpty();
    }

    /** The packages the dependency picture leaves out, as its caption says: {@code config} and the leaves. */
    static final Set<String> LEFT_OUT_OF_THE_PICTURE = Set.of("config", "secret", "logging", "statedir", "server");

    /** The arrows of the document's first {@code flowchart}, as "from -> to". */
    static Set<String> pictured() throws IOException {
        String document = Files.readString(Path.of("docs/architecture.md"));
        int start = document.indexOf("flowchart TD");
        String picture = document.substring(start, document.indexOf("```", start));
        Set<String> arrows = new TreeSet<>();
        for (String line : picture.lines().toList()) {
            String[] sides = line.replaceAll("\\[[^]]*]", "").split("-->");
            if (sides.length == 2) {
                for (String to : sides[1].split("&")) {
                    arrows.add(sides[0].strip() + " -> " + to.strip());
                }
            }
        }
        return arrows;
    }

    @Test
    void thePictureDrawsTheTableLessWhatItLeavesOut() throws IOException {
        Set<String> expected = new TreeSet<>();
        allowed()
                .forEach((from, may) -> may.stream()
                        .filter(to -> !LEFT_OUT_OF_THE_PICTURE.contains(from) && !LEFT_OUT_OF_THE_PICTURE.contains(to))
                        .forEach(to -> expected.add(from + " -> " + to)));
        assertThat(pictured())
                .as(
                        "the arrows of the picture in docs/architecture.md against its table (less %s)",
                        LEFT_OUT_OF_THE_PICTURE)
                .containsExactlyInAnyOrderElementsOf(expected);
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
