package dev.readygate.faultmatrix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.simulator.Fault;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fault matrix covers every fault the simulator can inject (a fault added to the simulator needs its row), and the
 * tables docs/readiness.md shows are the harness's ({@link FaultMatrixRun} writes them between their markers) with a
 * row for each fault, idle and under load: a row added to the matrix needs the tables measured again.
 */
class FaultCaseTests {

    @Test
    void everySimulatorFaultHasItsRow() {
        assertThat(Arrays.stream(FaultCase.values()).map(FaultCase::name))
                .as("FaultCase needs a row (its reason, how readygate sees it, how it clears) for each simulator Fault")
                .containsAll(Arrays.stream(Fault.values()).map(Fault::name).toList());
    }

    @ParameterizedTest
    @ValueSource(strings = {"defaults", "compressed"})
    void theDocsShowTheMeasuredTableWithEveryRow(String settings) throws IOException {
        String docs = Files.readString(Path.of("docs", "readiness.md"));
        String begin = "<!-- fault-matrix:" + settings + ":begin -->";
        String end = "<!-- fault-matrix:" + settings + ":end -->";
        assertThat(docs).contains(begin, end);
        String block = docs.substring(docs.indexOf(begin) + begin.length(), docs.indexOf(end));
        assertThat(block)
                .as(
                        "written by ./mvnw -Pfault-matrix verify%s",
                        settings.equals("defaults") ? "" : " -Dfault-matrix.settings=" + settings)
                .contains("Measured ", "at the " + settings + " settings");
        for (FaultMatrix.Row row : FaultMatrix.rows()) {
            assertThat(block)
                    .as("docs/readiness.md's %s table lacks %s: measure it again", settings, row.label())
                    .contains(
                            "| `" + row.fault().label + "` | " + row.condition().value() + " |");
        }
    }
}
