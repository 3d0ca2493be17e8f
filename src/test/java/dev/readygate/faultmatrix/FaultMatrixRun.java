package dev.readygate.faultmatrix;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * Runs the fault matrix outside the unit tests, at readygate's default settings (what CI cannot afford: a fault only a
 * heavy probe sees takes up to a minute and a half on an idle engine, and up to two and a half under load), and writes its table into docs/readiness.md
 * between {@code <!-- fault-matrix:<settings>:begin -->} and its end marker:
 *
 * <pre>
 * ./mvnw -Pfault-matrix verify                                       # defaults, 4 lanes, about 10 minutes
 * ./mvnw -Pfault-matrix verify -Dfault-matrix.settings=compressed    # what FaultMatrixTests checks, a few minutes
 * </pre>
 *
 * <p>{@code -Dfault-matrix.lanes}, {@code -Dfault-matrix.faults=HANG,CRASH} as for {@link FaultMatrixTests}; {@code -Dfault-matrix.docs=false} writes only {@code target/fault-matrix/}. Exits
 * with 1 when a row breaks its promise (the table is written anyway, the broken rows listed).
 */
public final class FaultMatrixRun {

    private FaultMatrixRun() {}

    public static void main(String[] args) throws Exception {
        String name = System.getProperty("fault-matrix.settings", "defaults");
        MatrixSettings settings = name.equals("compressed") ? MatrixSettings.compressed() : MatrixSettings.defaults();
        int lanes = Integer.getInteger("fault-matrix.lanes", 4);
        FaultMatrix matrix = new FaultMatrix(settings);
        Instant started = Instant.now();
        Path dir = Files.createTempDirectory("fault-matrix-");
        List<FaultMatrix.Result> results =
                matrix.run(FaultMatrix.rows(System.getProperty("fault-matrix.faults", "")), lanes, dir);
        Duration took = Duration.between(started, Instant.now());
        String table = matrix.table(results);
        List<String> broken =
                results.stream().flatMap(r -> matrix.violations(r).stream()).toList();
        String measured = "Measured " + started.truncatedTo(ChronoUnit.SECONDS) + " at the " + settings.name()
                + " settings, " + lanes + " lanes at once (each its own simulator and readygate) on "
                + Runtime.getRuntime().availableProcessors() + " cores, in " + took.toMinutes() + " min"
                + (broken.isEmpty()
                        ? "; every row kept its promise."
                        : "; rows that broke their promise: " + String.join("; ", broken) + ".");
        Path out = Path.of("target", "fault-matrix");
        Files.createDirectories(out);
        Files.writeString(out.resolve(settings.name() + ".md"), measured + "\n\n" + table);
        if (Boolean.parseBoolean(System.getProperty("fault-matrix.docs", "true"))) {
            writeDocs(Path.of("docs", "readiness.md"), settings.name(), measured + "\n\n" + table);
        }
        System.out.println(measured);
        System.out.println(table);
        System.exit(broken.isEmpty() ? 0 : 1);
    }

    /** Replaces the block between the settings' markers in {@code docs}. */
    static void writeDocs(Path docs, String settings, String block) throws IOException {
        String text = Files.readString(docs);
        String begin = "<!-- fault-matrix:" + settings + ":begin -->";
        String end = "<!-- fault-matrix:" + settings + ":end -->";
        int from = text.indexOf(begin);
        int to = text.indexOf(end);
        if (from < 0 || to < from) {
            throw new IllegalStateException(docs + " has no " + begin + " ... " + end + " block");
        }
        Files.writeString(docs, text.substring(0, from + begin.length()) + "\n" + block + "\n" + text.substring(to));
    }
}
