package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Restarts side by side: groups by version, revision, configuration, path and recovery kind, with their figures and
 * the speed-up over cold, from records as the recorder writes them.
 */
class RestartComparisonTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final String ARGS = "{'model': 'Qwen/Qwen3-0.6B', 'revision': '%s', 'max_model_len': %d%s}";
    static final String PRELOAD = ", 'load_format': 'ipc_cache', 'model_loader_extra_config': {'mode': 'zero_copy'}";

    private int started;

    /**
     * A start {@code n} minutes after T0: port after {@code port} s, /health and the model at once, the probes one
     * second each, ready after {@code latency} s (never, when null).
     */
    RestartRecord start(
            RestartPath path,
            RecoveryKind recovery,
            String revision,
            int maxModelLen,
            @Nullable Double latency,
            double port) {
        return start(false, path, recovery, revision, maxModelLen, latency, port);
    }

    /** A start readygate did not see begin: the first it saw, dated by when it saw it. */
    RestartRecord firstSeen(
            RestartPath path,
            RecoveryKind recovery,
            String revision,
            int maxModelLen,
            @Nullable Double latency,
            double port) {
        return start(true, path, recovery, revision, maxModelLen, latency, port);
    }

    RestartRecord start(
            boolean firstSeen,
            RestartPath path,
            RecoveryKind recovery,
            String revision,
            int maxModelLen,
            @Nullable Double latency,
            double port) {
        Instant start = T0.plus(Duration.ofMinutes(started++));
        Map<Phase, Instant> phases = new EnumMap<>(Phase.class);
        phases.put(Phase.ENGINE_START, start);
        phases.put(Phase.PORT_LISTENING, start.plusMillis(Math.round(port * 1000)));
        phases.put(Phase.HEALTH_OK, start.plusMillis(Math.round(port * 1000)));
        phases.put(Phase.MODEL_LISTED, start.plusMillis(Math.round(port * 1000)));
        if (latency != null) {
            phases.put(Phase.REPRESENTATIVE_OK, start.plusMillis(Math.round((latency - 1) * 1000)));
            phases.put(Phase.CANARY_OK, start.plusMillis(Math.round(latency * 1000)));
            phases.put(Phase.READY, start.plusMillis(Math.round(latency * 1000)));
        }
        long used = (path == RestartPath.PRELOAD_HIT ? 13_435L : 12_000L) * 1024 * 1024;
        return TestRecords.record("s" + started)
                .engineStart(start)
                .engineStartSource(firstSeen ? StartSource.FIRST_OBSERVED : StartSource.PROCESS_START_TIME)
                .firstSeen(firstSeen)
                .path(path)
                .phases(phases)
                .loggedDurations(
                        path == RestartPath.COLD
                                ? Map.of("weights_loading", port / 2, "engine_init", port / 4)
                                : Map.of())
                .outcome(latency == null ? Outcome.NOT_READY : Outcome.READY)
                .notReadyReason(latency == null ? "not_verified" : null)
                .readinessLatency(latency == null ? null : Duration.ofMillis(Math.round(latency * 1000)))
                .vllmVersion("0.31.0")
                .engineArgs(ARGS.formatted(revision, maxModelLen, path == RestartPath.PRELOAD_HIT ? PRELOAD : ""))
                .model("Qwen/Qwen3-0.6B")
                .modelRoot("Qwen/Qwen3-0.6B")
                .revision(revision)
                .maxModelLen(maxModelLen)
                .probeConfigHash("h")
                .readygateVersion("dev")
                .memory(
                        latency == null
                                ? CycleMemory.NONE
                                : new CycleMemory(
                                        null,
                                        new MemoryMoment(start.plusSeconds(30), used, Map.of(), List.of()),
                                        new MemoryMoment(
                                                start.plusSeconds(50), 10_760L * 1024 * 1024, Map.of(), List.of())))
                .recovery(new Recovery(recovery, List.of()))
                .build();
    }

    static final RecoveryKind PROCESS = RecoveryKind.PROCESS_RESTARTED;
    static final RecoveryKind CONTAINER = RecoveryKind.CONTAINER_RESTARTED;

    List<RestartRecord> demoLikeHistory() {
        List<RestartRecord> records = new ArrayList<>();
        records.add(firstSeen(RestartPath.COLD, RecoveryKind.UNKNOWN, "rev-1", 4096, 3.0, 2.0));
        records.add(start(RestartPath.COLD, PROCESS, "rev-1", 4096, 12.0, 8.0));
        records.add(start(RestartPath.PRELOAD_HIT, PROCESS, "rev-1", 4096, 4.0, 2.5));
        records.add(start(RestartPath.SNAPSHOT_RESTORE, PROCESS, "rev-1", 4096, 1.5, 0.4));
        records.add(start(RestartPath.COLD, PROCESS, "rev-1", 4096, 10.0, 7.0));
        records.add(start(RestartPath.PRELOAD_HIT, PROCESS, "rev-1", 4096, 3.0, 2.0));
        records.add(start(RestartPath.PRELOAD_HIT, PROCESS, "rev-1", 4096, null, 2.0));
        records.add(start(RestartPath.COLD, CONTAINER, "rev-1", 4096, 14.0, 9.0));
        records.add(start(RestartPath.PRELOAD_HIT, PROCESS, "rev-2", 4096, 3.2, 2.1));
        records.add(start(RestartPath.COLD, PROCESS, "rev-1", 8192, 16.0, 11.0));
        return records;
    }

    @Test
    void ofGroupsByReleasePathAndRecoveryInTheOrderRecordedLeavingOutStartsNotSeenBeginning() {
        RestartComparison comparison = RestartComparison.of(demoLikeHistory());

        assertThat(comparison.compared()).isEqualTo(9);
        assertThat(comparison.excluded()).isEqualTo(1);
        assertThat(comparison.groups().stream().map(RestartComparisonTests::describe))
                .containsExactly(
                        "rev-1 4096 cold process_restarted 2/2",
                        "rev-1 4096 cold container_restarted 1/1",
                        "rev-1 4096 preload_hit process_restarted 2/3",
                        "rev-1 4096 snapshot_restore process_restarted 1/1",
                        "rev-2 4096 preload_hit process_restarted 1/1",
                        "rev-1 8192 cold process_restarted 1/1");
    }

    @Test
    void ofGivesLatencyPhaseLoggedAndMemoryFiguresOverEachGroup() {
        RestartComparison.Group cold =
                RestartComparison.of(demoLikeHistory()).groups().getFirst();

        // Two cold starts: 12 s and 10 s; nearest rank: the median is the lower one, p95 and max the higher.
        assertThat(cold.latency()).isEqualTo(new RestartComparison.Latency(10.0, 12.0, 12.0));
        assertThat(cold.failures()).isZero();
        assertThat(cold.phaseMedians())
                .containsEntry(Phase.PORT_LISTENING, 7.0)
                .containsEntry(Phase.HEALTH_OK, 0.0)
                .containsEntry(Phase.MODEL_LISTED, 0.0)
                .containsEntry(Phase.REPRESENTATIVE_OK, 2.0)
                .containsEntry(Phase.CANARY_OK, 1.0)
                .doesNotContainKey(Phase.READY);
        assertThat(cold.loggedMedians())
                .containsExactly(Map.entry("weights_loading", 3.5), Map.entry("engine_init", 1.75));
        assertThat(cold.memoryAtReadyMib()).isEqualTo(12_000L);
        assertThat(cold.memoryAfterStopMib()).isEqualTo(10_760L);
        assertThat(cold.configurationDiffers()).containsExactly("max_model_len=4096");
    }

    @Test
    void ofGivesTheMedianOfEachPhaseACachedRestartSavesBeyondTheWeights() {
        RestartRecord downloaded = start(RestartPath.COLD, RecoveryKind.NEW_POD, "rev-1", 4096, 10.0, 5);
        downloaded = TestRecords.from(downloaded)
                .loggedDurations(
                        Map.of("download", 69.52, "compile", 35.61, "compilation", 44.34, "graph_capture", 12.0))
                .build();
        RestartRecord cached = start(RestartPath.COLD, RecoveryKind.NEW_POD, "rev-1", 4096, 10.0, 5);
        cached = TestRecords.from(cached)
                .loggedDurations(Map.of("compile_cache_load", 2.087, "compilation", 8.41, "graph_capture", 4.0))
                .build();

        RestartComparison comparison = RestartComparison.of(List.of(downloaded, cached));

        assertThat(comparison.groups().getFirst().loggedMedians())
                .containsExactly(
                        Map.entry("download", 69.52),
                        Map.entry("compile_cache_load", 2.087),
                        Map.entry("compile", 35.61),
                        Map.entry("compilation", 8.41),
                        Map.entry("graph_capture", 4.0));
        assertThat(comparison.csvLines().get(1)).endsWith(",69.52,2.087,35.61,8.41,4\r\n");
    }

    @Test
    void ofCountsStartsNeverReadyAsFailuresOutsideTheLatency() {
        RestartComparison.Group hits =
                RestartComparison.of(demoLikeHistory()).groups().get(2);

        assertThat(hits.starts()).isEqualTo(3);
        assertThat(hits.ready()).isEqualTo(2);
        assertThat(hits.failures()).isEqualTo(1);
        assertThat(hits.latency()).isEqualTo(new RestartComparison.Latency(3.0, 4.0, 4.0));
        assertThat(hits.memoryAtReadyMib()).isEqualTo(13_435L);
    }

    @Test
    void ofGivesEachGroupItsSpeedupOverTheColdStartsOfTheSameRelease() {
        List<RestartComparison.Group> groups =
                RestartComparison.of(demoLikeHistory()).groups();

        // rev-1 at 4096: cold 12, 10 and 14 (a container restart) pool to a median of 12 s.
        assertThat(groups.get(0).speedupOverCold()).isEqualTo(1.2);
        assertThat(groups.get(1).speedupOverCold()).isEqualTo(0.86);
        assertThat(groups.get(2).speedupOverCold()).isEqualTo(4.0);
        assertThat(groups.get(3).speedupOverCold()).isEqualTo(8.0);
        // rev-2 has no cold start; the 8192 configuration's cold start is its own reference.
        assertThat(groups.get(4).speedupOverCold()).isNull();
        assertThat(groups.get(5).speedupOverCold()).isEqualTo(1.0);
    }

    @Test
    void aWakeIsAGroupOfItsOwnWithoutASpeedupOverCold() {
        List<RestartRecord> records = new ArrayList<>(demoLikeHistory());
        records.add(TestRecords.from(start(RestartPath.WAKE, PROCESS, "rev-1", 4096, 0.8, 0.2))
                .recovery(new Recovery(RecoveryKind.WOKE, List.of()))
                .build());

        RestartComparison.Group wakes = RestartComparison.of(records).groups().stream()
                .filter(group -> group.key().path() == RestartPath.WAKE)
                .findFirst()
                .orElseThrow();

        assertThat(describe(wakes)).isEqualTo("rev-1 4096 wake woke 1/1");
        assertThat(wakes.latency().p50()).isEqualTo(0.8);
        // Its latency runs from the engine awake, not from a start: 12 s of cold over it would be no speed-up.
        assertThat(wakes.speedupOverCold()).isNull();
    }

    @Test
    void ofWhenNothingIsRecordedHasNoGroups() {
        RestartComparison comparison = RestartComparison.of(List.of());

        assertThat(comparison.groups()).isEmpty();
        assertThat(comparison.csvLines()).containsExactly(String.join(",", ComparisonView.CSV_HEADER) + "\r\n");
    }

    @Test
    void aGroupSumsTheGatewaysCountsOfItsStopsAndHasNoneWithoutThem() {
        RestartRecord drained = start(RestartPath.COLD, RecoveryKind.PROCESS_RESTARTED, "rev-1", 4096, 10.0, 5)
                .withStop(new Stop(T0, Stop.How.POD_STOPPED, 2.0, 0.0, T0, new Stop.Traffic(3, 2, 1, 40)));
        RestartRecord crashed = start(RestartPath.COLD, RecoveryKind.PROCESS_RESTARTED, "rev-1", 4096, 10.0, 5)
                .withStop(new Stop(T0, Stop.How.WENT_AWAY, 2.0, 0.0, T0, new Stop.Traffic(2, 0, 2, 7)));
        RestartRecord unseen = start(RestartPath.COLD, RecoveryKind.PROCESS_RESTARTED, "rev-1", 4096, 10.0, 5)
                .withStop(new Stop(T0, Stop.How.WENT_AWAY, 2.0, 0.0, T0));
        RestartRecord other = start(RestartPath.COLD, RecoveryKind.CONTAINER_RESTARTED, "rev-1", 4096, 10.0, 5);

        List<RestartComparison.Group> groups =
                RestartComparison.of(List.of(drained, crashed, unseen, other)).groups();

        assertThat(groups)
                .extracting(RestartComparison.Group::trafficAtStops)
                .containsExactly(new Stop.Traffic(5, 2, 3, 47), null);
        assertThat(RestartComparison.of(List.of(drained, crashed)).csvLines().get(1))
                .endsWith(",5,2,3,47,,,,,\r\n");
    }

    @Test
    void csvLinesHaveTheHeaderAndOneRowPerGroupWithEmptyFieldsForWhatIsNotKnown() {
        List<String> lines = RestartComparison.of(demoLikeHistory()).csvLines();

        assertThat(lines).hasSize(7).allSatisfy(line -> assertThat(line).endsWith("\r\n"));
        assertThat(lines.getFirst())
                .isEqualTo("vllm_version,revision,configuration,configuration_differs,path,recovery,starts,ready,"
                        + "failures,readiness_p50_seconds,readiness_p95_seconds,readiness_max_seconds,"
                        + "port_listening_median_seconds,health_ok_median_seconds,model_listed_median_seconds,"
                        + "representative_ok_median_seconds,canary_ok_median_seconds,weights_loading_median_seconds,"
                        + "engine_init_median_seconds,memory_at_ready_median_mib,memory_after_stop_median_mib,"
                        + "speedup_over_cold,gateway_in_flight_at_stops,gateway_finished_after_stops,"
                        + "gateway_cut_at_stops,gateway_tokens_cut_at_stops,download_median_seconds,"
                        + "compile_cache_load_median_seconds,compile_median_seconds,compilation_median_seconds,"
                        + "graph_capture_median_seconds\r\n");
        String config = EngineArguments.parse(ARGS.formatted("rev-1", 4096, "")).configurationHash();
        assertThat(lines.get(4))
                .isEqualTo("0.31.0,rev-1," + config
                        + ",max_model_len=4096,snapshot_restore,process_restarted,1,1,0,1.5,1.5,1.5,0.4,0,0,0.1,1,,,"
                        + "12000,10760,8,,,,,,,,,\r\n");
    }

    @Test
    void statusNamesTheGroupsFiguresForThePage() {
        Map<String, Object> status = RestartComparison.of(demoLikeHistory()).status();

        assertThat(status).containsEntry("compared", 9).containsEntry("excluded", 1);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> groups = (List<Map<String, Object>>) status.get("groups");
        assertThat(groups.get(3))
                .containsEntry("path", "snapshot_restore")
                .containsEntry("recovery", "process_restarted")
                .containsEntry("revision", "rev-1")
                .containsEntry("starts", 1)
                .containsEntry("speedupOverCold", 8.0)
                .containsEntry("readinessSeconds", Map.of("p50", 1.5, "p95", 1.5, "max", 1.5));
    }

    static String describe(RestartComparison.Group group) {
        RestartComparison.Key key = group.key();
        String len = group.configurationDiffers().getFirst().replace("max_model_len=", "");
        return key.revision() + " " + len + " " + key.path().value() + " "
                + key.recovery().value() + " " + group.ready() + "/" + group.starts();
    }
}
