package dev.readygate.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The deterministic "model": the next token is a hash of the checkpoint's identity and everything before it, so
 * the same prompt and settings give the same token ids, text and logprobs every time, and two checkpoints answer
 * the same canary differently. With a temperature above zero the choice is drawn from a generator seeded by the
 * request's {@code seed} (random without one).
 */
final class SimulatedModel {

    private final SimulatedTokenizer tokenizer = SimulatedTokenizer.instance();
    private final int eosEvery;
    private final double batchVariance;

    SimulatedModel(int eosEvery) {
        this(eosEvery, 0);
    }

    /**
     * @param batchVariance how far a token's logprob moves when other sequences run beside it ({@code
     *     model.batch-variance}); tokens after the first may then become the runner-up
     */
    SimulatedModel(int eosEvery, double batchVariance) {
        this.eosEvery = eosEvery;
        this.batchVariance = batchVariance;
    }

    /** One generated token with its logprob and the logprobs of the runners-up. */
    record Token(int id, String text, double logprob, List<Alternative> alternatives) {}

    /** A token the model did not choose, for {@code top_logprobs}. */
    record Alternative(int id, String text, double logprob) {}

    /** What to generate. {@code seed} is null when the request gave none. */
    record Sampling(int maxTokens, int minTokens, boolean ignoreEos, double temperature, Long seed, int topLogprobs) {}

    /**
     * A running generation, token by token, so streams and metrics can follow it. Not thread-safe: one request
     * drives it.
     */
    final class Generation {
        private final long checkpointHash;
        private final Sampling sampling;
        private final Random random;
        private long context;
        private int generated;
        private boolean finished;
        private String finishReason;

        private Generation(String checkpoint, List<Integer> prompt, Sampling sampling) {
            this.checkpointHash = mix(checkpoint.hashCode() * 0x9E3779B97F4A7C15L);
            this.sampling = sampling;
            long state = checkpointHash;
            for (int id : prompt) {
                state = mix(state ^ id);
            }
            this.context = state;
            if (sampling.temperature() > 0) {
                this.random = sampling.seed() != null ? new Random(mix(sampling.seed() ^ context)) : new Random();
            } else {
                this.random = null;
            }
        }

        boolean finished() {
            return finished;
        }

        /** {@code length} or {@code stop}; null while running. */
        String finishReason() {
            return finishReason;
        }

        int generated() {
            return generated;
        }

        /** The next token, with no other sequence in the batch. */
        Token next() {
            return next(0);
        }

        /**
         * The next token while {@code others} other sequences run in the batch: with a batch variance, its logprob
         * moves, and a token after the first may be the runner-up (kernels that are not batch-invariant).
         */
        Token next(int others) {
            if (finished) {
                throw new IllegalStateException("generation already finished");
            }
            long h = mix(context ^ (generated + 1L) * 0xC2B2AE3D27D4EB4FL);
            long draw = random != null ? random.nextLong() : h;
            boolean batched = others > 0 && batchVariance > 0;
            long batch = mix(h ^ (others * 0x9E3779B97F4A7C15L));
            if (batched && generated > 0 && (batch & 1) == 1) {
                draw += 7919L << 1;
            }
            boolean eosAllowed = !sampling.ignoreEos() && generated >= sampling.minTokens();
            boolean eos = eosAllowed && Math.floorMod(mix(draw ^ 0x5bd1e995L), eosEvery) == 0;
            int id = eos ? SimulatedTokenizer.EOS : tokenizer.outputToken(draw >>> 1);
            double logprob = logprob(h);
            if (batched) {
                // Half to all of the variance, either way.
                double shift = batchVariance * (0.5 + Math.floorMod(batch >>> 8, 1000) / 2000.0);
                logprob = Math.min(-0.001, logprob + ((batch & 2) == 0 ? shift : -shift));
            }
            List<Alternative> alternatives = new ArrayList<>();
            for (int i = 1; i <= sampling.topLogprobs(); i++) {
                int alternative = tokenizer.outputToken((draw >>> 1) + i * 7919L);
                alternatives.add(new Alternative(alternative, tokenizer.tokenText(alternative), logprob - i * 0.75));
            }
            context = mix(context ^ id);
            generated++;
            if (eos) {
                finished = true;
                finishReason = "stop";
            } else if (generated >= sampling.maxTokens()) {
                finished = true;
                finishReason = "length";
            }
            // The EOS token's text is not part of the answer, as in vLLM.
            return new Token(id, eos ? "" : tokenizer.tokenText(id), logprob, alternatives);
        }

        private double logprob(long h) {
            // Between -2.5 and -0.01, fixed by the checkpoint and the context, like a real model's logprob.
            double base = -0.01 - Math.floorMod(h >>> 7, 24_900L) / 10_000.0;
            return random != null ? base - 0.05 : base;
        }
    }

    Generation start(String checkpoint, List<Integer> prompt, Sampling sampling) {
        return new Generation(checkpoint, prompt, sampling);
    }

    SimulatedTokenizer tokenizer() {
        return tokenizer;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
