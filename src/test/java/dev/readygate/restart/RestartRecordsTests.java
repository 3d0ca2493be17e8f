package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The records kept at hand: a stop joined before or after its record is kept, and the record before a start's. */
class RestartRecordsTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final Stop STOP = new Stop(T0.plusSeconds(60), Stop.How.WENT_AWAY, 3.0, 1.0, T0.plusSeconds(59));

    final List<RestartRecord> written = new ArrayList<>();
    final RestartRecords records = new RestartRecords(List.of(), written::add);

    @Test
    void aStopWhenTheRecordIsKeptChangesAndWritesItAgain() {
        records.keep(RestartHistoryTests.minimal("s1"));

        records.stopped("s1", STOP);

        assertThat(records.history())
                .singleElement()
                .satisfies(r -> assertThat(r.stop()).isEqualTo(STOP));
        assertThat(written).hasSize(2);
    }

    @Test
    void aStopBeforeTheRecordIsKeptAppliesWhenItIs() {
        records.stopped("s1", STOP);
        assertThat(records.history()).isEmpty();

        RestartRecord kept = records.keep(RestartHistoryTests.minimal("s1"));

        assertThat(kept.stop()).isEqualTo(STOP);
        assertThat(written).containsExactly(kept);
    }

    @Test
    void keepAgainKeepsTheStopAlreadyJoined() {
        records.keep(RestartHistoryTests.minimal("s1"));
        records.stopped("s1", STOP);

        RestartRecord again =
                records.keep(RestartHistoryTests.withOutcome(RestartHistoryTests.minimal("s1"), Outcome.READY));

        assertThat(again.stop()).isEqualTo(STOP);
        assertThat(again.verdict().outcome()).isEqualTo(Outcome.READY);
    }

    @Test
    void beforeIsTheRecordKeptBeforeAStartsOrTheLatestForAStartNotKept() {
        assertThat(records.before("s1")).isNull();
        records.keep(RestartHistoryTests.minimal("s1"));
        records.keep(RestartHistoryTests.minimal("s2"));

        assertThat(records.before("s1")).isNull();
        assertThat(records.before("s2")).extracting(RestartRecord::id).isEqualTo("s1");
        assertThat(records.before("s3")).extracting(RestartRecord::id).isEqualTo("s2");
    }
}
