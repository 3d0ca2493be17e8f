package dev.readygate.faultmatrix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault matrix at compressed intervals (issue 14, item 10): every simulator fault injected into a ready engine,
 * idle and under load, seen with its reason within the bound docs/readiness.md promises for these settings, and back
 * to 200 within its bound once cleared, without dropping again. The rows run on {@value #DEFAULT_LANES} lanes at once
 * ({@code -Dfault-matrix.lanes}; {@code -Dfault-matrix.faults=HANG,CRASH} runs only those); the
 * measured table is written to {@code target/fault-matrix/compressed.md}.
 *
 * <p>Under load, a fault only a heavy probe sees has no bound today (heavy probes wait for an idle engine and are
 * skipped while requests succeed: issue 16): its row checks that it is seen within the idle bound once the load stops,
 * and the table shows the gap. With {@code -Dfault-matrix.ready-engine-bounds=true} (to be the default once
 * issue 16 is in) those rows, idle and under load, are held to issue 16's 5 s.
 */
class FaultMatrixTests {

    static final int DEFAULT_LANES = 3;

    static final boolean READY_ENGINE = Boolean.getBoolean("fault-matrix.ready-engine-bounds");

    @TempDir
    static Path dir;

    static FaultMatrix matrix;
    static List<FaultMatrix.Result> results;

    @BeforeAll
    static void run() throws InterruptedException, IOException {
        matrix = new FaultMatrix(MatrixSettings.compressed(), READY_ENGINE);
        results = matrix.run(
                FaultMatrix.rows(System.getProperty("fault-matrix.faults", "")),
                Integer.getInteger("fault-matrix.lanes", DEFAULT_LANES),
                dir);
        Path out = Path.of("target", "fault-matrix");
        Files.createDirectories(out);
        Files.writeString(out.resolve("compressed.md"), matrix.table(results));
    }

    @TestFactory
    Stream<DynamicTest> everyFaultIsSeenWithItsReasonWithinItsBoundAndClearsWithinItsBound() {
        return results.stream().map(result -> dynamicTest(result.row().label(), () -> check(result)));
    }

    static void check(FaultMatrix.Result r) {
        assertThat(matrix.violations(r)).as("\n" + matrix.table(results)).isEmpty();
    }
}
