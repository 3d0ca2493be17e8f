package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SimulatedTokenizerTests {

    private final SimulatedTokenizer tokenizer = SimulatedTokenizer.instance();

    @Test
    void encodeWhenWordsAreInTheVocabularyGivesOneTokenPerWord() {
        assertThat(tokenizer.encode("The capital of France is", false)).hasSize(5);
        assertThat(tokenizer.encode(" the the the", false))
                .hasSize(3)
                .containsOnly(tokenizer.encode(" the", false).getFirst());
    }

    @Test
    void encodeWhenTextIsUnknownFallsBackToBytesAndDecodesBack() {
        String text = "Zürich 🚀 naïve résumé\ttabs\n\nnewlines";
        List<Integer> ids = tokenizer.encode(text, false);
        assertThat(ids.size()).isGreaterThan(10);
        assertThat(tokenizer.decode(ids, false)).isEqualTo(text);
    }

    @Test
    void encodeIsDeterministic() {
        assertThat(tokenizer.encode("Once upon a time, in a quiet house.", false))
                .isEqualTo(tokenizer.encode("Once upon a time, in a quiet house.", false));
    }

    @Test
    void specialTokensAreRecognisedOnlyWhenAsked() {
        assertThat(tokenizer.encode("<|im_start|>user\nhi<|im_end|>", true))
                .startsWith(SimulatedTokenizer.IM_START)
                .contains(SimulatedTokenizer.IM_END);
        assertThat(tokenizer.encode("<|im_start|>", false)).doesNotContain(SimulatedTokenizer.IM_START);
        assertThat(tokenizer.decode(List.of(SimulatedTokenizer.IM_START), false))
                .isEmpty();
        assertThat(tokenizer.decode(List.of(SimulatedTokenizer.IM_START), true)).isEqualTo("<|im_start|>");
    }

    @Test
    void outputTokensAreWholeWordsThatTokenizeBackToThemselves() {
        for (long i = 0; i < 500; i += 37) {
            int id = tokenizer.outputToken(i * 7919);
            assertThat(tokenizer.encode(tokenizer.tokenText(id), false)).containsExactly(id);
        }
    }
}
