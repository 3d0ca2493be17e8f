package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimulatedModelTests {

    private final SimulatedModel model = new SimulatedModel(48);
    private final List<Integer> canary = SimulatedTokenizer.instance().encode(SnapshotArtifacts.ORACLE_PROMPT, false);

    private List<SimulatedModel.Token> generate(String checkpoint, SimulatedModel.Sampling sampling) {
        SimulatedModel.Generation generation = model.start(checkpoint, canary, sampling);
        List<SimulatedModel.Token> tokens = new ArrayList<>();
        while (!generation.finished()) {
            tokens.add(generation.next());
        }
        return tokens;
    }

    private static SimulatedModel.Sampling greedy(int tokens) {
        return new SimulatedModel.Sampling(tokens, tokens, true, 0, 0L, 0);
    }

    @Test
    void sameCheckpointAndPromptGiveTheSameTokensAndLogprobs() {
        assertThat(generate("base", greedy(20))).isEqualTo(generate("base", greedy(20)));
    }

    @Test
    void checkpointsAnswerTheCanaryDifferently() {
        List<String> checkpoints =
                List.of("qwen3-0.6b-base", "qwen3-0.6b-finetune-step2000", "step-1", "step-2", "llama", "mistral");
        assertThat(checkpoints.stream()
                        .map(checkpoint ->
                                generate(checkpoint, greedy(1)).getFirst().id()))
                .doesNotHaveDuplicates();
    }

    @Test
    void logprobsAreNegativeAndFinite() {
        assertThat(generate("base", greedy(50)))
                .allSatisfy(token -> assertThat(token.logprob()).isNegative().isGreaterThan(-3));
    }

    @Test
    void minTokensAndIgnoreEosControlEndOfSequence() {
        SimulatedModel eager = new SimulatedModel(2);
        SimulatedModel.Generation free =
                eager.start("base", canary, new SimulatedModel.Sampling(200, 0, false, 0, null, 0));
        while (!free.finished()) {
            free.next();
        }
        assertThat(free.finishReason()).isEqualTo("stop");
        assertThat(free.generated()).isLessThan(200);
        SimulatedModel.Generation held =
                eager.start("base", canary, new SimulatedModel.Sampling(30, 30, false, 0, null, 0));
        while (!held.finished()) {
            held.next();
        }
        assertThat(held.finishReason()).isEqualTo("length");
        assertThat(held.generated()).isEqualTo(30);
    }

    @Test
    void topLogprobsListsRunnersUpBelowTheChosenToken() {
        SimulatedModel.Token token = generate("base", new SimulatedModel.Sampling(1, 1, true, 0, 0L, 3))
                .getFirst();
        assertThat(token.alternatives())
                .hasSize(3)
                .allSatisfy(alternative -> assertThat(alternative.logprob()).isLessThan(token.logprob()));
    }

    @Test
    void withOtherSequencesInTheBatchLogprobsMoveAndLaterTokensMayChangeButTheFirstStays() {
        SimulatedModel variant = new SimulatedModel(48, 0.04);
        List<Integer> canaryPrompt = canary;
        SimulatedModel.Token alone =
                variant.start("base", canaryPrompt, greedy(1)).next(0);
        // Alone in the batch: exactly the batch-invariant answer.
        assertThat(alone).isEqualTo(generate("base", greedy(1)).getFirst());
        boolean laterChanged = false;
        for (int others = 1; others <= 24; others++) {
            SimulatedModel.Generation batched = variant.start("base", canaryPrompt, greedy(4));
            SimulatedModel.Generation invariant = model.start("base", canaryPrompt, greedy(4));
            SimulatedModel.Token first = batched.next(others);
            SimulatedModel.Token expected = invariant.next();
            assertThat(first.id()).isEqualTo(expected.id());
            assertThat(Math.abs(first.logprob() - expected.logprob())).isBetween(0.02, 0.04);
            for (int i = 1; i < 4; i++) {
                laterChanged |= batched.next(others).id() != invariant.next().id();
            }
        }
        assertThat(laterChanged).isTrue();
    }
}
