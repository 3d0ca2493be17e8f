package dev.readygate.check;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The verdict of {@code readygate check} and its exit status: 0 promises correct gating, so a check with problems or
 * warnings (a llama-server without {@code /metrics}: no busy detection) exits 3, "would gate, with these limits".
 */
class CheckReportTests {

    private static CheckReport report(int problems, int failures) {
        CheckReport.Builder builder = new CheckReport.Builder("http://127.0.0.1:8080").section("engine");
        for (int i = 0; i < problems; i++) {
            builder.problem("problem " + i);
        }
        for (int i = 0; i < failures; i++) {
            builder.failure("failure " + i);
        }
        return builder.build();
    }

    @Test
    void theVerdictAndItsExitStatusFollowFromTheFailuresAndTheProblems() {
        record Row(int problems, int failures, CheckReport.Verdict verdict, int exit) {}
        for (Row row : new Row[] {
            new Row(0, 0, CheckReport.Verdict.GATES_CORRECTLY, 0),
            new Row(1, 0, CheckReport.Verdict.GATES_WITH_LIMITS, 3),
            new Row(3, 0, CheckReport.Verdict.GATES_WITH_LIMITS, 3),
            new Row(0, 1, CheckReport.Verdict.WOULD_NOT_GATE, 1),
            new Row(2, 1, CheckReport.Verdict.WOULD_NOT_GATE, 1),
        }) {
            CheckReport.Verdict verdict = report(row.problems(), row.failures()).verdict();
            assertThat(verdict).as(row.toString()).isEqualTo(row.verdict());
            assertThat(verdict.exitStatus()).as(row.toString()).isEqualTo(row.exit());
        }
    }

    @Test
    void eachVerdictIsPrintedWithItsExitStatus() {
        assertThat(report(0, 0).render()).contains("verdict: readygate would gate this engine correctly (exit 0)");
        assertThat(report(1, 0).render())
                .contains("  - problem 0\n")
                .contains("verdict: readygate would gate this engine, with the limits of the 1 problem or warning"
                        + " above (exit 3)")
                .doesNotContain("correctly");
        assertThat(report(2, 0).render()).contains("with the limits of the 2 problems and warnings above (exit 3)");
        assertThat(report(1, 1).render())
                .contains("verdict: readygate would NOT gate this engine correctly (exit 1):\n  - failure 0\n");
    }

    @Test
    void theExitStatusesAreDistinctAndNoneIsTheBadConfigurationOne() {
        assertThat(java.util.Arrays.stream(CheckReport.Verdict.values()).map(CheckReport.Verdict::exitStatus))
                .doesNotHaveDuplicates()
                .doesNotContain(CheckLauncher.BAD_CONFIGURATION);
    }
}
