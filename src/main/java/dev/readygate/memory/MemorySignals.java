package dev.readygate.memory;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gpu.MemoryMoment;
import dev.readygate.gpu.ProcessOwners.Owner;
import dev.readygate.restart.CycleMemory;
import dev.readygate.restart.Outcome;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import dev.readygate.restart.Stop;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Reads the restart history's memory moments for the four memory signals. Pure: the same history gives the same
 * assessment.
 *
 * <ul>
 *   <li><b>Leak across restarts</b>: memory at readiness over the latest {@code window} ready cycles with the same
 *       configuration (model, root, revision, engine arguments, version) and the same restart path; with at least
 *       {@code leak-cycles} of them, a least-squares growth per cycle above {@code drift-threshold} (and the last
 *       cycle above the first by as much) is a leak. Paths are kept apart: a cold start holds its weights in the
 *       engine, a preload hit in the daemon. A start readygate did not see begin ({@code comparable} false) is no cycle.
 *   <li><b>Held after stop</b>: after the latest stop, an engine process that was serving at readiness and still holds
 *       memory, a process of another owner that appeared with the engine and stayed, or a preload daemon holding more
 *       than before the start (by more than {@code tolerance}). A daemon holding what it held before is expected: that
 *       is what it is for. A start that fell asleep (vLLM's sleep mode) is not judged: its engine lives on.
 *   <li><b>Stale cache</b>: the daemon's memory beyond the current checkpoint's weights and its own overhead, when the
 *       engine's log shows the daemon holds another checkpoint (see {@link DaemonCheckpoint}: the last preload hit was
 *       for another checkpoint, or a fingerprint mismatch), or, after a checkpoint switch, when it holds the current
 *       one and more. Only starts this process recorded count, since the daemon last changed. The overhead is learned
 *       from the last preload hit before the switch when possible, else {@code daemon-overhead}.
 *   <li><b>KV cache shrinking</b>: the latest {@code kv_cache_size_tokens} below an earlier one of the same
 *       configuration by more than {@code kv-shrink-fraction}: something else took the memory vLLM sizes its KV cache
 *       from.
 * </ul>
 */
public final class MemorySignals {

    private static final double GIB = 1024.0 * 1024 * 1024;

    private MemorySignals() {}

    /**
     * The assessment of a history whose every start this process recorded, with no reading showing the daemon change.
     *
     * @see #assess(List, DaemonSightings, MemoryMoment, MemoryMoment, ReadygateProperties.Memory)
     */
    public static MemoryAssessment assess(
            List<RestartRecord> history,
            @Nullable MemoryMoment lowest,
            @Nullable MemoryMoment latest,
            ReadygateProperties.Memory settings) {
        Set<String> ids = new HashSet<>();
        history.forEach(record -> ids.add(record.id()));
        return assess(history, new DaemonSightings(ids, null), lowest, latest, settings);
    }

    /**
     * @param history the recorded starts, oldest first
     * @param sightings which starts this process recorded, and when a reading last showed the preload daemon change
     * @param lowest of the readings since the latest start was recorded, the one where the preload daemon held least
     *     (a stale cache clears once the daemon let go), or null
     * @param latest the latest reading, or null (memory held after a stop clears once its holder let go)
     * @param settings the thresholds
     */
    public static MemoryAssessment assess(
            List<RestartRecord> history,
            DaemonSightings sightings,
            @Nullable MemoryMoment lowest,
            @Nullable MemoryMoment latest,
            ReadygateProperties.Memory settings) {
        List<RestartRecord> ready = history.stream()
                .filter(record -> record.verdict().outcome() == Outcome.READY)
                .sorted(Comparator.comparing(record -> record.when().engineStart()))
                .toList();
        return new MemoryAssessment(
                drift(ready, settings),
                heldAfterStop(history, latest, settings),
                staleCache(history, ready, sightings, lowest, settings),
                kvCache(ready, settings),
                latestMoments(history));
    }

    /** Before the start and at readiness of the last start measured at readiness; after the stop of the last stopped. */
    private static CycleMemory latestMoments(List<RestartRecord> history) {
        MemoryMoment beforeStart = null;
        MemoryMoment atReady = null;
        MemoryMoment afterStop = null;
        for (RestartRecord record : history.reversed()) {
            if (atReady == null && record.memory().atReady() != null) {
                atReady = record.memory().atReady();
                beforeStart = record.memory().beforeStart();
            }
            if (afterStop == null) {
                afterStop = record.memory().afterStop();
            }
        }
        return new CycleMemory(beforeStart, atReady, afterStop);
    }

    // ---- leak across restarts

