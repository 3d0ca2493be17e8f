package dev.readygate.restart;

import static dev.readygate.restart.RestartComparison.LOGGED;
import static dev.readygate.restart.RestartComparison.PHASES;

import dev.readygate.restart.RestartComparison.Group;
import dev.readygate.restart.RestartComparison.Key;
import dev.readygate.restart.RestartComparison.Latency;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/** A {@link RestartComparison} as {@code /status/comparison.csv} and {@code /status} show it. */
final class ComparisonView {

    /** How many of {@link RestartComparison#LOGGED} have their columns after the phases; the rest come last. */
    private static final int LOGGED_IN_PLACE = 2;

    /** The CSV's columns. */
    static final List<String> CSV_HEADER = csvHeader();

    private ComparisonView() {}

    private static List<String> csvHeader() {
        List<String> header = new ArrayList<>(List.of((""
                        + "vllm_version,revision,configuration,configuration_differs,path,recovery,starts,ready,failures,"
                        + "readiness_p50_seconds,readiness_p95_seconds,readiness_max_seconds")
                .split(",")));
        PHASES.forEach(phase -> header.add(phase.value() + "_median_seconds"));
        LOGGED.subList(0, LOGGED_IN_PLACE).forEach(name -> header.add(name + "_median_seconds"));
        header.addAll(List.of("memory_at_ready_median_mib", "memory_after_stop_median_mib", "speedup_over_cold"));
        // The gateway's count of the group's stops, summed; empty with gateway mode off.
        header.addAll(List.of(
                "gateway_in_flight_at_stops",
                "gateway_finished_after_stops",
                "gateway_cut_at_stops",
                "gateway_tokens_cut_at_stops"));
        // The engine's phases of issue 28 (download, compilation, graph capture): appended, so that the columns before
        // keep their places.
        LOGGED.subList(LOGGED_IN_PLACE, LOGGED.size()).forEach(name -> header.add(name + "_median_seconds"));
        return List.copyOf(header);
    }

    /** The CSV's lines (RFC 4180, CRLF): the header, then one per group. */
    static List<String> csvLines(RestartComparison comparison) {
        List<String> lines = new ArrayList<>();
        lines.add(RecordCsv.line(CSV_HEADER));
        for (Group group : comparison.groups()) {
            List<String> row = new ArrayList<>();
            Key key = group.key();
            row.add(key.vllmVersion());
            row.add(key.revision());
            row.add(key.configuration());
            row.add(String.join(" ", group.configurationDiffers()));
            row.add(key.path().value());
            row.add(key.recovery().value());
            row.add(String.valueOf(group.starts()));
            row.add(String.valueOf(group.ready()));
            row.add(String.valueOf(group.failures()));
            Latency latency = group.latency();
            row.add(number(latency == null ? null : latency.p50()));
            row.add(number(latency == null ? null : latency.p95()));
            row.add(number(latency == null ? null : latency.max()));
            PHASES.forEach(phase -> row.add(number(group.phaseMedians().get(phase))));
            LOGGED.subList(0, LOGGED_IN_PLACE)
                    .forEach(name -> row.add(number(group.loggedMedians().get(name))));
            row.add(group.memoryAtReadyMib() == null ? "" : String.valueOf(group.memoryAtReadyMib()));
            row.add(group.memoryAfterStopMib() == null ? "" : String.valueOf(group.memoryAfterStopMib()));
            row.add(number(group.speedupOverCold()));
            Stop.Traffic traffic = group.trafficAtStops();
            row.add(traffic == null ? "" : String.valueOf(traffic.inFlight()));
            row.add(traffic == null ? "" : String.valueOf(traffic.finished()));
            row.add(traffic == null ? "" : String.valueOf(traffic.cut()));
            row.add(traffic == null ? "" : String.valueOf(traffic.cutTokens()));
            LOGGED.subList(LOGGED_IN_PLACE, LOGGED.size())
                    .forEach(name -> row.add(number(group.loggedMedians().get(name))));
            lines.add(RecordCsv.line(row));
        }
        return lines;
    }

    private static String number(@Nullable Double value) {
        return value == null || !Double.isFinite(value)
                ? ""
                : BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }

    /** The comparison as {@code /status} shows it. */
    static Map<String, Object> status(RestartComparison comparison) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("compared", comparison.compared());
        out.put("excluded", comparison.excluded());
        out.put(
                "excludedWhy",
                "starts readygate did not see begin (it started during them): their latency is not the engine's");
        out.put(
                "grouping",
                "vLLM version, model revision, configuration (a hash of the engine arguments but host, port, revision"
                        + " and the preload loader), restart path, recovery kind");
        out.put(
                "speedupOverCold",
                "the median readiness latency of the cold starts with the same version, revision and configuration"
                        + " (every recovery kind) over the group's median");
        out.put(
                "groups",
                comparison.groups().stream().map(ComparisonView::status).toList());
        return out;
    }

    private static Map<String, Object> status(Group group) {
        Map<String, Object> out = new LinkedHashMap<>();
        Key key = group.key();
        out.put("vllmVersion", key.vllmVersion());
        out.put("revision", key.revision());
        out.put("configuration", key.configuration());
        out.put("configurationDiffers", group.configurationDiffers());
        out.put("path", key.path().value());
        out.put("recovery", key.recovery().value());
        out.put("starts", group.starts());
        out.put("ready", group.ready());
        out.put("failures", group.failures());
        Latency latency = group.latency();
        out.put(
                "readinessSeconds",
                latency == null ? null : Map.of("p50", latency.p50(), "p95", latency.p95(), "max", latency.max()));
        out.put("phaseMedianSeconds", named(group.phaseMedians(), Phase::value));
        out.put("loggedMedianSeconds", group.loggedMedians());
        Map<String, Object> memory = new LinkedHashMap<>();
        memory.put("atReady", group.memoryAtReadyMib());
        memory.put("afterStop", group.memoryAfterStopMib());
        out.put("memoryMedianMiB", memory);
        out.put("speedupOverCold", group.speedupOverCold());
        out.put("trafficAtStops", RestartRecordView.statusTraffic(group.trafficAtStops()));
        return out;
    }

    private static <K> Map<String, Double> named(Map<K, Double> values, Function<K, String> name) {
        Map<String, Double> out = new LinkedHashMap<>();
        values.forEach((key, value) -> out.put(name.apply(key), value));
        return out;
    }
}
