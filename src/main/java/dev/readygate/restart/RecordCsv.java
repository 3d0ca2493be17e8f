package dev.readygate.restart;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners;
import dev.readygate.readiness.EngineStart;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A restart record as a row of {@code /status/restarts.csv}, for {@link RestartRecordView}: RFC 4180 (CRLF line ends; a
 * field with a comma, quote, CR or LF is quoted, its quotes doubled) with an empty field for anything unknown, phases
 * as plain decimal seconds from {@code engine_start} exact to the nanosecond, memory in MiB.
 */
final class RecordCsv {

    /** The logged durations (and the graph capture's memory) whose columns come last, in this order. */
    private static final List<String> APPENDED_LOGGED = Stream.concat(
                    EnginePhase.BEYOND_WEIGHTS.stream().map(EnginePhase::value), Stream.of("graph_capture_gib"))
            .toList();

    /** The header: one column per field, per phase ({@code <phase>_seconds}) and per memory figure. */
    static final List<String> HEADER = header();

    private RecordCsv() {}

    private static List<String> header() {
        List<String> header = new ArrayList<>(List.of((""
                        + "id,engine_start,engine_start_source,first_seen,comparable,path,fallback_reason,"
                        + "wrong_weights_from_cache,outcome,not_ready_reason,start_failure,readiness_latency_seconds,"
                        + "readiness_latency_bound")
                .split(",")));
        for (Phase phase : Phase.values()) {
            header.add(phase.value() + "_seconds");
        }
        header.addAll(List.of((""
                        + "weights_loading_seconds,model_loading_seconds,model_loading_gib,engine_init_seconds,"
                        + "vllm_version,model,model_root,revision,max_model_len,kv_cache_size_tokens,"
                        + "gpu_memory_before_start_mib,gpu_memory_at_ready_mib,gpu_memory_after_stop_mib,"
                        + "engine_memory_at_ready_mib,preload_daemon_memory_at_ready_mib,probe_config_hash,"
                        + "readygate_version,node_name,gpu_uuid,driver_version,pod_uid,boot_id,engine_container,"
                        + "cuda_version,configuration,recovery,recovery_changes,stop,stop_at,requests_running_at_stop,"
                        + "requests_waiting_at_stop,requests_observed_at,snapshot_mismatches,evidence,engine_args,"
                        // Gateway mode's count of the stop's requests (empty when off); appended, so that the
                        // columns before keep their places.
                        + "gateway_in_flight_at_stop,gateway_finished_after_stop,gateway_cut_at_stop,"
                        + "gateway_tokens_cut_at_stop")
                .split(",")));
        // The engine's phases of issue 28 that a cached restart saves beyond the weights; appended likewise.
        APPENDED_LOGGED.forEach(logged -> header.add(logged + (logged.endsWith("_gib") ? "" : "_seconds")));
        // A wake's sleep (issue 29); appended likewise.
        header.addAll(List.of("sleep_level", "fell_asleep", "asleep_seconds"));
        return List.copyOf(header);
    }

