package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.SlotsSample;
import org.jspecify.annotations.Nullable;

/**
 * What the engine's metrics say about its other work between two scrapes: progress of real traffic is evidence that
 * the engine is busy, not broken; requests running or waiting without it are a stall. Progress is read in each
 * engine's own terms:
 *
 * <ul>
 *   <li>vLLM adds to {@code vllm:generation_tokens_total} at every engine step, a token for each request that produced
 *       one (its prompt tokens only with a request's first token): the work already running progresses when, beyond
 *       the probe's own tokens, at least one token was generated for every two requests running before the probe (one
 *       in the middle of a long chunked prefill runs and generates none). New
 *       requests prefilled meanwhile are no evidence that the running ones advance (an engine whose streams stall after
 *       their first tokens still takes in and prefills new requests). And vLLM gives every running request a token at
 *       every step: a probe whose own stream began and then stopped while the others advanced was left out of the
 *       batch, a stall of its own, unless vLLM preempted requests meanwhile ({@code vllm:num_preemptions_total} rose,
 *       or is not exported: a preempted request waits for KV cache and starts again).
 *   <li>llama.cpp adds to its token counters only when a request ends: its decode steps ({@code
 *       llamacpp:n_decode_total}), each of which advances every busy slot, are its progress. A step while other
 *       requests were processing advanced them, whatever the probe's own tokens (they ride in the same batch): never
 *       compared with the probe's own prompt and output tokens.
 *   <li>Any other engine (SGLang and TGI count tokens when a request ends): its prompt and generated tokens moving
 *       beyond the probe's own.
 * </ul>
 *
 * Pure.
 */
enum EngineLoad {
    /**
     * Nothing else runs or waits, and nothing came and went between the two scrapes beyond the probe's own work (on
     * llama.cpp: nothing processed before the probe, and no more decode steps than its own).
     */
    IDLE,
    /** Other requests run or wait, and the engine made progress beyond the probe's own tokens. */
    BUSY,
    /** Requests run or wait, and the engine made no progress (vLLM: less than a token for two running requests). */
    STALLED,
    /**
     * vLLM advanced its other requests, but the probe's own stream began and then stopped, with no preemption: the
     * engine left a running request out of its batch, a stall.
     */
    LEFT_OUT;

    /** The tokens a probe itself may have added to the engine's counters: none of them is progress of other work. */
    record OwnTokens(int prompt, int output) {

        int total() {
            return prompt + output;
        }
    }

    /** The engine's other work from {@code before} to {@code after}, while a probe ran. */
    static EngineLoad between(@Nullable EngineMetricsSample before, EngineMetricsSample after, OwnTokens own) {
        return judge(before, after, own, false);
    }

    /**
     * What the engine's other work says of a probe that got no (further) answer in time, and may still be running or
     * waiting in the engine when {@code after} was scraped: one request of {@code after} may be the probe's own, so the
     * engine is idle unless other work ran before the probe or more than one request runs or waits after it.
     *
     * @param ownStreamStopped whether the probe's own stream had begun and then went quiet ({@code STALLED})
     */
    static EngineLoad afterTimeout(
            @Nullable EngineMetricsSample before, EngineMetricsSample after, OwnTokens own, boolean ownStreamStopped) {
        double requests = count(after.requestsRunning()) + count(after.requestsWaiting());
        if (!working(before) && requests <= 1) {
            return IDLE;
        }
        return judge(before, after, own, ownStreamStopped);
    }

    private static EngineLoad judge(
            @Nullable EngineMetricsSample before, EngineMetricsSample after, OwnTokens own, boolean ownStreamStopped) {
        if (!working(after) && !working(before)) {
            // Nothing ran or waited when either scrape was taken, but short requests may have come and gone between
            // them, beside the probe: their work beyond the probe's own is other work, not an idle engine.
            return before != null && cameAndWent(before, after, own) ? BUSY : IDLE;
        }
        if (before == null) {
            return STALLED;
        }
        if (before.decodeSteps() != null && after.decodeSteps() != null) {
            return decodeSteps(before, after, own);
        }
        if (countsEveryStep(after)) {
            double generated = delta(before.generationTokens(), after.generationTokens()) - own.output();
            // Half a token each: a request in the middle of a long chunked prefill is running and generates none.
            if (generated < Math.max(1, Math.ceil(running(before) / 2))) {
                return STALLED;
            }
            boolean preempted = before.preemptions() == null
                    || after.preemptions() == null
                    || delta(before.preemptions(), after.preemptions()) > 0;
            return ownStreamStopped && !preempted ? LEFT_OUT : BUSY;
        }
        return tokens(before, after) > own.total() ? BUSY : STALLED;
    }

    /**
     * llama.cpp: each decode step evaluates one batch holding every busy slot (a generating slot's next token, the next
     * chunk of a slot's prompt), so a step while requests were processing advanced every one of them, the probe's own
     * steps included (they are shared with the others). No step at all is a stall. A request deferred afterwards
     * ({@code llamacpp:requests_deferred}) means every slot was taken: a probe sent while a slot looked free, whose slot
     * a client's request took first, waits in that queue while the steps advance the others (busy, whatever their
     * count). Only where nothing was processing before the probe and nothing waits after it may the steps be the
     * probe's own alone (one for its prompt, one per token): no more of them than it takes says nothing of other work
     * ({@link #IDLE}: the probe timed out on its own).
     */
    private static EngineLoad decodeSteps(EngineMetricsSample before, EngineMetricsSample after, OwnTokens own) {
        double steps = delta(before.decodeSteps(), after.decodeSteps());
        if (steps == 0) {
            return STALLED;
        }
        if (running(before) > 0 || own.total() == 0 || positive(after.requestsWaiting())) {
            return BUSY;
        }
        return steps > own.total() ? BUSY : IDLE;
    }

