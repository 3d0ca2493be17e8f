package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.SlotsSample;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** What the engine's metrics say about its other work while a probe waited: busy, stalled or idle. */
class EngineLoadTests {

    static EngineMetricsSample vllm(double running, double waiting, double generated, double prompt) {
        return vllm(running, waiting, generated, prompt, 0.0);
    }

    static EngineMetricsSample vllm(
            double running, double waiting, double generated, double prompt, @Nullable Double preemptions) {
        return new EngineMetricsSample(
                1.0,
                running,
                waiting,
                generated,
                prompt,
                0.0,
                Map.of(),
                Set.of("vllm:", "process_"),
                null,
                preemptions);
    }

    /** llama-server's series: its token counters rise only when a request ends, its decode steps all along. */
    static EngineMetricsSample llama(double processing, double deferred, double predicted, double decodes) {
        return new EngineMetricsSample(
                null, processing, deferred, predicted, 2.0, null, Map.of(), Set.of("llamacpp:"), decodes, null);
    }

    /** SGLang's series: its token counters rise when a request ends. */
    static EngineMetricsSample sglang(double running, double queued, double generated, double prompt) {
        return new EngineMetricsSample(
                null, running, queued, generated, prompt, null, Map.of(), Set.of("sglang:"), null, null);
    }

    static @Nullable EngineMetricsSample none() {
        return null;
    }

    /** A light check's own tokens: an eight-token prompt, two tokens out. */
    static final EngineLoad.OwnTokens OWN = new EngineLoad.OwnTokens(8, 2);

    @Test
    void nothingRunningOrWaitingAndNoWorkBeyondTheProbesOwnIsIdle() {
        // The probe's own two tokens (and its prompt, counted with its first token) are no one else's work.
        assertThat(EngineLoad.between(vllm(0, 0, 100, 100), vllm(0, 0, 102, 108), OWN))
                .isEqualTo(EngineLoad.IDLE);
        assertThat(EngineLoad.between(sglang(0, 0, 100, 100), sglang(0, 0, 102, 108), OWN))
                .isEqualTo(EngineLoad.IDLE);
        assertThat(EngineLoad.between(llama(0, 0, 0, 100), llama(0, 0, 0, 103), OWN))
                .isEqualTo(EngineLoad.IDLE);
    }

