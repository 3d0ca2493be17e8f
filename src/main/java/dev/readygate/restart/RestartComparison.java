package dev.readygate.restart;

import dev.readygate.gpu.MemoryMoment;
import dev.readygate.readiness.StartSource;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Restarts side by side: the recorded starts grouped by vLLM version, model revision, configuration (the engine's
 * arguments, as a short hash: {@link EngineArguments#configurationHash}), restart path and recovery kind, with figures
 * over each group (how many, how many were verified ready, readiness latency p50, p95 and max, each phase's median,
 * the weight loading, engine init, download, compilation and graph capture vLLM logged, GPU memory at readiness and after the stop) and the speed-up of each
 * group's median over the cold starts of the same version, revision and configuration (of every recovery kind).
 * A pure function of the records.
 *
 * <p>Starts readygate did not see begin are left out (their latency is measured from when readygate first saw them,
 * not from the engine's start): the first start readygate saw ({@code firstSeen}) and any start dated by its first
 * observation ({@link StartSource#FIRST_OBSERVED}). A start whose readiness latency is only a bound
 * ({@link RestartRecord#readinessLatencyBound()}: the engine gave no start time of its own) counts among the starts and
 * the ready ones, but its latency and phases are left out of the figures. Percentiles are nearest-rank; a median of an even count is the
 * lower middle value (a value that happened, never an average of two).
 *
 * @param groups the groups: by version, revision and configuration in the order first recorded, then by path and
 *     recovery kind in the order of their enums
 * @param compared how many starts the groups hold
 * @param excluded how many starts were left out because readygate did not see them begin
 */
public record RestartComparison(List<Group> groups, int compared, int excluded) {

    /** The phases the comparison gives a median of: each from the phase before it. */
    public static final List<Phase> PHASES = List.of(
            Phase.PORT_LISTENING, Phase.HEALTH_OK, Phase.MODEL_LISTED, Phase.REPRESENTATIVE_OK, Phase.CANARY_OK);

    /**
     * The durations vLLM logged that the comparison gives a median of (seconds): weight loading and engine init, then
     * what a cached restart saves beyond the weights (issue 28): the download, torch.compile (its cache's load, a
     * compile, in all) and CUDA graph capture.
     */
    public static final List<String> LOGGED = logged();

    private static List<String> logged() {
        List<String> logged =
                new ArrayList<>(List.of(EnginePhase.WEIGHTS_LOADING.value(), EnginePhase.ENGINE_INIT.value()));
        EnginePhase.BEYOND_WEIGHTS.forEach(phase -> logged.add(phase.value()));
        return List.copyOf(logged);
    }

    public RestartComparison {
        groups = List.copyOf(groups);
    }

    /**
     * What makes starts comparable.
     *
     * @param vllmVersion the engine's version ({@code unknown} when not known)
     * @param revision the model revision ({@code unknown} when not known)
     * @param configuration the configuration hash
     * @param path the restart path
     * @param recovery the recovery kind
     */
    public record Key(
            String vllmVersion, String revision, String configuration, RestartPath path, RecoveryKind recovery) {

        /** The release this key is of: version, revision and configuration. */
        String release() {
            return vllmVersion + "\u0000" + revision + "\u0000" + configuration;
        }
    }

    /**
     * Readiness latency figures, in seconds.
     *
     * @param p50 the median
     * @param p95 the 95th percentile
     * @param max the slowest
     */
    public record Latency(double p50, double p95, double max) {}

    /**
     * One group's figures.
     *
     * @param key the group
     * @param configurationDiffers what sets the group's configuration apart from the others', in words (empty when all
     *     groups share one configuration)
     * @param starts how many starts
     * @param ready how many were verified ready
     * @param failures how many were never verified ready
     * @param latency readiness latency over the ready ones whose latency is measured (not a bound), null when none was
     * @param phaseMedians per phase of {@link #PHASES}, the median seconds from the phase before, over the starts that
     *     reached it
     * @param loggedMedians per duration of {@link #LOGGED}, the median seconds vLLM logged
     * @param memoryAtReadyMib the median GPU memory used at readiness (MiB), null when never read
     * @param memoryAfterStopMib the median GPU memory used after the engine stopped (MiB), null when never read
     * @param speedupOverCold the cold starts' median latency (same version, revision and configuration) over this
     *     group's, null without both, and for wakes (their latency runs from the engine awake, not from a start)
     * @param trafficAtStops the gateway's counts of the group's stops, summed (requests in flight at them, finished
     *     after, cut, and the tokens the cut ones had streamed); null when no stop of the group has one (gateway mode
     *     off)
     */
    public record Group(
            Key key,
            List<String> configurationDiffers,
            int starts,
            int ready,
            int failures,
            @Nullable Latency latency,
            Map<Phase, Double> phaseMedians,
            Map<String, Double> loggedMedians,
            @Nullable Long memoryAtReadyMib,
            @Nullable Long memoryAfterStopMib,
            @Nullable Double speedupOverCold,
            Stop.@Nullable Traffic trafficAtStops) {

        public Group {
            configurationDiffers = List.copyOf(configurationDiffers);
            Map<Phase, Double> phases = new EnumMap<>(Phase.class);
            phases.putAll(phaseMedians);
            phaseMedians = Collections.unmodifiableMap(phases);
            loggedMedians = Collections.unmodifiableMap(new LinkedHashMap<>(loggedMedians));
        }
    }

    /** Whether readygate saw a start begin: only those are compared. */
    static boolean seenBeginning(RestartRecord record) {
        return !record.when().firstSeen() && record.when().engineStartSource() != StartSource.FIRST_OBSERVED;
    }

    /** The comparison of the records (any order; the oldest first gives the groups' order). */
    public static RestartComparison of(List<RestartRecord> records) {
        Builder builder = new Builder();
        records.stream()
                .sorted(Comparator.comparing(record -> record.when().engineStart()))
                .forEach(builder::add);
        return builder.build();
    }

    /**
     * The comparison as a fold, for a history read record by record: each record is reduced to its figures as it is
     * added (the record itself is not kept), so memory grows with the numbers, not the records. Not thread-safe.
     */
    public static final class Builder {

        private final Map<Key, Figures> byKey = new LinkedHashMap<>();
        private final Map<String, EngineArguments> configurations = new LinkedHashMap<>();
        private final Map<String, Integer> releaseOrder = new LinkedHashMap<>();
        private int compared;
        private int excluded;

        /** Adds a record (in the order recorded: the first of a release places its groups). */
        public Builder add(RestartRecord record) {
            if (!seenBeginning(record)) {
                excluded++;
                return this;
            }
            compared++;
            EngineArguments arguments = record.engine().arguments();
            Key key = key(record, arguments);
            byKey.computeIfAbsent(key, k -> new Figures()).add(record);
            configurations.putIfAbsent(key.configuration(), arguments);
            releaseOrder.putIfAbsent(key.release(), releaseOrder.size());
            return this;
        }

        /** The comparison of the records added so far. */
        public RestartComparison build() {
            Map<String, List<String>> differs = EngineArguments.differences(configurations.values());
            Map<String, List<Double>> coldLatencies = new LinkedHashMap<>();
            byKey.forEach((key, figures) -> {
                if (key.path() == RestartPath.COLD) {
                    coldLatencies
                            .computeIfAbsent(key.release(), k -> new ArrayList<>())
                            .addAll(figures.latencies);
                }
            });
            List<Group> groups = new ArrayList<>();
            byKey.entrySet().stream()
                    .sorted(Comparator.<Map.Entry<Key, Figures>>comparingInt(
                                    entry -> releaseOrder.get(entry.getKey().release()))
                            .thenComparing(entry -> entry.getKey().path())
                            .thenComparing(entry -> entry.getKey().recovery()))
                    .forEach(entry -> groups.add(entry.getValue()
                            .group(
                                    entry.getKey(),
                                    differs.getOrDefault(entry.getKey().configuration(), List.of()),
                                    percentile(
                                            coldLatencies.getOrDefault(
                                                    entry.getKey().release(), List.of()),
                                            0.5))));
            return new RestartComparison(groups, compared, excluded);
        }
    }

    /** One group's numbers so far: what each record added to it. */
    private static final class Figures {
        int starts;
        int ready;
        final List<Double> latencies = new ArrayList<>();
        final Map<Phase, List<Double>> phases = new EnumMap<>(Phase.class);
        final Map<String, List<Double>> logged = new LinkedHashMap<>();
        final List<Double> atReady = new ArrayList<>();
        final List<Double> afterStop = new ArrayList<>();
        Stop.@Nullable Traffic traffic;

        void add(RestartRecord record) {
            starts++;
            Stop stop = record.stop();
            Stop.Traffic counted = stop == null ? null : stop.traffic();
            if (counted != null) {
                traffic = traffic == null
                        ? counted
                        : new Stop.Traffic(
                                traffic.inFlight() + counted.inFlight(),
                                traffic.finished() + counted.finished(),
                                traffic.cut() + counted.cut(),
                                traffic.cutTokens() + counted.cutTokens());
            }
            if (record.verdict().outcome() == Outcome.READY) {
                ready++;
            }
            // A bound (the engine gave no start time of its own) is no measurement: counted, not timed.
            Duration latency = record.verdict().measuredReadinessLatency();
            if (record.verdict().outcome() == Outcome.READY && latency != null && !latency.isNegative()) {
                latencies.add(latency.toNanos() / 1e9);
            }
            record.verdict().measuredPhaseDurations().forEach((phase, duration) -> {
                if (PHASES.contains(phase)) {
                    phases.computeIfAbsent(phase, p -> new ArrayList<>()).add(duration.toNanos() / 1e9);
                }
            });
            for (String name : LOGGED) {
                Double seconds = record.verdict().loggedDurations().get(name);
                if (seconds != null && Double.isFinite(seconds)) {
                    logged.computeIfAbsent(name, n -> new ArrayList<>()).add(seconds);
                }
            }
            addMib(atReady, record.memory().atReady());
            addMib(afterStop, record.memory().afterStop());
        }

        Group group(Key key, List<String> differs, @Nullable Double coldMedian) {
            Double median = percentile(latencies, 0.5);
            Latency latency = median == null
                    ? null
                    : new Latency(
                            rounded(median), rounded(percentile(latencies, 0.95)), rounded(percentile(latencies, 1.0)));
            Map<Phase, Double> phaseMedians = new EnumMap<>(Phase.class);
            phases.forEach((phase, values) -> phaseMedians.put(phase, rounded(percentile(values, 0.5))));
            Map<String, Double> loggedMedians = new LinkedHashMap<>();
            for (String name : LOGGED) {
                List<Double> values = logged.get(name);
                if (values != null) {
                    loggedMedians.put(name, rounded(percentile(values, 0.5)));
                }
            }
            // A wake's latency runs from the engine awake, not from a start: no speed-up over a cold start's.
            Double speedup = coldMedian == null || median == null || median <= 0 || key.path() == RestartPath.WAKE
                    ? null
                    : BigDecimal.valueOf(coldMedian / median)
                            .setScale(2, RoundingMode.HALF_UP)
                            .doubleValue();
            return new Group(
                    key,
                    differs,
                    starts,
                    ready,
                    starts - ready,
                    latency,
                    phaseMedians,
                    loggedMedians,
                    mib(percentile(atReady, 0.5)),
                    mib(percentile(afterStop, 0.5)),
                    speedup,
                    traffic);
        }
    }

    private static Key key(RestartRecord record, EngineArguments arguments) {
        return new Key(
                known(record.engine().vllmVersion()),
                known(record.engine().revision()),
                arguments.configurationHash(),
                record.pathEvidence().path(),
                record.recovery().kind());
    }

    private static String known(@Nullable String value) {
        return value == null || value.isBlank() ? "unknown" : value;
    }

    private static void addMib(List<Double> values, @Nullable MemoryMoment moment) {
        if (moment != null) {
            values.add((double) MemoryMoment.mib(moment.usedBytes()));
        }
    }

    private static @Nullable Long mib(@Nullable Double value) {
        return value == null ? null : Math.round(value);
    }

    /** The nearest-rank percentile of the values ({@code 0.5}: the lower middle of an even count), or null. */
    static @Nullable Double percentile(List<Double> values, double fraction) {
        if (values.isEmpty()) {
            return null;
        }
        List<Double> sorted = values.stream().sorted().toList();
        int rank = (int) Math.ceil(fraction * sorted.size());
        return sorted.get(Math.clamp(rank - 1, 0, sorted.size() - 1));
    }

    private static double rounded(@Nullable Double seconds) {
        return seconds == null
                ? Double.NaN
                : BigDecimal.valueOf(seconds).setScale(3, RoundingMode.HALF_UP).doubleValue();
    }

    // ---- views

    /** The CSV's lines (RFC 4180, CRLF): the header, then one per group. */
    public List<String> csvLines() {
        return ComparisonView.csvLines(this);
    }

    /** The comparison as {@code /status} shows it. */
    public Map<String, Object> status() {
        return ComparisonView.status(this);
    }
}