    private static MemoryAssessment.@Nullable Drift drift(List<RestartRecord> ready, ReadygateProperties.Memory s) {
        // A start readygate did not see begin is no restart cycle: its reading is of an engine that was up already.
        List<RestartRecord> measured = ready.stream()
                .filter(record -> record.when().comparable() && record.memory().atReady() != null)
                .toList();
        if (measured.isEmpty()) {
            return null;
        }
        RestartRecord latest = measured.getLast();
        List<RestartRecord> same = latestMatching(
                measured,
                record -> configuration(record) + "|"
                        + record.pathEvidence().path().value(),
                s.window());
        if (same.size() < s.leakCycles()) {
            return null;
        }
        List<MemoryMoment> moments =
                same.stream().map(record -> atReady(record.memory())).toList();
        long perCycle = slope(moments, MemoryMoment::usedBytes);
        Map<String, Long> byOwner = new LinkedHashMap<>();
        Set<Owner> owners = new TreeSet<>(Comparator.comparing(Owner::value));
        moments.forEach(moment -> owners.addAll(moment.byOwner().keySet()));
        owners.forEach(owner -> byOwner.put(owner.value(), slope(moments, moment -> moment.owner(owner))));
        long first = moments.getFirst().usedBytes();
        long last = moments.getLast().usedBytes();
        long threshold = s.driftThreshold().toBytes();
        boolean leak = perCycle > threshold && last - first >= threshold;
        return new MemoryAssessment.Drift(
                same.size(), latest.pathEvidence().path().value(), perCycle, byOwner, first, last, leak);
    }

    /** The least-squares slope of the values against the cycle number, in bytes per cycle. */
    private static long slope(List<MemoryMoment> moments, ToLongFunction<MemoryMoment> value) {
        int n = moments.size();
        double meanX = (n - 1) / 2.0;
        double meanY = moments.stream().mapToLong(value).average().orElse(0);
        double numerator = 0;
        double denominator = 0;
        for (int i = 0; i < n; i++) {
            numerator += (i - meanX) * (value.applyAsLong(moments.get(i)) - meanY);
            denominator += (i - meanX) * (i - meanX);
        }
        return denominator == 0 ? 0 : Math.round(numerator / denominator);
    }

    // ---- held after stop

    private static MemoryAssessment.@Nullable HeldAfterStop heldAfterStop(
            List<RestartRecord> history, @Nullable MemoryMoment latest, ReadygateProperties.Memory s) {
        RestartRecord stopped = history.stream()
                .filter(record -> record.memory().afterStop() != null)
                .max(Comparator.comparing(record ->
                        Objects.requireNonNull(record.memory().afterStop()).at()))
                .orElse(null);
        if (stopped == null || stopped.stop() != null && stopped.stop().how() == Stop.How.SLEPT) {
            // A start that fell asleep lives on: its engine holds what sleep did not free, by design.
            return null;
        }
        CycleMemory memory = stopped.memory();
        MemoryMoment after = Objects.requireNonNull(memory.afterStop());
        MemoryMoment before = memory.beforeStart();
        MemoryMoment atReady = memory.atReady();
        long tolerance = s.tolerance().toBytes();
        Set<Integer> servingEngine = new HashSet<>();
        Set<Integer> presentAtReady = new HashSet<>();
        if (atReady != null) {
            atReady.processes().forEach(holder -> {
                presentAtReady.add(holder.pid());
                if (holder.owner() == Owner.ENGINE) {
                    servingEngine.add(holder.pid());
                }
            });
        }
        Set<Integer> presentBefore = new HashSet<>();
        if (before != null) {
            before.processes().forEach(holder -> presentBefore.add(holder.pid()));
        }
        List<MemoryAssessment.Holder> holders = new ArrayList<>();
        boolean unexpected = false;
        for (MemoryMoment.Holder holder : after.processes()) {
            MemoryAssessment.Holder judged = letGo(
                    judge(holder, before, servingEngine, presentAtReady, presentBefore, tolerance),
                    after,
                    latest,
                    tolerance);
            holders.add(judged);
            unexpected |= !judged.expected();
        }
        long unexplained = 0;
        if (after.processes().isEmpty() && before != null) {
            // The source lists no processes (DCGM): only the total can say the cycle left memory behind.
            unexplained = Math.max(0, after.usedBytes() - before.usedBytes());
            unexpected |= unexplained > tolerance;
        }
        return new MemoryAssessment.HeldAfterStop(stopped.id(), after.at(), holders, unexplained, unexpected);
    }

