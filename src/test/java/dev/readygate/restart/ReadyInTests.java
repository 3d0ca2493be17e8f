package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.StartSource;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The restart history's "ready in" cell for every outcome (issue 25 item 5): a start whose outcome is {@code ready}
 * never says "never", in red or otherwise; only a start that ended without being verified ready does.
 */
class ReadyInTests {

    @ParameterizedTest(name = "{0}, latency {1}, bound {2}, {3}, first seen {4}, running {5} -> {6} \"{7}\"")
    @CsvSource(
            delimiter = '|',
            value = {
                // Verified ready, timed from the engine's own start time.
                "READY     | true  | false | PROCESS_START_TIME | false | false | MEASURED     | 12.50\u00a0s",
                "READY     | true  | false | LOG                | false | true  | MEASURED     | 12.50\u00a0s",
                // Verified ready, timed from what readygate saw: a bound, either way.
                "READY     | true  | true  | OBSERVED_DOWN      | false | false | AT_MOST      | \u2264\u00a012.50\u00a0s",
                "READY     | true  | true  | FIRST_OBSERVED     | false | false | AT_LEAST     | \u2265\u00a012.50\u00a0s",
                "READY     | true  | true  | PROCESS_START_TIME | false | false | AT_LEAST     | \u2265\u00a012.50\u00a0s",
                // Verified ready beside readygate's own start: no latency, and not an alarm.
                "READY     | false | false | FIRST_OBSERVED     | true  | false | FIRST_SEEN   | first seen",
                "READY     | false | false | FIRST_OBSERVED     | true  | true  | FIRST_SEEN   | first seen",
                "READY     | false | false | LOG                | false | false | NOT_MEASURED | not measured",
                // Not verified ready: still running, or over.
                "NOT_READY | false | false | LOG                | false | true  | NOT_YET      | not yet",
                "NOT_READY | false | false | LOG                | false | false | NEVER        | never",
                "FAILED    | false | false | LOG                | false | false | NEVER        | never",
                "FAILED    | false | false | LOG                | false | true  | NEVER        | never",
                "UNKNOWN   | false | false | FIRST_OBSERVED     | false | false | UNKNOWN      | unknown",
            })
    void readyInSaysWhatTheStartReached(
            Outcome outcome,
            boolean latency,
            boolean bound,
            StartSource source,
            boolean firstSeen,
            boolean running,
            ReadyIn expected,
            String text) {
        ReadyIn cell = ReadyIn.of(outcome, latency, bound, source, firstSeen, running);

        assertThat(cell).isEqualTo(expected);
        assertThat(cell.text(latency ? Duration.ofMillis(12_500) : null)).isEqualTo(text);
        assertThat(cell.alarm()).isEqualTo(outcome != Outcome.READY && expected == ReadyIn.NEVER);
        if (outcome == Outcome.READY) {
            assertThat(cell.alarm()).isFalse();
            assertThat(cell.text(null)).doesNotContain("never");
        }
    }
}