    /** A record's row, in the header's order, from what the view derived: its phase offsets and memory moments. */
    static List<String> row(
            RestartRecord record, Map<Phase, Duration> offsets, Collection<@Nullable MemoryMoment> moments) {
        RestartRecord.When when = record.when();
        RestartRecord.PathEvidence pathEvidence = record.pathEvidence();
        RestartRecord.Verdict verdict = record.verdict();
        RestartRecord.Engine engine = record.engine();
        List<String> row = new ArrayList<>(HEADER.size());
        row.add(record.id());
        row.add(when.engineStart().toString());
        row.add(when.engineStartSource().value());
        row.add(String.valueOf(when.firstSeen()));
        row.add(String.valueOf(when.comparable()));
        row.add(pathEvidence.path().value());
        row.add(text(pathEvidence.fallbackReason()));
        row.add(String.valueOf(pathEvidence.wrongWeightsFromCache()));
        row.add(verdict.outcome().value());
        row.add(text(verdict.notReadyReason()));
        row.add(text(verdict.startFailure()));
        row.add(seconds(verdict.readinessLatency()));
        row.add(String.valueOf(verdict.readinessLatencyBound()));
        for (Phase phase : Phase.values()) {
            row.add(seconds(offsets.get(phase)));
        }
        for (String logged : List.of("weights_loading", "model_loading", "model_loading_gib", "engine_init")) {
            row.add(number(verdict.loggedDurations().get(logged)));
        }
        row.add(text(engine.vllmVersion()));
        row.add(text(engine.model()));
        row.add(text(engine.modelRoot()));
        row.add(text(engine.revision()));
        row.add(engine.maxModelLen() == null ? "" : String.valueOf(engine.maxModelLen()));
        row.add(engine.kvCacheSizeTokens() == null ? "" : String.valueOf(engine.kvCacheSizeTokens()));
        moments.forEach(moment -> row.add(mib(moment == null ? null : moment.usedBytes())));
        MemoryMoment atReady = record.memory().atReady();
        row.add(mib(atReady == null ? null : atReady.byOwner().get(ProcessOwners.Owner.ENGINE)));
        row.add(mib(atReady == null ? null : atReady.byOwner().get(ProcessOwners.Owner.PRELOAD_DAEMON)));
        row.add(record.probeConfigHash());
        row.add(record.readygateVersion());
        for (String fact : List.of(
                NodeFacts.NODE_NAME,
                NodeFacts.GPU_UUID,
                NodeFacts.DRIVER_VERSION,
                NodeFacts.POD_UID,
                NodeFacts.BOOT_ID,
                NodeFacts.ENGINE_CONTAINER,
                NodeFacts.CUDA_VERSION)) {
            row.add(text(record.node().get(fact)));
        }
        row.add(engine.arguments().configurationHash());
        row.add(record.recovery().kind().value());
        row.add(String.join(" | ", record.recovery().changes()));
        Stop stop = record.stop();
        row.add(stop == null ? "" : stop.how().value());
        row.add(stop == null ? "" : stop.at().toString());
        row.add(number(stop == null ? null : stop.requestsRunning()));
        row.add(number(stop == null ? null : stop.requestsWaiting()));
        row.add(
                stop == null || stop.observedAt() == null
                        ? ""
                        : stop.observedAt().toString());
        row.add(record.snapshotMismatches().stream()
                .map(SnapshotMismatch::describe)
                .collect(Collectors.joining(" | ")));
        row.add(String.join(" | ", pathEvidence.evidence()));
        row.add(text(engine.engineArgs()));
        Stop.Traffic traffic = stop == null ? null : stop.traffic();
        row.add(traffic == null ? "" : String.valueOf(traffic.inFlight()));
        row.add(traffic == null ? "" : String.valueOf(traffic.finished()));
        row.add(traffic == null ? "" : String.valueOf(traffic.cut()));
        row.add(traffic == null ? "" : String.valueOf(traffic.cutTokens()));
        for (String logged : APPENDED_LOGGED) {
            row.add(number(verdict.loggedDurations().get(logged)));
        }
        EngineStart.Slept slept = when.slept();
        row.add(slept == null ? "" : String.valueOf(slept.level()));
        row.add(slept == null ? "" : slept.fellAsleep().toString());
        row.add(slept == null ? "" : seconds(slept.asleep()));
        return row;
    }

    /** The header line, with its CRLF. */
    static String headerLine() {
        return line(HEADER);
    }

    /** One line of {@code fields}, with its CRLF. */
    static String line(List<String> fields) {
        StringBuilder csv = new StringBuilder();
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                csv.append(',');
            }
            csv.append(field(fields.get(i)));
        }
        return csv.append("\r\n").toString();
    }

    static String field(String value) {
        boolean quote = value.indexOf(',') >= 0
                || value.indexOf('"') >= 0
                || value.indexOf('\n') >= 0
                || value.indexOf('\r') >= 0;
        return quote ? '"' + value.replace("\"", "\"\"") + '"' : value;
    }

    private static String mib(@Nullable Long bytes) {
        return bytes == null ? "" : String.valueOf(MemoryMoment.mib(bytes));
    }

    private static String text(@Nullable String value) {
        return value == null ? "" : value;
    }

    /** Plain decimal seconds, exact to the nanosecond: {@code 12.5}, {@code 0}, {@code -0.25}. */
    static String seconds(@Nullable Duration duration) {
        if (duration == null) {
            return "";
        }
        return BigDecimal.valueOf(duration.getSeconds())
                .add(BigDecimal.valueOf(duration.getNano(), 9))
                .stripTrailingZeros()
                .toPlainString();
    }

    private static String number(@Nullable Double value) {
        return value == null || !Double.isFinite(value)
                ? ""
                : BigDecimal.valueOf(value).toPlainString();
    }
}
