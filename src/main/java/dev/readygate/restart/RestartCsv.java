package dev.readygate.restart;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The CSV of restart records, for spreadsheets and notebooks: RFC 4180 (CRLF line ends; a field with a comma, quote,
 * CR or LF is quoted, its quotes doubled), one header line, one row per record, an empty field for anything unknown.
 * Times are ISO-8601 instants; durations and phase offsets (from {@code engine_start}) are plain decimal seconds.
 */
final class RestartCsv {

    /** The phases, in the order they are reached; each is a column of seconds from {@code engine_start}. */
    static final List<String> PHASES = List.of(
            "engine_start", "port_listening", "health_ok", "model_listed", "representative_ok", "canary_ok", "ready");

    static final List<String> HEADER = header();

    private RestartCsv() {}

    static String write(List<RestartRecord> records) {
        StringBuilder csv = new StringBuilder();
        line(csv, HEADER);
        records.forEach(record -> line(csv, row(record)));
        return csv.toString();
    }

    /** The header line, with its CRLF. */
    static String headerLine() {
        StringBuilder csv = new StringBuilder();
        line(csv, HEADER);
        return csv.toString();
    }

    /** One record's row, with its CRLF. */
    static String rowLine(RestartRecord record) {
        StringBuilder csv = new StringBuilder();
        line(csv, row(record));
        return csv.toString();
    }

    private static List<String> header() {
        List<String> header = new ArrayList<>(List.of(
                "id",
                "engine_start",
                "engine_start_source",
                "first_seen",
                "path",
                "fallback_reason",
                "wrong_weights_from_cache",
                "outcome",
                "not_ready_reason",
                "readiness_latency_seconds"));
        PHASES.forEach(phase -> header.add(phase + "_seconds"));
        header.addAll(List.of(
                "weights_loading_seconds",
                "model_loading_seconds",
                "model_loading_gib",
                "engine_init_seconds",
                "vllm_version",
                "model",
                "model_root",
                "revision",
                "max_model_len",
                "kv_cache_size_tokens",
                "gpu_memory_before_start_mib",
                "gpu_memory_at_ready_mib",
                "gpu_memory_after_stop_mib",
                "engine_memory_at_ready_mib",
                "preload_daemon_memory_at_ready_mib",
                "probe_config_hash",
                "readygate_version",
                "node_name",
                "gpu_uuid",
                "driver_version",
                "evidence",
                "engine_args"));
        return List.copyOf(header);
    }

    private static List<String> row(RestartRecord record) {
        List<String> row = new ArrayList<>(HEADER.size());
        row.add(record.id());
        row.add(record.engineStart().toString());
        row.add(record.engineStartSource());
        row.add(String.valueOf(record.firstSeen()));
        row.add(record.path().value());
        row.add(text(record.fallbackReason()));
        row.add(String.valueOf(record.wrongWeightsFromCache()));
        row.add(record.outcome());
        row.add(text(record.notReadyReason()));
        row.add(seconds(record.readinessLatency()));
        for (String phase : PHASES) {
            Instant at = record.phases().get(phase);
            row.add(at == null ? "" : seconds(Duration.between(record.engineStart(), at)));
        }
        row.add(number(record.loggedDurations().get("weights_loading")));
        row.add(number(record.loggedDurations().get("model_loading")));
        row.add(number(record.loggedDurations().get("model_loading_gib")));
        row.add(number(record.loggedDurations().get("engine_init")));
        row.add(text(record.vllmVersion()));
        row.add(text(record.model()));
        row.add(text(record.modelRoot()));
        row.add(text(record.revision()));
        row.add(record.maxModelLen() == null ? "" : String.valueOf(record.maxModelLen()));
        row.add(record.kvCacheSizeTokens() == null ? "" : String.valueOf(record.kvCacheSizeTokens()));
        CycleMemory memory = record.memory();
        row.add(mib(memory.beforeStart() == null ? null : memory.beforeStart().usedBytes()));
        row.add(mib(memory.atReady() == null ? null : memory.atReady().usedBytes()));
        row.add(mib(memory.afterStop() == null ? null : memory.afterStop().usedBytes()));
        row.add(mib(memory.atReady() == null ? null : memory.atReady().byOwner().get("engine")));
        row.add(mib(memory.atReady() == null ? null : memory.atReady().byOwner().get("preload_daemon")));
        row.add(record.probeConfigHash());
        row.add(record.readygateVersion());
        row.add(text(record.node().get("node_name")));
        row.add(text(record.node().get("gpu_uuid")));
        row.add(text(record.node().get("driver_version")));
        row.add(String.join(" | ", record.evidence()));
        row.add(text(record.engineArgs()));
        return row;
    }

    private static String mib(@Nullable Long bytes) {
        return bytes == null ? "" : String.valueOf(Math.round(bytes / 1048576.0));
    }

    private static void line(StringBuilder csv, List<String> fields) {
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                csv.append(',');
            }
            csv.append(field(fields.get(i)));
        }
        csv.append("\r\n");
    }

    static String field(String value) {
        boolean quote = value.indexOf(',') >= 0
                || value.indexOf('"') >= 0
                || value.indexOf('\n') >= 0
                || value.indexOf('\r') >= 0;
        return quote ? '"' + value.replace("\"", "\"\"") + '"' : value;
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