    /**
     * llama-server's slots from {@code before} to {@code after}, read from {@code /slots} (no {@code /metrics}): the
     * requests that held a slot before advanced when one of them generated a token since (its {@code n_decoded} rose)
     * or ended (the slot is free or serves another task). None of them moved while every one had begun generating is a
     * stall; a request still at 0 tokens may be in the middle of a long prompt, which {@code /slots} does not measure:
     * busy, not known to be stalled. Nothing held before is idle.
     */
    static EngineLoad betweenSlots(SlotsSample before, SlotsSample after) {
        java.util.Map<Integer, SlotsSample.Slot> now = new java.util.HashMap<>();
        after.slots().forEach(slot -> now.put(slot.id(), slot));
        boolean held = false;
        boolean prefilling = false;
        for (SlotsSample.Slot slot : before.slots()) {
            if (!slot.processing()) {
                continue;
            }
            held = true;
            SlotsSample.Slot later = now.get(slot.id());
            if (later == null
                    || !later.processing()
                    || later.task() != slot.task()
                    || later.decoded() > slot.decoded()) {
                return BUSY;
            }
            prefilling |= slot.decoded() == 0;
        }
        if (!held) {
            return IDLE;
        }
        return prefilling ? BUSY : STALLED;
    }

    /**
     * What llama-server's {@code /slots} read again says of a probe that got no answer in time (no {@code /metrics}):
     * a free slot left means the probe was not kept waiting for one ({@link #IDLE}: it timed out on its own). Every slot
     * taken, it may be waiting in the server's queue: compared with {@code before} (the latest reading before, or none)
     * as {@link #betweenSlots} does, and a slot taken since by another request is work that started ({@link #BUSY}).
     */
    static EngineLoad slotsAfterTimeout(@Nullable SlotsSample before, SlotsSample after) {
        if (!after.full()) {
            return IDLE;
        }
        EngineLoad load = before == null ? IDLE : betweenSlots(before, after);
        return load == IDLE ? BUSY : load;
    }

    /** The tokens the requests holding a slot in {@code before} generated by {@code after} (those still there). */
    static long decodedBetween(SlotsSample before, SlotsSample after) {
        java.util.Map<Integer, SlotsSample.Slot> now = new java.util.HashMap<>();
        after.slots().forEach(slot -> now.put(slot.id(), slot));
        long decoded = 0;
        for (SlotsSample.Slot slot : before.slots()) {
            SlotsSample.Slot later = now.get(slot.id());
            if (slot.processing() && later != null && later.processing() && later.task() == slot.task()) {
                decoded += Math.max(0, later.decoded() - slot.decoded());
            }
        }
        return decoded;
    }

    /**
     * Whether requests that neither scrape saw running did work between them, beyond the probe's own: more completions
     * than the probe's one ({@code vllm:request_success_total}), on vLLM more generated tokens than the probe's output
     * (counted at every step), on llama.cpp more decode steps than the probe takes, elsewhere more tokens than the
     * probe's own (counted when a request ends).
     */
    private static boolean cameAndWent(EngineMetricsSample before, EngineMetricsSample after, OwnTokens own) {
        if (before.requestSuccess() != null
                && after.requestSuccess() != null
                && delta(before.requestSuccess(), after.requestSuccess()) > (own.total() > 0 ? 1 : 0)) {
            return true;
        }
        if (before.decodeSteps() != null && after.decodeSteps() != null) {
            return delta(before.decodeSteps(), after.decodeSteps()) > own.total();
        }
        if (countsEveryStep(after)) {
            return delta(before.generationTokens(), after.generationTokens()) > own.output();
        }
        return tokens(before, after) > own.total();
    }

    /** The progress from {@code before} to {@code after} in the engine's own terms, for an operator to read. */
    static String progress(EngineMetricsSample before, EngineMetricsSample after) {
        if (before.decodeSteps() != null && after.decodeSteps() != null) {
            return "%.0f tokens processed, %.0f decode steps"
                    .formatted(tokens(before, after), delta(before.decodeSteps(), after.decodeSteps()));
        }
        if (countsEveryStep(after)) {
            return "%.0f tokens generated for %.0f requests running before the probe"
                    .formatted(delta(before.generationTokens(), after.generationTokens()), running(before));
        }
        return "%.0f tokens processed".formatted(tokens(before, after));
    }

    /** Whether a sample shows other requests running or waiting (the probe's own not yet counted). */
    static boolean working(@Nullable EngineMetricsSample sample) {
        return sample != null && (positive(sample.requestsRunning()) || positive(sample.requestsWaiting()));
    }

    /** vLLM's series: its generation tokens are counted at every engine step, not when a request ends. */
    private static boolean countsEveryStep(EngineMetricsSample sample) {
        return sample.families().contains("vllm:") && sample.generationTokens() != null;
    }

    private static double count(@Nullable Double value) {
        return value == null ? 0 : Math.max(0, value);
    }

    private static double running(EngineMetricsSample sample) {
        return count(sample.requestsRunning());
    }

    private static double tokens(EngineMetricsSample before, EngineMetricsSample after) {
        return delta(before.generationTokens(), after.generationTokens())
                + delta(before.promptTokens(), after.promptTokens());
    }

    private static boolean positive(@Nullable Double value) {
        return value != null && value > 0;
    }

    private static double delta(@Nullable Double before, @Nullable Double after) {
        return before == null || after == null ? 0 : Math.max(0, after - before);
    }
}