    /**
     * An unexpected holder that a later reading shows let go: its process is gone, or (a daemon) it holds no more than
     * before the start again.
     */
    private static MemoryAssessment.Holder letGo(
            MemoryAssessment.Holder holder, MemoryMoment after, @Nullable MemoryMoment latest, long tolerance) {
        if (holder.expected()
                || latest == null
                || !latest.at().isAfter(after.at())
                || latest.processes().isEmpty()) {
            return holder;
        }
        long now = latest.processes().stream()
                .filter(process -> process.pid() == holder.pid())
                .mapToLong(MemoryMoment.Holder::bytes)
                .sum();
        boolean gone = latest.processes().stream().noneMatch(process -> process.pid() == holder.pid());
        long heldBefore = holder.bytes() - holder.unexpectedBytes();
        if (gone || (holder.owner() == Owner.PRELOAD_DAEMON && now - heldBefore <= tolerance)) {
            return new MemoryAssessment.Holder(
                    holder.pid(), holder.owner(), holder.bytes(), true, 0, holder.why() + "; let go by " + latest.at());
        }
        return holder;
    }

    private static MemoryAssessment.Holder judge(
            MemoryMoment.Holder holder,
            @Nullable MemoryMoment before,
            Set<Integer> servingEngine,
            Set<Integer> presentAtReady,
            Set<Integer> presentBefore,
            long tolerance) {
        int pid = holder.pid();
        if (servingEngine.contains(pid)) {
            return new MemoryAssessment.Holder(
                    pid,
                    holder.owner(),
                    holder.bytes(),
                    false,
                    holder.bytes(),
                    "an engine process that served this start still holds memory");
        }
        if (holder.owner() == Owner.PRELOAD_DAEMON) {
            long heldBefore = before == null
                    ? -1
                    : before.processes().stream()
                            .filter(earlier -> earlier.pid() == pid)
                            .mapToLong(MemoryMoment.Holder::bytes)
                            .sum();
            if (heldBefore >= 0 && presentBefore.contains(pid) && holder.bytes() - heldBefore > tolerance) {
                return new MemoryAssessment.Holder(
                        pid,
                        holder.owner(),
                        holder.bytes(),
                        false,
                        holder.bytes() - heldBefore,
                        "the preload daemon holds " + MemoryMoment.mib(holder.bytes() - heldBefore)
                                + " MiB more than before the start");
            }
            return new MemoryAssessment.Holder(
                    pid,
                    holder.owner(),
                    holder.bytes(),
                    true,
                    0,
                    "the preload daemon keeps the weights for the next start");
        }
        if (before != null
                && presentAtReady.contains(pid)
                && !presentBefore.contains(pid)
                && holder.bytes() > tolerance) {
            return new MemoryAssessment.Holder(
                    pid,
                    holder.owner(),
                    holder.bytes(),
                    false,
                    holder.bytes(),
                    "appeared with this start and stayed after it");
        }
        if (holder.owner() == Owner.ENGINE && !presentAtReady.contains(pid)) {
            return new MemoryAssessment.Holder(
                    pid, holder.owner(), holder.bytes(), true, 0, "a newer engine process (the next start)");
        }
        return new MemoryAssessment.Holder(pid, holder.owner(), holder.bytes(), true, 0, "held before this start too");
    }

    // ---- stale cache

    private static MemoryAssessment.@Nullable StaleCache staleCache(
            List<RestartRecord> history,
            List<RestartRecord> ready,
            DaemonSightings sightings,
            @Nullable MemoryMoment lowest,
            ReadygateProperties.Memory s) {
        // A start whose checkpoint is not fully known (a snapshot restore logs no arguments) is no evidence of a
        // switch, and the starts of a previous run say nothing about the daemon running now.
        List<RestartRecord> known = ready.stream()
                .filter(DaemonCheckpoint::checkpointKnown)
                .filter(record -> sightings.recordedHere().contains(record.id()))
                .toList();
        if (known.isEmpty() || ready.getLast() != known.getLast()) {
            return null;
        }
        RestartRecord latest = known.getLast();
        String checkpoint = latest.engine().checkpoint();
        MemoryMoment atReady = latest.memory().atReady();
        if (atReady == null || atReady.processes().isEmpty()) {
            return null;
        }
        // Memory cannot tell which checkpoint the daemon holds; the engine's log can (a preload hit, a fingerprint
        // mismatch), and without such evidence there is no stale cache to report.
        DaemonCheckpoint daemon =
                DaemonCheckpoint.inferred(history, sightings.recordedHere(), sightings.daemonChangedAfter());
        if (daemon == null) {
            return null;
        }
        int switchedAt = known.size() - 1;
        while (switchedAt > 0 && known.get(switchedAt - 1).engine().checkpoint().equals(checkpoint)) {
            switchedAt--;
        }
        RestartRecord beforeSwitch = switchedAt == 0 ? null : known.get(switchedAt - 1);
        long serving;
        String previous;
        if (daemon.holds(checkpoint)) {
            // It holds the current weights (a rollback to what it still held, or it re-cached): only what it holds
            // beyond them, after a switch, is stale.
            if (beforeSwitch == null) {
                return null;
            }
            Long weights = weightsBytes(daemon.proof());
            if (weights == null) {
                return null;
            }
            serving = weights;
            previous = beforeSwitch.engine().checkpoint();
        } else if (daemon.holdsOtherThan(checkpoint)) {
            if (daemon.checkpoint() == null && daemon.proof().pathEvidence().wrongWeightsFromCache()) {
                // A hit that served another checkpoint's weights (same layout, same fingerprint: vLLM issue #59647)
                // is wrong weights, which the canary names; a checkpoint left over from a switch never passes the
                // fingerprint (it includes the revision), so this is no stale cache.
                return null;
            }
            serving = 0;
            previous = daemon.checkpoint() != null
                    ? daemon.checkpoint()
                    : beforeSwitch != null ? beforeSwitch.engine().checkpoint() : "another checkpoint";
        } else {
            return null;
        }
        long held = atReady.owner(Owner.PRELOAD_DAEMON);
        // A later reading can only show less: a daemon that let go is no stale cache any more.
        if (lowest != null
                && lowest.at().isAfter(atReady.at())
                && !lowest.processes().isEmpty()) {
            held = Math.min(held, lowest.owner(Owner.PRELOAD_DAEMON));
        }
        long overhead = overhead(known.subList(0, Math.max(1, switchedAt)), s);
        long stale = Math.max(0, held - serving - overhead);
        return new MemoryAssessment.StaleCache(
                previous,
                checkpoint,
                held,
                serving,
                overhead,
                stale,
                stale > s.tolerance().toBytes(),
                daemon.checkpoint(),
                daemon.why());
    }

