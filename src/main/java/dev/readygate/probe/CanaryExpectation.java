package dev.readygate.probe;

import java.util.Locale;

/**
 * An expected canary answer and its source, with the logprob tolerances to compare with.
 *
 * @param source where it came from
 * @param answer the expected answer
 * @param logprobTolerance how far the logprob may differ on an idle engine
 * @param logprobToleranceUnderLoad how far the first token's logprob may differ with other requests in the batch
 */
record CanaryExpectation(
        Source source, CanaryAnswer answer, double logprobTolerance, double logprobToleranceUnderLoad) {

    /** Where an expectation comes from, in order of precedence. */
    public enum Source {
        /** {@code readygate.probe.canary.expected-*}. */
        CONFIGURATION,
        /** The snapshot manifest's oracle ({@code oracle_token_ids}, {@code oracle_text}, ...). */
        SNAPSHOT_MANIFEST,
        /** A baseline learned on a trusted start and kept in the state directory. */
        LEARNED_BASELINE,
        /** Nothing yet: the answer is learned now, or the canary cannot judge. */
        NONE;

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Whether {@code actual} agrees with this expectation on every part both state: token ids and the logprob are
     * compared only when the server returned them (OpenAI-compatible servers may not), the text always.
     */
    public boolean matches(CanaryAnswer actual) {
        if (!answer.tokenIds().isEmpty()
                && !actual.tokenIds().isEmpty()
                && !answer.tokenIds().equals(actual.tokenIds())) {
            return false;
        }
        if (answer.text() != null && !answer.text().equals(actual.text())) {
            return false;
        }
        return logprobWithin(actual, logprobTolerance);
    }

    /**
     * Whether {@code actual}, answered with other requests in the batch, agrees with this expectation on what stays
     * stable under batching: vLLM's kernels are not batch-invariant by default, so later tokens may change and
     * logprobs move. Compared: the first token (its id when both state ids, else the text when the canary is one token
     * long) and the first token's logprob within {@code logprobToleranceUnderLoad}.
     *
     * @param oneToken whether the canary asks for one token (its text is then the first token's)
     */
    public boolean matchesUnderLoad(CanaryAnswer actual, boolean oneToken) {
        if (!answer.tokenIds().isEmpty() && !actual.tokenIds().isEmpty()) {
            if (!answer.tokenIds().getFirst().equals(actual.tokenIds().getFirst())) {
                return false;
            }
        } else if (oneToken && answer.text() != null && !answer.text().equals(actual.text())) {
            return false;
        }
        return logprobWithin(actual, logprobToleranceUnderLoad);
    }

    private boolean logprobWithin(CanaryAnswer actual, double tolerance) {
        Double expected = answer.logprob();
        Double got = actual.logprob();
        return expected == null || got == null || Math.abs(expected - got) <= tolerance;
    }
}
