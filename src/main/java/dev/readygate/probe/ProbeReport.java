package dev.readygate.probe;

import dev.readygate.engine.StreamedCompletion;
import dev.readygate.readiness.Reason;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The result of one heavy probe, for readiness, metrics and {@code /status}: whether it passed, why not, and what it
 * measured. Never holds prompt or completion text except the canary's few tokens.
 *
 * @param kind which probe
 * @param at when it finished
 * @param outcome passed, failed or busy
 * @param reason why it failed (null when it passed)
 * @param detail a short, operator-safe explanation
 * @param latched whether the failure holds until the engine restarts
 * @param measurement what the probe measured, when it got an answer
 * @param canary the canary's expected and actual answers (canary only)
 */
public record ProbeReport(
        ProbeKind kind,
        Instant at,
        Outcome outcome,
        @Nullable Reason reason,
        String detail,
        boolean latched,
        @Nullable Measurement measurement,
        @Nullable CanaryComparison canary) {

    /** The {@code finish_reason} of a request the engine ended itself (vLLM's {@code FinishReason.ABORT}). */
    static final String ABORTED = "abort";

    /** What a probe the engine aborted says: whose, and why it is no verdict. */
    static String abortedDetail(String probe) {
        return "the engine aborted the " + probe + " (finish_reason abort: vLLM's sleep and pause abort the requests in"
                + " flight by default); no verdict on what it generates";
    }

    /** The reasons a probe fails with (the metrics count each from the start). */
    public static final Set<Reason> FAILURE_REASONS = Set.copyOf(EnumSet.of(
            Reason.ENGINE_DOWN,
            Reason.ENGINE_LOADING,
            Reason.CONNECTION_RESET,
            Reason.TIMED_OUT,
            Reason.STALLED,
            Reason.HTTP_STATUS,
            Reason.MALFORMED_RESPONSE,
            Reason.TRUNCATED_STREAM,
            Reason.OVERLONG_STREAM,
            Reason.ERROR_EVENT,
            Reason.RESPONSE_TOO_LARGE,
            Reason.PROMPT_TOKENS_MISMATCH,
            Reason.PROMPT_TOKENS_UNPROVEN,
            Reason.COMPLETION_TOKENS_MISMATCH,
            Reason.UNEXPECTED_FINISH_REASON,
            Reason.ENGINE_ABORTED,
            Reason.SLOW,
            Reason.CANARY_MISMATCH,
            Reason.PROBE_EXCEEDS_CONTEXT,
            Reason.GENERATION_FAILED,
            Reason.GENERATION_TIMED_OUT,
            Reason.GENERATION_STALLED,
            Reason.IO_ERROR));

    /** How a probe ended. */
    public enum Outcome {
        PASSED,
        FAILED,
        /** Timed out while the engine was visibly busy and making progress: neither pass nor failure. */
        BUSY
    }

    /**
     * Timing and token counts of one probe.
     *
     * @param plannedPromptTokens the prompt tokens readygate built
     * @param promptTokens the engine's {@code usage.prompt_tokens}
     * @param completionTokens the engine's {@code usage.completion_tokens}
     * @param timeToFirstToken from request to first token
     * @param maxInterTokenLatency the largest gap between tokens
     * @param meanInterTokenLatency the mean gap between tokens
     * @param total from request to {@code [DONE]}
     */
    public record Measurement(
            int plannedPromptTokens,
            @Nullable Integer promptTokens,
            @Nullable Integer completionTokens,
            Duration timeToFirstToken,
            Duration maxInterTokenLatency,
            Duration meanInterTokenLatency,
            Duration total) {

        /** What a streamed answer measured, for a prompt of {@code plannedPromptTokens}. */
        public static Measurement of(int plannedPromptTokens, StreamedCompletion answer) {
            return new Measurement(
                    plannedPromptTokens,
                    answer.promptTokens(),
                    answer.completionTokens(),
                    answer.timeToFirstToken(),
                    answer.maxInterTokenLatency(),
                    answer.meanInterTokenLatency(),
                    answer.total());
        }
    }

    public static ProbeReport passed(
            ProbeKind kind,
            Instant at,
            String detail,
            @Nullable Measurement measurement,
            @Nullable CanaryComparison canary) {
        return new ProbeReport(kind, at, Outcome.PASSED, null, detail, false, measurement, canary);
    }

    /** Neither a pass nor a failure: the probe got no answer in time while the engine made progress on other work. */
    public static ProbeReport busy(ProbeKind kind, Instant at, String detail) {
        return new ProbeReport(kind, at, Outcome.BUSY, null, detail, false, null, null);
    }

    public static ProbeReport failed(ProbeKind kind, Instant at, Reason reason, String detail) {
        return new ProbeReport(kind, at, Outcome.FAILED, reason, detail, false, null, null);
    }

    public boolean passed() {
        return outcome == Outcome.PASSED;
    }

    public ProbeReport withMeasurement(@Nullable Measurement value) {
        return new ProbeReport(kind, at, outcome, reason, detail, latched, value, canary);
    }

    public ProbeReport latch() {
        return new ProbeReport(kind, at, outcome, reason, detail, true, measurement, canary);
    }
}
