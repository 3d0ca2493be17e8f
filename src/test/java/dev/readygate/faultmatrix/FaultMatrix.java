package dev.readygate.faultmatrix;

import static org.awaitility.Awaitility.await;

import dev.readygate.faultmatrix.FaultCase.Condition;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * The fault matrix: every simulator fault ({@link FaultCase}) injected into a ready engine, idle and under load, and
 * for each the time to {@code /readyz} 503, the reason, and the time back to 200 once the fault is cleared, against
 * the bounds readygate promises. Rows run on several lanes at once (each its own simulator and readygate), one after
 * the other within a lane.
 */
final class FaultMatrix {

    /** One row of the matrix. */
    record Row(FaultCase fault, Condition condition) {

        String label() {
            return fault.label + ", " + condition.value();
        }
    }

    /**
     * What one row measured.
     *
     * @param row the row
     * @param toNotReady from the fault to 503, or null when readygate did not say 503 within the row's wait
     * @param seenUnderLoad for a fault no bound covers under load ({@code slow}: busy, not broken): whether 503 came
     *     while the load ran
     * @param afterLoad for such a fault not seen under load: from the end of the load to 503, or null
     * @param reason the reason of the first not-ready state
     * @param backToReady from the clear to the 200 that held, or null when it did not come back within its wait
     * @param dropsAfterBack how often readiness dropped again while the row watched it after coming back
     * @param notReadyBound the bound {@code toNotReady} is held to (for the reason seen), or null when none is promised
     * @param backBound the bound {@code backToReady} is held to
     * @param suspended whether the heavy probes were suspended (the breaker open) when the fault was cleared
     * @param problem what went wrong running the row (not a measurement), or null
     */
    record Result(
            Row row,
            @Nullable Duration toNotReady,
            boolean seenUnderLoad,
            @Nullable Duration afterLoad,
            @Nullable String reason,
            @Nullable Duration backToReady,
            long dropsAfterBack,
            @Nullable Duration notReadyBound,
            Duration backBound,
            boolean suspended,
            @Nullable String problem) {}

    /**
     * The time a bound is checked against: the bound plus a quarter and a second, for a shared, noisy machine (timers
     * that fire late, a garbage collection, two JVM threads on two cores). The table gives the bound itself.
     */
    static Duration limit(Duration bound) {
        return bound.plus(bound.dividedBy(4)).plusSeconds(1);
    }

    private final MatrixSettings settings;
    private final Clock clock = Clock.systemUTC();

    FaultMatrix(MatrixSettings settings) {
        this.settings = settings;
    }

    /** Every fault, idle and under load. */
    static List<Row> rows() {
        return rows("");
    }

    /** The faults named (comma-separated {@link FaultCase} names; all when blank), idle and under load. */
    static List<Row> rows(String faults) {
        List<String> only = faults.isBlank()
                ? List.of()
                : java.util.Arrays.stream(faults.split(",")).map(String::strip).toList();
        List<Row> rows = new ArrayList<>();
        for (FaultCase fault : FaultCase.values()) {
            if (!only.isEmpty() && !only.contains(fault.name())) {
                continue;
            }
            for (Condition condition : Condition.values()) {
                rows.add(new Row(fault, condition));
            }
        }
        return rows;
    }

    /** Runs {@code rows} on {@code lanes} lanes at once; results in the order of {@code rows}. */
    List<Result> run(List<Row> rows, int lanes, Path dir) throws InterruptedException {
        List<List<Row>> byLane = new ArrayList<>();
        long[] load = new long[lanes];
        for (int i = 0; i < lanes; i++) {
            byLane.add(new ArrayList<>());
        }
        // The longest rows first, each to the lane with the least work so far.
        rows.stream().sorted(Comparator.comparing(this::estimate).reversed()).forEach(row -> {
            int lightest = 0;
            for (int i = 1; i < lanes; i++) {
                if (load[i] < load[lightest]) {
                    lightest = i;
                }
            }
            byLane.get(lightest).add(row);
            load[lightest] += estimate(row).toMillis();
        });
        // The lanes start one after the other: Spring Boot initializes the logging system of the JVM as each context
        // starts, which is not safe to do from two threads at once.
        List<Lane> started = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(lanes);
        List<Result> all = new ArrayList<>();
        try {
            for (int i = 0; i < lanes; i++) {
                started.add(new Lane("lane-" + i, dir.resolve("lane-" + i), settings));
            }
            List<Future<List<Result>>> futures = new ArrayList<>();
            for (int i = 0; i < lanes; i++) {
                Lane lane = started.get(i);
                List<Row> mine = byLane.get(i);
                futures.add(threads.submit(() -> runLane(lane, mine)));
            }
            for (Future<List<Result>> future : futures) {
                all.addAll(future.get());
            }
        } catch (ExecutionException ex) {
            throw new IllegalStateException("a lane failed", ex.getCause());
        } finally {
            threads.shutdownNow();
            started.forEach(Lane::close);
        }
        all.sort(Comparator.comparing(result -> rows.indexOf(result.row())));
        return all;
    }

