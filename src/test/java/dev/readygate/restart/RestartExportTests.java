package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class RestartExportTests {

    @TempDir
    Path stateDir;

    final JsonMapper json = JsonMapper.builder().build();

    RestartHistory history(DataSize maxFileSize, int files) {
        return new RestartHistory(stateDir.resolve(RestartHistory.FILE_NAME), maxFileSize, files, json);
    }

    static RestartRecord record(int i) {
        return at(RestartHistoryTests.full("start-" + i), RestartHistoryTests.START.plusSeconds(60L * i));
    }

    static RestartRecord at(RestartRecord r, Instant engineStart) {
        return TestRecords.from(r)
                .engineStart(engineStart)
                .readinessLatencyBound(null)
                .recovery(Recovery.UNKNOWN)
                .stop(null)
                .snapshotMismatches(List.of())
                .build();
    }

    static String body(RestartExport.@Nullable Streamed streamed) {
        assertThat(streamed).isNotNull();
        DataBuffer joined = DataBufferUtils.join(streamed.body()).block(Duration.ofSeconds(30));
        assertThat(joined).isNotNull();
        String text = joined.toString(StandardCharsets.UTF_8);
        DataBufferUtils.release(joined);
        return text;
    }

    RestartExport.Streamed export(RestartHistory history, RestartExport.Format format, RestartExport.Query query) {
        return new RestartExport(history, Schedulers.boundedElastic())
                .export(format, query)
                .block(Duration.ofSeconds(30));
    }

    List<String> ids(String jsonArray) {
        List<String> ids = new ArrayList<>();
        json.readTree(jsonArray).forEach(node -> ids.add(node.get("id").asString()));
        return ids;
    }

    @Test
    void exportWhenRotatedStreamsEveryKeptRecordOnceInTheHistorysOrder() {
        RestartHistory history = history(DataSize.ofKilobytes(8), 3);
        IntStream.range(0, 12).forEach(i -> history.append(record(i)));
        // Written again (its after-stop memory came): its last content, at its first place.
        RestartRecord again =
                at(RestartHistoryTests.minimal("start-9"), record(9).when().engineStart());
        history.append(again);

        RestartExport.Streamed json = export(history, RestartExport.Format.JSON, RestartExport.Query.ALL);
        List<RestartRecord> loaded = history.load();
        assertThat(json.records()).isEqualTo(loaded.size());
        assertThat(json.continueAfter()).isNull();
        JsonNode array = this.json.readTree(body(json));
        assertThat(array.valueStream().map(RecordJson::read).toList()).containsExactlyElementsOf(loaded);
        assertThat(loaded).contains(again).doesNotContain(record(9));
        assertThat(history.count()).isEqualTo(loaded.size());

        String csv = body(export(history, RestartExport.Format.CSV, RestartExport.Query.ALL));
        assertThat(csv).isEqualTo(RestartRecordView.csv(loaded));
    }

    @Test
    void recordsKeptOnlyInMemoryAreExportedInTheirPlaceAndCounted() {
        RestartHistory history = history(DataSize.ofMegabytes(1), 3);
        IntStream.range(0, 3).forEach(i -> history.append(record(i)));
        // The state directory refused these writes: a new version of start-1, and a start the files never held.
        RestartRecord newer = newerStart1();
        history.notWritten(newer);
        history.notWritten(record(3));

        RestartExport.Streamed all = export(history, RestartExport.Format.JSON, RestartExport.Query.ALL);
        assertThat(all.records()).isEqualTo(4);
        assertThat(all.fromMemory()).isEqualTo(2);
        JsonNode array = this.json.readTree(body(all));
        assertThat(array.valueStream().map(RecordJson::read).toList())
                .containsExactly(record(0), newer, record(2), record(3));

        // Written at last: from the files again.
        history.append(record(3));
        assertThat(export(history, RestartExport.Format.CSV, RestartExport.Query.ALL)
                        .fromMemory())
                .isEqualTo(1);
    }

    /**
     * A start kept a moment ago is in {@code /status} at once and written to the files by the history's writer thread:
     * an export in between has it from memory (found when a CSV export right after a start lacked that start).
     */
    @Test
    void recordOnItsWayToTheFilesIsExportedAndAnOlderVersionWrittenLateDoesNotHideTheNewer() {
        RestartHistory history = history(DataSize.ofMegabytes(1), 3);
        history.append(record(0));
        history.writing(record(1));

        assertThat(export(history, RestartExport.Format.CSV, RestartExport.Query.ALL)
                        .records())
                .isEqualTo(2);

        // A newer version handed over before the older one's write ends: the older write does not drop the newer.
        RestartRecord newer = newerStart1();
        history.writing(newer);
        history.append(record(1));
        RestartExport.Streamed all = export(history, RestartExport.Format.JSON, RestartExport.Query.ALL);
        assertThat(all.fromMemory()).isEqualTo(1);
        assertThat(this.json
                        .readTree(body(all))
                        .valueStream()
                        .map(RecordJson::read)
                        .toList())
                .containsExactly(record(0), newer);

        history.append(newer);
        assertThat(export(history, RestartExport.Format.JSON, RestartExport.Query.ALL)
                        .fromMemory())
                .isZero();
    }

    /** Another version of start-1: its minimal record at the same engine start. */
    private static RestartRecord newerStart1() {
        return at(RestartHistoryTests.minimal("start-1"), record(1).when().engineStart());
    }

    @Test
    void exportWhenEmptyIsAnEmptyArrayAndAHeader() {
        RestartHistory history = history(DataSize.ofMegabytes(1), 3);
        assertThat(body(export(history, RestartExport.Format.JSON, RestartExport.Query.ALL)))
                .isEqualTo("[]");
        assertThat(body(export(history, RestartExport.Format.CSV, RestartExport.Query.ALL)))
                .isEqualTo(RestartRecordView.csv(List.of()));
    }

    @Test
    void exportWithSinceAndLimitPagesThroughTheHistory() {
        RestartHistory history = history(DataSize.ofMegabytes(1), 3);
        IntStream.range(0, 10).forEach(i -> history.append(record(i)));

        RestartExport.Streamed first = export(history, RestartExport.Format.JSON, RestartExport.Query.of(null, "4"));
        assertThat(ids(body(first))).containsExactly("start-0", "start-1", "start-2", "start-3");
        assertThat(first.continueAfter()).isEqualTo("start-3");
        RestartExport.Streamed second =
                export(history, RestartExport.Format.JSON, RestartExport.Query.of(first.continueAfter(), "4"));
        assertThat(ids(body(second))).containsExactly("start-4", "start-5", "start-6", "start-7");
        RestartExport.Streamed last =
                export(history, RestartExport.Format.JSON, RestartExport.Query.of(second.continueAfter(), "4"));
        assertThat(ids(body(last))).containsExactly("start-8", "start-9");
        assertThat(last.continueAfter()).isNull();

        String since = record(7).when().engineStart().toString();
        assertThat(ids(body(export(history, RestartExport.Format.JSON, RestartExport.Query.of(since, null)))))
                .containsExactly("start-7", "start-8", "start-9");
    }

    @Test
    void queryWhenParametersAreInvalidNamesThem() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RestartExport.Query.of(null, "0"))
                .withMessageContaining("limit");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RestartExport.Query.of(null, "ten"))
                .withMessageContaining("limit");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RestartExport.Query.of("2026-13-45T99:00:00Z", null))
                .withMessageContaining("since");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RestartExport.Query.of("a b", null))
                .withMessageContaining("since");
        RestartHistory history = history(DataSize.ofMegabytes(1), 3);
        history.append(record(0));
        StepVerifier.create(new RestartExport(history, Schedulers.boundedElastic())
                        .export(RestartExport.Format.JSON, RestartExport.Query.of("no-such-start", null)))
                .expectError(RestartExport.UnknownRecordException.class)
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void exportReadsTheHistoryAsItWasWhenOpenedThroughRotationAndAppends() {
        RestartHistory history = history(DataSize.ofKilobytes(8), 2);
        IntStream.range(0, 6).forEach(i -> history.append(record(i)));
        List<RestartRecord> before = history.load();
        RestartExport.Streamed streamed = export(history, RestartExport.Format.JSON, RestartExport.Query.ALL);
        // Rotations rename and remove files under the open export.
        IntStream.range(6, 30).forEach(i -> history.append(record(i)));
        JsonNode array = json.readTree(body(streamed));
        assertThat(array.valueStream().map(RecordJson::read).toList()).containsExactlyElementsOf(before);
    }

    @Test
    void exportSendsOneBufferPerRecordAsTheClientAsks() {
        RestartHistory history = history(DataSize.ofMegabytes(1), 3);
        IntStream.range(0, 50).forEach(i -> history.append(record(i)));
        RestartExport.Streamed streamed = export(history, RestartExport.Format.JSON, RestartExport.Query.ALL);
        // The prefix, then one record per buffer, as many as requested.
        StepVerifier.create(streamed.body(), 0)
                .thenRequest(1)
                .assertNext(buffer ->
                        assertThat(buffer.toString(StandardCharsets.UTF_8)).isEqualTo("["))
                .thenRequest(2)
                .expectNextCount(2)
                .thenCancel()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void countWhenTheFilesWereWrittenBeforeIsTheNumberOfKeptRecords() throws Exception {
        ExportCeilingIT.CeilingHistory.Written written =
                ExportCeilingIT.CeilingHistory.write(stateDir, Long.getLong("maxFile", 100_000), 3, json);
        RestartHistory history = history(DataSize.ofBytes(Long.getLong("maxFile", 100_000)), 3);
        assertThat(history.count()).isEqualTo(-1);
        assertThat(history.latest(10)).hasSize(10);
        assertThat(history.count()).isEqualTo(written.records());
        assertThat(history.load()).hasSize(written.records());
        if (System.getProperty("copyTo") != null) {
            org.springframework.util.FileSystemUtils.copyRecursively(stateDir, Path.of(System.getProperty("copyTo")));
        }
    }
}
