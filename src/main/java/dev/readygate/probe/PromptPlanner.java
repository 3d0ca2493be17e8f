package dev.readygate.probe;

import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.TokenCount;
import java.util.List;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Builds a representative prompt of exactly the planned number of tokens. With {@code /tokenize}, fresh text is
 * tokenized and its first N token ids are sent as the prompt, so every probe has a new prefix. Without it, a text is
 * calibrated once from the engine's {@code usage.prompt_tokens} and then reused (degraded: not varied).
 */
final class PromptPlanner {

    private static final int MAX_ATTEMPTS = 4;

    private final EngineClient client;
    private final EngineFactsHolder facts;
    private final RandomGenerator random;

    /** A prompt ready to send: token ids or text, and the prompt tokens the engine must count. */
    record Planned(
            @Nullable List<Integer> tokenIds, @Nullable String text, int expectedTokens, boolean calibrating) {}

    PromptPlanner(EngineClient client, EngineFactsHolder facts, RandomGenerator random) {
        this.client = client;
        this.facts = facts;
        this.random = random;
    }

    /** Either a planned prompt or the failure that prevented planning (e.g. {@code /tokenize} timed out). */
    sealed interface Plan {
        record Ready(Planned prompt) implements Plan {}

        record Failed(EngineFailure failure) implements Plan {}
    }

    Mono<Plan> plan(String model, int tokens) {
        if (facts.current().capabilities().tokenize()) {
            return tokenized(model, tokens, tokens + tokens / 4 + 8, 1);
        }
        return Mono.just(new Plan.Ready(fromCalibration(tokens)));
    }

    private Mono<Plan> tokenized(String model, int tokens, int words, int attempt) {
        String text = PromptText.of(words, random);
        return client.tokenize(model, text).flatMap(call -> switch (call) {
            case EngineCall.Success<TokenCount> success -> {
                TokenCount count = success.value();
                if (count.tokens().size() >= tokens) {
                    yield Mono.just(
                            new Plan.Ready(new Planned(count.tokens().subList(0, tokens), null, tokens, false)));
                }
                if (count.tokens().isEmpty()) {
                    // A tokenizer that counts but does not return ids: calibrate text like a server without one.
                    lackTokenize();
                    yield Mono.just(new Plan.Ready(fromCalibration(tokens)));
                }
                if (attempt >= MAX_ATTEMPTS) {
                    yield Mono.just(new Plan.Failed(EngineFailure.of(
                            EngineFailure.Kind.MALFORMED_BODY,
                            "/tokenize returned " + count.count() + " tokens for " + words + " words; cannot build "
                                    + tokens + " tokens")));
                }
                int more = (int) Math.ceil(words * (tokens * 1.2 / Math.max(1, count.count())));
                yield tokenized(model, tokens, Math.max(words + 8, more), attempt + 1);
            }
            case EngineCall.Failure<TokenCount> failure -> {
                if (failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                    lackTokenize();
                    yield Mono.just(new Plan.Ready(fromCalibration(tokens)));
                }
                yield Mono.just(new Plan.Failed(failure.failure()));
            }
        });
    }

    private Planned fromCalibration(int tokens) {
        EngineFacts.PromptCalibration known = facts.current().calibration();
        if (known != null && known.plannedTokens() == tokens) {
            return new Planned(null, known.text(), known.tokens(), false);
        }
        // First attempt: about one word per token; the engine's usage tells how many tokens it really is.
        return new Planned(null, PromptText.of(tokens, random), tokens, true);
    }

    /** Records the engine's count for a calibration prompt; the next probes reuse the text with that count. */
    void calibrated(Planned planned, int plannedTokens, int engineTokens) {
        if (planned.calibrating() && planned.text() != null) {
            EngineFacts.PromptCalibration calibration =
                    new EngineFacts.PromptCalibration(plannedTokens, planned.text(), engineTokens);
            facts.learn(f -> f.withCalibration(calibration));
        }
    }

    private void lackTokenize() {
        facts.learn(f -> f.withCapabilities(f.capabilities().withoutTokenize()));
    }
}