    /** The daemon's memory beyond its weights at the last preload hit among these starts, else the configured one. */
    private static long overhead(List<RestartRecord> beforeSwitch, ReadygateProperties.Memory s) {
        for (int i = beforeSwitch.size() - 1; i >= 0; i--) {
            RestartRecord record = beforeSwitch.get(i);
            MemoryMoment atReady = record.memory().atReady();
            Long weights = weightsBytes(record);
            if (record.pathEvidence().path() == RestartPath.PRELOAD_HIT
                    && !record.pathEvidence().wrongWeightsFromCache()
                    && atReady != null
                    && weights != null
                    && atReady.owner(Owner.PRELOAD_DAEMON) > 0) {
                return Math.max(0, atReady.owner(Owner.PRELOAD_DAEMON) - weights);
            }
        }
        return s.daemonOverhead().toBytes();
    }

    /** The weights the engine logged: held outside the process (a cache hit), else what model loading took. */
    private static @Nullable Long weightsBytes(RestartRecord record) {
        Double gib = record.verdict().loggedDurations().get("weights_held_outside_gib");
        if (gib == null) {
            gib = record.verdict().loggedDurations().get("model_loading_gib");
        }
        return gib == null ? null : Math.round(gib * GIB);
    }

    // ---- KV cache

    private static MemoryAssessment.@Nullable KvCache kvCache(List<RestartRecord> ready, ReadygateProperties.Memory s) {
        List<RestartRecord> known = ready.stream()
                .filter(record -> record.engine().kvCacheSizeTokens() != null)
                .toList();
        if (known.size() < 2) {
            return null;
        }
        List<RestartRecord> same = latestMatching(known, MemorySignals::configuration, s.window());
        if (same.size() < 2) {
            return null;
        }
        List<Long> tokens = same.stream()
                .map(record -> Objects.requireNonNull(record.engine().kvCacheSizeTokens()))
                .toList();
        long latest = tokens.getLast();
        long largestEarlier = tokens.subList(0, tokens.size() - 1).stream()
                .mapToLong(Long::longValue)
                .max()
                .orElse(latest);
        boolean shrinking = latest < largestEarlier * (1 - s.kvShrinkFraction());
        return new MemoryAssessment.KvCache(same.size(), tokens, shrinking);
    }

    // ---- shared

    /** The configuration a cycle ran with: the same one means the same memory is expected. */
    static String configuration(RestartRecord record) {
        return String.join(
                "|",
                record.engine().checkpoint(),
                String.valueOf(record.engine().engineArgs()),
                String.valueOf(record.engine().vllmVersion()),
                String.valueOf(record.engine().maxModelLen()),
                record.node().getOrDefault("gpu_uuid", ""));
    }

    /** The latest {@code window} records whose key equals the latest record's, oldest first. */
    private static List<RestartRecord> latestMatching(
            List<RestartRecord> records, java.util.function.Function<RestartRecord, String> key, int window) {
        String wanted = key.apply(records.getLast());
        List<RestartRecord> same = new ArrayList<>();
        for (int i = records.size() - 1; i >= 0 && same.size() < window; i--) {
            if (key.apply(records.get(i)).equals(wanted)) {
                same.addFirst(records.get(i));
            }
        }
        return same;
    }

    private static MemoryMoment atReady(CycleMemory memory) {
        return Objects.requireNonNull(memory.atReady());
    }
}