    @Test
    void requestsThatCameAndWentBetweenTheScrapesAreOtherWork() {
        // Found against the simulator under a trickle of 2-token requests, one at a time: neither scrape saw one
        // running, one ran beside the canary (its logprob moved with the batch, as vLLM's does), and the canary was
        // judged alone, with the strict tolerance: a healthy engine latched out as canary_mismatch. vLLM counts its
        // tokens at every step: 500 generated beyond the probe's 2.
        assertThat(EngineLoad.between(vllm(0, 0, 0, 0), vllm(0, 0, 500, 500), OWN))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.between(vllm(0, 0, 100, 100), vllm(0, 0, 103, 108), OWN))
                .isEqualTo(EngineLoad.BUSY);
        // Completions beyond the probe's own one.
        EngineMetricsSample before =
                new EngineMetricsSample(1.0, 0.0, 0.0, null, null, 10.0, Map.of(), Set.of("tgi_"), null, null);
        EngineMetricsSample after =
                new EngineMetricsSample(1.0, 0.0, 0.0, null, null, 12.0, Map.of(), Set.of("tgi_"), null, null);
        assertThat(EngineLoad.between(before, after, OWN)).isEqualTo(EngineLoad.BUSY);
        // SGLang counts tokens when a request ends; llama.cpp's decode steps beyond the probe's own.
        assertThat(EngineLoad.between(sglang(0, 0, 100, 100), sglang(0, 0, 104, 112), OWN))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.between(llama(0, 0, 0, 100), llama(0, 0, 0, 140), OWN))
                .isEqualTo(EngineLoad.BUSY);
    }

    @Test
    void otherWorkWithTokensBeyondTheProbesOwnIsBusy() {
        assertThat(EngineLoad.between(vllm(4, 2, 100, 100), vllm(4, 2, 180, 100), OWN))
                .isEqualTo(EngineLoad.BUSY);
        // A request that finished its prefill: vLLM counts its prompt with its first token.
        assertThat(EngineLoad.between(vllm(1, 0, 0, 0), vllm(1, 0, 3, 4000), OWN))
                .isEqualTo(EngineLoad.BUSY);
        // SGLang counts a request's tokens when it ends: any of them beyond the probe's own is progress.
        assertThat(EngineLoad.between(sglang(4, 0, 100, 100), sglang(4, 0, 100, 4100), OWN))
                .isEqualTo(EngineLoad.BUSY);
    }

    @Test
    void onVllmTheRunningRequestsMustAdvanceNewRequestsPrefilledAreNoProgressOfThem() {
        // 24 streams stuck after their first tokens while new requests keep coming: each new one is prefilled and
        // gets its first two tokens, so both counters move, but the running ones never advance.
        assertThat(EngineLoad.between(vllm(24, 0, 1000, 40_000), vllm(25, 0, 1008, 41_200), OWN))
                .isEqualTo(EngineLoad.STALLED);
        // The same 24 streams healthy, at 50 ms a token: 20 tokens each in a second.
        assertThat(EngineLoad.between(vllm(24, 0, 1000, 40_000), vllm(24, 0, 1480, 40_000), OWN))
                .isEqualTo(EngineLoad.BUSY);
        // A token for every two of them is enough (a slow engine, or half of them in a long chunked prefill).
        assertThat(EngineLoad.between(vllm(24, 0, 1000, 40_000), vllm(24, 0, 1014, 40_000), OWN))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.between(vllm(1, 0, 1000, 40_000), vllm(1, 0, 1003, 40_000), OWN))
                .isEqualTo(EngineLoad.BUSY);
        // The probe's own two tokens are not those of the others.
        assertThat(EngineLoad.between(vllm(24, 0, 1000, 40_000), vllm(24, 0, 1013, 40_000), OWN))
                .isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void onVllmAProbeWhoseOwnStreamStoppedWhileTheOthersAdvancedWasLeftOutUnlessVllmPreempted() {
        // Clients that give up after half a second and retry: so many new requests that their first two tokens
        // outnumber the running ones, though each of those is stuck. The probe's own stream began and stopped too.
        EngineMetricsSample before = vllm(24, 0, 1000, 40_000, 0.0);
        EngineMetricsSample after = vllm(24, 0, 1072, 43_600, 0.0);
        assertThat(EngineLoad.afterTimeout(before, after, OWN, true)).isEqualTo(EngineLoad.LEFT_OUT);
        // The same counters, the probe still waiting for its first token: busy (it may be queued behind them).
        assertThat(EngineLoad.afterTimeout(before, after, OWN, false)).isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.between(before, after, OWN)).isEqualTo(EngineLoad.BUSY);
        // vLLM preempted requests meanwhile (the probe's among them, perhaps): a preempted stream waits, busy.
        assertThat(EngineLoad.afterTimeout(before, vllm(24, 3, 1072, 43_600, 3.0), OWN, true))
                .isEqualTo(EngineLoad.BUSY);
        // No preemption counter to tell: busy, not broken.
        assertThat(EngineLoad.afterTimeout(vllm(24, 0, 1000, 40_000, null), vllm(24, 0, 1072, 43_600, null), OWN, true))
                .isEqualTo(EngineLoad.BUSY);
        // A stopped stream on an engine whose running requests do not advance either: stalled, as before.
        assertThat(EngineLoad.afterTimeout(before, vllm(24, 0, 1008, 41_200, 0.0), OWN, true))
                .isEqualTo(EngineLoad.STALLED);
        // llama-server's steps and SGLang's tokens are read as before: a stopped stream there is not judged alone.
        assertThat(EngineLoad.afterTimeout(llama(1, 1, 0, 123), llama(1, 1, 0, 336), OWN, true))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.afterTimeout(sglang(4, 0, 100, 100), sglang(4, 0, 100, 4100), OWN, true))
                .isEqualTo(EngineLoad.BUSY);
    }

    @Test
    void requestsRunningOrWaitingWithoutProgressIsAStall() {
        assertThat(EngineLoad.between(vllm(4, 0, 100, 100), vllm(4, 0, 100, 100), OWN))
                .isEqualTo(EngineLoad.STALLED);
        // The probe's own tokens are no progress of other work.
        assertThat(EngineLoad.between(vllm(0, 3, 100, 100), vllm(0, 3, 102, 108), OWN))
                .isEqualTo(EngineLoad.STALLED);
        assertThat(EngineLoad.between(sglang(0, 3, 100, 100), sglang(0, 3, 102, 108), OWN))
                .isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void aProbeThatTimedOutOnAnIdleEngineIsItsOwnOnlyRequestAndTheEngineIdle() {
        // A slow engine, idle before the probe: the one request running when it timed out is the probe itself, whose
        // own prompt (counted with its first token) and tokens are no one else's progress.
        assertThat(EngineLoad.afterTimeout(vllm(0, 0, 100, 100), vllm(1, 0, 101, 300), OWN, false))
                .isEqualTo(EngineLoad.IDLE);
        assertThat(EngineLoad.afterTimeout(vllm(0, 0, 100, 100), vllm(0, 1, 100, 100), OWN, false))
                .isEqualTo(EngineLoad.IDLE);
        // One more request than the probe: other work.
        assertThat(EngineLoad.afterTimeout(vllm(0, 0, 100, 100), vllm(2, 0, 101, 300), OWN, false))
                .isEqualTo(EngineLoad.STALLED);
        // Other work before the probe, none after: judged on its progress.
        assertThat(EngineLoad.afterTimeout(vllm(2, 0, 100, 100), vllm(0, 0, 300, 100), OWN, false))
                .isEqualTo(EngineLoad.BUSY);
    }

    @Test
    void withoutAnEarlierSampleWorkIsNeverTakenForProgress() {
        assertThat(EngineLoad.between(none(), vllm(4, 0, 100, 100), OWN)).isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void countersThatWentDownAreNoProgress() {
        // A restarted engine's counters start again from zero.
        assertThat(EngineLoad.between(vllm(2, 0, 1000, 1000), vllm(2, 0, 5, 5), OWN))
                .isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void workIsRequestsRunningOrWaiting() {
        assertThat(EngineLoad.working(vllm(0, 1, 0, 0))).isTrue();
        assertThat(EngineLoad.working(vllm(1, 0, 0, 0))).isTrue();
        assertThat(EngineLoad.working(vllm(0, 0, 0, 0))).isFalse();
        assertThat(EngineLoad.working(none())).isFalse();
    }

    @Test
    void llamaServersDecodeStepsAreProgressWhileItsTokenCountersStandStill() {
        // One slot busy on a long request, the probe deferred behind it: tokens_predicted_total stays 0 until the
        // request ends (measured on llama-server: 0 throughout, n_decode_total 123, then 336, two seconds later).
        assertThat(EngineLoad.between(llama(1, 1, 0, 123), llama(1, 1, 0, 336), OWN))
                .isEqualTo(EngineLoad.BUSY);
        // No decode step meanwhile: a stall.
        assertThat(EngineLoad.between(llama(1, 1, 0, 336), llama(1, 1, 0, 336), OWN))
                .isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void onLlamaServerEveryDecodeStepAdvancesTheRequestsThatWereProcessingWhateverTheProbesOwnTokens() {
        // Issue 24: four slots, two client streams, a loaded machine: 3 decode steps while the light check (an 8-token
        // prompt, two tokens out) waited were judged "no progress". Each step batched both streams: they advanced.
        assertThat(EngineLoad.afterTimeout(llama(2, 0, 0, 336), llama(3, 0, 0, 339), OWN, false))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.afterTimeout(llama(2, 0, 0, 336), llama(3, 0, 0, 337), OWN, true))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.between(llama(1, 0, 0, 336), llama(1, 0, 0, 339), OWN))
                .isEqualTo(EngineLoad.BUSY);
        // The requests that were processing ended meanwhile (their tokens counted at their end): they advanced too.
        assertThat(EngineLoad.afterTimeout(llama(2, 0, 0, 336), llama(1, 0, 40, 338), OWN, false))
                .isEqualTo(EngineLoad.BUSY);
        // No decode step at all while requests were processing: a stall, however the token counters moved.
        assertThat(EngineLoad.afterTimeout(llama(2, 0, 0, 336), llama(3, 0, 0, 336), OWN, false))
                .isEqualTo(EngineLoad.STALLED);
        // Nothing processing before the probe, a client request came meanwhile: steps no more than the probe's own
        // may all be its own (it timed out on its own, not a stall); more of them advanced the other request.
        assertThat(EngineLoad.afterTimeout(llama(0, 0, 0, 336), llama(2, 0, 0, 339), OWN, false))
                .isEqualTo(EngineLoad.IDLE);
        assertThat(EngineLoad.afterTimeout(llama(0, 0, 0, 336), llama(2, 0, 0, 400), OWN, false))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.afterTimeout(llama(0, 0, 0, 336), llama(2, 0, 0, 336), OWN, false))
                .isEqualTo(EngineLoad.STALLED);
    }

    static SlotsSample slots(SlotsSample.Slot... slots) {
        return new SlotsSample(java.util.List.of(slots));
    }

    static SlotsSample.Slot held(int id, long task, long decoded) {
        return new SlotsSample.Slot(id, task, true, decoded);
    }

    static SlotsSample.Slot free(int id) {
        return new SlotsSample.Slot(id, -1, false, 0);
    }

    @Test
    void aProbeDeferredBehindAClientThatTookTheOnlySlotAfterTheScrapeWaitedWhileTheEngineProgressed() {
        // Issue 24's race: nothing processing at the scrape before the probe, then a client's request took the only
        // slot and the probe was deferred behind it (requests_deferred 1): however few the steps, they advanced the
        // client's request, not the probe's (before: "no more steps than its own", a timeout of its own).
        assertThat(EngineLoad.afterTimeout(llama(0, 0, 0, 336), llama(1, 1, 0, 339), OWN, false))
                .isEqualTo(EngineLoad.BUSY);
        // No step at all while it waited: the slot's request does not advance, a stall.
        assertThat(EngineLoad.afterTimeout(llama(0, 0, 0, 336), llama(1, 1, 0, 336), OWN, false))
                .isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void withoutMetricsATimeoutIsAWaitForASlotOnlyWhileEverySlotIsTakenByARequestThatAdvances() {
        // /slots read free before the probe, taken when it timed out: a request took the slot meanwhile, work started.
        assertThat(EngineLoad.slotsAfterTimeout(slots(free(0)), slots(held(0, 7, 0))))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.slotsAfterTimeout(null, slots(held(0, 7, 40)))).isEqualTo(EngineLoad.BUSY);
        // The same request, further on: it advances.
        assertThat(EngineLoad.slotsAfterTimeout(slots(held(0, 7, 40)), slots(held(0, 7, 90))))
                .isEqualTo(EngineLoad.BUSY);
        // The same request, not one token further: a stall.
        assertThat(EngineLoad.slotsAfterTimeout(slots(held(0, 7, 40)), slots(held(0, 7, 40))))
                .isEqualTo(EngineLoad.STALLED);
        // A slot free when the probe timed out: nothing kept it waiting, its timeout is its own.
        assertThat(EngineLoad.slotsAfterTimeout(slots(held(0, 7, 40)), slots(held(0, 7, 90), free(1))))
                .isEqualTo(EngineLoad.IDLE);
    }

    @Test
    void withoutMetricsLlamaServersSlotsTellTheRequestsThatAdvanceFromThoseThatStall() {
        // Issue 24: no /metrics, /slots answers: each request's n_decoded is its progress.
        assertThat(EngineLoad.betweenSlots(slots(held(0, 7, 100)), slots(held(0, 7, 340))))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.decodedBetween(slots(held(0, 7, 100)), slots(held(0, 7, 340))))
                .isEqualTo(240);
        // A request that ended (its slot free, or serving another task) advanced to its end.
        assertThat(EngineLoad.betweenSlots(slots(held(0, 7, 100)), slots(free(0))))
                .isEqualTo(EngineLoad.BUSY);
        assertThat(EngineLoad.betweenSlots(slots(held(0, 7, 100)), slots(held(0, 9, 3))))
                .isEqualTo(EngineLoad.BUSY);
        // Every request generating before and none moved: a stall.
        assertThat(EngineLoad.betweenSlots(
                        slots(held(0, 7, 100), held(1, 8, 5)), slots(held(0, 7, 100), held(1, 8, 5))))
                .isEqualTo(EngineLoad.STALLED);
        // One of them still at 0 tokens may be evaluating a long prompt, which /slots does not measure: busy.
        assertThat(EngineLoad.betweenSlots(
                        slots(held(0, 7, 100), held(1, 8, 0)), slots(held(0, 7, 100), held(1, 8, 0))))
                .isEqualTo(EngineLoad.BUSY);
        // Nothing held before: idle.
        assertThat(EngineLoad.betweenSlots(slots(free(0)), slots(held(0, 9, 0))))
                .isEqualTo(EngineLoad.IDLE);
    }
}
