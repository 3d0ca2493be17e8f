package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineMetricsSample;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** What the engine's metrics say about its other work while a probe waited: busy, stalled or idle. */
class EngineLoadTests {

    static EngineMetricsSample vllm(double running, double waiting, double generated, double prompt) {
        return new EngineMetricsSample(1.0, running, waiting, generated, prompt, 0.0, Map.of());
    }

    /** llama-server's series: its token counters rise only when a request ends, its decode steps all along. */
    static EngineMetricsSample llama(double processing, double deferred, double predicted, double decodes) {
        return new EngineMetricsSample(
                null, processing, deferred, predicted, 2.0, null, Map.of(), Set.of("llamacpp:"), decodes);
    }

    static @Nullable EngineMetricsSample none() {
        return null;
    }

    @Test
    void nothingRunningOrWaitingIsIdleWhateverTheCounters() {
        assertThat(EngineLoad.between(vllm(0, 0, 0, 0), vllm(0, 0, 500, 500), 10))
                .isEqualTo(EngineLoad.IDLE);
    }

    @Test
    void otherWorkWithTokensBeyondTheProbesOwnIsBusy() {
        assertThat(EngineLoad.between(vllm(4, 2, 100, 100), vllm(4, 2, 180, 100), 10))
                .isEqualTo(EngineLoad.BUSY);
        // Prompt tokens count too: a long prefill is progress.
        assertThat(EngineLoad.between(vllm(1, 0, 0, 0), vllm(1, 0, 0, 4000), 10))
                .isEqualTo(EngineLoad.BUSY);
    }

    @Test
    void requestsRunningOrWaitingWithoutProgressIsAStall() {
        assertThat(EngineLoad.between(vllm(4, 0, 100, 100), vllm(4, 0, 100, 100), 10))
                .isEqualTo(EngineLoad.STALLED);
        // The probe's own tokens are no progress of other work.
        assertThat(EngineLoad.between(vllm(0, 3, 100, 100), vllm(0, 3, 105, 103), 10))
                .isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void withoutAnEarlierSampleWorkIsNeverTakenForProgress() {
        assertThat(EngineLoad.between(none(), vllm(4, 0, 100, 100), 10)).isEqualTo(EngineLoad.STALLED);
    }

    @Test
    void countersThatWentDownAreNoProgress() {
        // A restarted engine's counters start again from zero.
        assertThat(EngineLoad.between(vllm(2, 0, 1000, 1000), vllm(2, 0, 5, 5), 10))
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
        assertThat(EngineLoad.between(llama(1, 1, 0, 123), llama(1, 1, 0, 336), 10))
                .isEqualTo(EngineLoad.BUSY);
        // No decode step meanwhile: a stall.
        assertThat(EngineLoad.between(llama(1, 1, 0, 336), llama(1, 1, 0, 336), 10))
                .isEqualTo(EngineLoad.STALLED);
        // The probe's own steps (its prompt, its two tokens) are no progress of other work.
        assertThat(EngineLoad.between(llama(1, 0, 0, 336), llama(1, 0, 0, 339), 10))
                .isEqualTo(EngineLoad.STALLED);
    }
}