    private Duration estimate(Row row) {
        Duration toNotReady = row.fault().toNotReady(settings, row.condition());
        Duration detect = toNotReady != null
                ? toNotReady
                : settings.loadWindow().plus(nonNull(row.fault().toNotReady(settings, Condition.IDLE), settings));
        return detect.plus(row.fault().backToReady(settings));
    }

    private static Duration nonNull(@Nullable Duration bound, MatrixSettings settings) {
        return bound != null ? bound : settings.heavyInterval().multipliedBy(2);
    }

    private List<Result> runLane(Lane lane, List<Row> rows) {
        List<Result> results = new ArrayList<>();
        for (Row row : rows) {
            results.add(runRow(lane, row));
        }
        return results;
    }

    private Result runRow(Lane lane, Row row) {
        FaultCase fault = row.fault();
        // The longest any of its reasons may take; held to the bound of the reason seen.
        Duration wait = fault.toNotReady(settings, row.condition());
        Duration backBound = fault.backToReady(settings);
        try {
            lane.awaitSteadyReady(Duration.ofMillis(500), Duration.ofSeconds(60));
            if (row.condition() == Condition.LOAD) {
                Instant loaded = lane.now();
                lane.startLoad();
                // Under load as readygate sees it: a scrape found requests running. The load alone must not take the
                // engine out.
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(20))
                        .until(lane::busyAsReadygateSees);
                if (lane.dropsAfter(loaded) > 0) {
                    return problem(row, wait, backBound, "load alone took the engine out");
                }
            }
            Instant faultAt = fault.inject(lane);
            boolean seenUnderLoad = false;
            Duration afterLoad = null;
            if (wait != null) {
                awaitNotReady(lane, fault, faultAt, limit(wait));
            } else if (row.condition() == Condition.LOAD && fault.seenWith(settings)) {
                // No bound under load (slow is busy, not broken): is it seen while the load lasts, and within the idle
                // bound once it stops?
                awaitNotReady(lane, fault, faultAt, settings.loadWindow());
                seenUnderLoad = out(lane, fault, faultAt) != null;
                lane.stopLoad();
                if (!seenUnderLoad) {
                    Instant stopped = lane.now();
                    awaitNotReady(
                            lane,
                            fault,
                            stopped,
                            limit(Objects.requireNonNull(fault.toNotReady(settings, Condition.IDLE))));
                    Lane.Change out = out(lane, fault, stopped);
                    afterLoad = out == null ? null : Duration.between(stopped, out.at());
                }
            } else {
                // Not seen with these settings (slow without a latency objective): watched for two heavy intervals.
                awaitNotReady(lane, fault, faultAt, settings.heavyInterval().multipliedBy(2));
            }
            Lane.Change out = out(lane, fault, faultAt);
            // A fault that breaks generation, which the light checks took the engine out for, lasts as a user's would
            // until the retried verifications have suspended the heavy probes (the breaker opened): the way back is
            // measured from there. (slow is not: its verifications fail as slow, which waits out the suspension.)
            boolean suspended = out != null
                    && (fault.seen == FaultCase.Seen.LIGHT_FAILS || fault.seen == FaultCase.Seen.LIGHT_TIMES_OUT)
                    && LIGHT_CHECK_REASONS.contains(out.reason())
                    && awaitSuspended(lane);
            if (suspended) {
                backBound = fault.backToReady(settings, true);
            }
            lane.stopLoad();
            Duration toNotReady = out == null ? null : Duration.between(faultAt, out.at());
            Instant clearedFrom = fault.clear(lane.engine, clock);
            Duration settle = fault == FaultCase.CRASH_LOOP
                    ? MatrixSettings.CRASH_LOOP_UPTIME
                            .plus(MatrixSettings.AUTO_RESTART_DELAY)
                            .plusSeconds(1)
                    : Duration.ofSeconds(1);
            Duration backToReady;
            long drops;
            if (out == null && lane.ready()) {
                // Never out (slow without an objective): nothing to come back from.
                backToReady = Duration.ZERO;
                drops = lane.dropsAfter(clearedFrom);
            } else {
                Lane.Change back = awaitBack(lane, clearedFrom, limit(backBound).plus(settle), settle);
                backToReady = back == null ? null : Duration.between(clearedFrom, back.at());
                drops = back == null ? 0 : lane.dropsAfter(back.at());
            }
            String reason = out == null ? null : out.reason();
            return new Result(
                    row,
                    toNotReady,
                    seenUnderLoad,
                    afterLoad,
                    reason,
                    backToReady,
                    drops,
                    wait == null ? null : fault.toNotReady(settings, row.condition(), reason),
                    backBound,
                    suspended,
                    null);
        } catch (RuntimeException ex) {
            return problem(row, wait, backBound, ex.toString());
        } finally {
            lane.stopLoad();
            lane.engine.clearFaults();
        }
    }

    private static Result problem(Row row, @Nullable Duration notReadyBound, Duration backBound, String problem) {
        return new Result(row, null, false, null, null, null, 0, notReadyBound, backBound, false, problem);
    }

    /** The reasons of the light checks: a fault they see gets a trial while the heavy probes are suspended. */
    static final java.util.Set<String> LIGHT_CHECK_REASONS =
            java.util.Set.of("generation_failed", "generation_timed_out", "generation_stalled");

    /**
     * Waits until the lane's heavy probes are suspended, at most {@link MatrixSettings#suspendWithin}; whether they
     * are.
     */
    private boolean awaitSuspended(Lane lane) {
        try {
            await().atMost(settings.suspendWithin())
                    .pollInterval(Duration.ofMillis(50))
                    .until(lane::heavyProbesSuspended);
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            return false;
        }
    }

    /**
     * The change that took the engine out for the fault, at or after {@code from}: the first to not ready; for a wake's
     * fault, the first with its reason (the engine was out of service asleep, and verifying the wake before it failed).
     */
    private static Lane.@Nullable Change out(Lane lane, FaultCase fault, Instant from) {
        return fault.seen == FaultCase.Seen.WAKE
                ? lane.firstNotReadyAfter(from, fault::isItsReason)
                : lane.firstNotReadyAfter(from);
    }

    private static void awaitNotReady(Lane lane, FaultCase fault, Instant from, Duration limit) {
        try {
            await().atMost(limit).pollInterval(Duration.ofMillis(10)).until(() -> out(lane, fault, from) != null);
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            // Not seen within the wait: the result says so.
        }
    }

    /**
     * Waits until readygate is ready again after {@code from} and stays ready for {@code settle}; the change to ready
     * that held, or null.
     */
    private static Lane.@Nullable Change awaitBack(Lane lane, Instant from, Duration limit, Duration settle) {
        try {
            await().atMost(limit.plus(settle))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> {
                        Lane.Change last = lane.lastReadyAfter(from);
                        return last != null
                                && lane.ready()
                                && Duration.between(last.at(), lane.now()).compareTo(settle) >= 0;
                    });
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            return null;
        }
        return lane.lastReadyAfter(from);
    }

    /** How a row's measurement breaks its promise, one line each; empty when it keeps it. */
    List<String> violations(Result r) {
        FaultCase fault = r.row().fault();
        List<String> out = new ArrayList<>();
        if (r.problem() != null) {
            out.add(r.row().label() + ": not measured: " + r.problem());
            return out;
        }
        Duration bound = r.notReadyBound();
        if (bound != null) {
            if (r.toNotReady() == null || r.toNotReady().compareTo(limit(bound)) > 0) {
                out.add(r.row().label() + ": 503 after " + seconds(r.toNotReady()) + ", promised within "
                        + seconds(bound));
            }
        } else if (!fault.seenWith(settings)) {
            if (r.toNotReady() != null) {
                out.add(r.row().label() + ": 503 although these settings cannot see it (" + r.reason() + ")");
            }
        } else if (!r.seenUnderLoad()) {
            // Not seen while the load ran (slow: busy, not broken): it must be seen once the engine is idle.
            Duration idle = fault.toNotReady(settings, Condition.IDLE);
            if (r.afterLoad() == null || idle == null || r.afterLoad().compareTo(limit(idle)) > 0) {
                out.add(r.row().label() + ": 503 " + seconds(r.afterLoad())
                        + " after the load stopped, promised within " + seconds(idle));
            }
        }
        if (fault.seenWith(settings) && !fault.isItsReason(r.reason())) {
            out.add(r.row().label() + ": reason " + r.reason() + ", expected " + fault.reasons());
        }
        if (r.backToReady() == null || r.backToReady().compareTo(limit(r.backBound())) > 0) {
            out.add(r.row().label() + ": back to 200 after " + seconds(r.backToReady()) + ", promised within "
                    + seconds(r.backBound()));
        }
        if (r.dropsAfterBack() > 0) {
            out.add(r.row().label() + ": dropped " + r.dropsAfterBack() + " times once back");
        }
        return out;
    }

    // ---- the table

    /** The measured table, as docs/readiness.md shows it. */
    String table(List<Result> results) {
        StringBuilder out = new StringBuilder();
        out.append("| Fault | Engine | Reason | To 503 | Promised | Back to 200 | Promised |\n");
        out.append("|---|---|---|---|---|---|---|\n");
        for (Result r : results) {
            FaultCase fault = r.row().fault();
            out.append("| `")
                    .append(fault.label)
                    .append("` | ")
                    .append(r.row().condition().value())
                    .append(" | ")
                    .append(r.reason() == null ? "—" : "`" + r.reason() + "`")
                    .append(" | ")
                    .append(measuredNotReady(r))
                    .append(" | ")
                    .append(promisedNotReady(r))
                    .append(" | ")
                    .append(
                            r.backToReady() == null
                                    ? "not back"
                                    : r.toNotReady() == null && r.problem() == null
                                            ? "never left 200"
                                            : seconds(r.backToReady()))
                    .append(r.dropsAfterBack() > 0 ? " (then dropped " + r.dropsAfterBack() + "x)" : "")
                    .append(" | ")
                    .append("≤ ")
                    .append(seconds(r.backBound()))
                    .append(" ")
                    .append(backFrom(fault))
                    .append(r.suspended() ? ", heavy probes suspended (the breaker opened while it lasted)" : "")
                    .append(" |\n");
        }
        return out.toString();
    }

    private String measuredNotReady(Result r) {
        if (r.problem() != null) {
            return "not measured: " + r.problem().replace('|', '/');
        }
        if (r.notReadyBound() == null
                && r.row().condition() == Condition.LOAD
                && r.row().fault().seenWith(settings)) {
            if (r.seenUnderLoad()) {
                return seconds(r.toNotReady()) + " (under load)";
            }
            return "not seen in " + seconds(settings.loadWindow()) + " of load; "
                    + (r.afterLoad() == null
                            ? "not seen after it"
                            : seconds(r.afterLoad()) + " after the load stopped");
        }
        return r.toNotReady() == null ? "not seen" : seconds(r.toNotReady());
    }

    private String promisedNotReady(Result r) {
        FaultCase fault = r.row().fault();
        if (!fault.seenWith(settings)) {
            return "none: no latency objective set, and a light check answers within its timeout";
        }
        if (r.notReadyBound() == null && r.problem() == null) {
            return "none under load (a slow engine that makes progress is busy, not broken)" + "; once idle ≤ "
                    + seconds(fault.toNotReady(settings, Condition.IDLE));
        }
        Duration bound = r.notReadyBound() != null
                ? r.notReadyBound()
                : fault.toNotReady(settings, r.row().condition());
        String goal = fault.inReadyEngineGoal() && bound != null && bound.compareTo(FaultCase.READY_ENGINE_GOAL) > 0
                ? "; issue 16's goal: ≤ " + seconds(FaultCase.READY_ENGINE_GOAL)
                : "";
        return "≤ " + seconds(bound) + " (" + fault.formula(settings, r.row().condition(), r.reason()) + ")" + goal;
    }

    private static String backFrom(FaultCase fault) {
        return switch (fault.back) {
            case HEALTH_PASSES -> "after the clear";
            case NEXT_VERIFICATION -> "after the clear";
            case AFTER_RESTART ->
                fault == FaultCase.WRONG_WEIGHTS
                        ? "after the restart listens (latched until the engine restarts)"
                        : "after the restarted engine listens";
            case AFTER_CRASH_LOOP -> "after the clear (a crash already scheduled still fires)";
            case AFTER_STARTUP_FAILURE -> "after the clear (the start in progress still fails)";
        };
    }

    static String seconds(@Nullable Duration duration) {
        if (duration == null) {
            return "—";
        }
        double s = duration.toMillis() / 1000.0;
        return String.format(Locale.ROOT, s < 10 ? "%.2f s" : "%.1f s", s);
    }
}
