package dev.readygate.probe;

import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.engine.TokenCount;
import dev.readygate.probe.EngineCapabilities.Generation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Builds a representative prompt whose token count is known, never taken on trust. With a usable {@code /tokenize},
 * fresh text is tokenized and its first N token ids are sent as the prompt: the engine must count exactly N. Without
 * one, a fresh sentence is sent 1, 2 and 4 times (one-token completions) and the engine's {@code usage.prompt_tokens}
 * for each proves what one copy costs: when the counts add up (the 4-copy count is the 2-copy count plus twice the
 * difference of 2 and 1), a prompt of k copies must count exactly the first copy's count plus k - 1 more copies, and a
 * truncated one counts fewer. Counts that fall short of adding up show an engine that truncates already; counts that
 * exceed it leave exactness unproven, and the plan says so.
 */
final class PromptPlanner {

    private static final int MAX_ATTEMPTS = 4;

    /** Words of the calibration sentence. */
    static final int UNIT_WORDS = 12;

    /** The most tokens one calibration spends (7 copies of a sentence, generously, and 3 output tokens). */
    static final int CALIBRATION_COST = 7 * UNIT_WORDS * 3 + 3;

    private final EngineClient client;
    private final Completions completions;
    private final EngineFactsHolder facts;
    private final RandomGenerator random;
    private final Duration timeout;

    /**
     * A prompt ready to send: token ids or text, and the prompt tokens the engine must count.
     *
     * @param tokenIds the prompt as the engine's token ids, or null
     * @param text the prompt as text, or null
     * @param expectedTokens the prompt tokens the engine must count
     * @param exact whether {@code expectedTokens} is proven (token ids, or a calibration that adds up)
     * @param proof how the count is known, for details and {@code /status}
     */
    record Planned(
            @Nullable List<Integer> tokenIds, @Nullable String text, int expectedTokens, boolean exact, String proof) {}

    /**
     * The engine's counts of one sentence sent 1, 2 and 4 times.
     *
     * @param one the count of one copy
     * @param two of two copies
     * @param four of four copies
     */
    record Calibration(int one, int two, int four) {

        int perCopy() {
            return two - one;
        }

        int overhead() {
            return one - perCopy();
        }

        /** Whether the counts add up, so that k copies count exactly {@link #expected(int)}. */
        boolean additive() {
            return perCopy() > 0 && four - two == 2 * perCopy();
        }

        /**
         * Whether the engine counted a longer prompt as fewer tokens than its parts: only an engine that drops prompt
         * tokens (truncation to its context) does.
         */
        boolean shortfall() {
            return perCopy() <= 0 || four - two < 2 * perCopy();
        }

        int expected(int copies) {
            return overhead() + copies * perCopy();
        }

        /** The fewest copies whose count reaches {@code tokens} at least as closely as one fewer. */
        int copiesFor(int tokens) {
            return Math.max(1, (int) Math.round((tokens - overhead()) / (double) perCopy()));
        }
    }

    PromptPlanner(EngineClient client, EngineFactsHolder facts, RandomGenerator random, Duration timeout) {
        this.client = client;
        this.completions = new Completions(client, facts);
        this.facts = facts;
        this.random = random;
        this.timeout = timeout;
    }

    /**
     * A planned prompt; the failure that prevented planning (e.g. {@code /tokenize} timed out); or a calibration that
     * already caught the engine dropping prompt tokens.
     */
    sealed interface Plan {
        record Ready(Planned prompt) implements Plan {}

        record Failed(EngineFailure failure) implements Plan {}

        record Truncating(String detail) implements Plan {}
    }

    Mono<Plan> plan(String model, int tokens) {
        // Through chat completions the template adds its own tokens to the prompt: only calibration proves the count.
        if (facts.current().capabilities().tokenize() && completions.generation() == Generation.COMPLETIONS) {
            return tokenized(model, tokens, tokens + tokens / 4 + 8, 1);
        }
        return calibrated(model, tokens);
    }

    private Mono<Plan> tokenized(String model, int tokens, int words, int attempt) {
        String text = PromptText.of(words, random);
        return client.tokenize(facts.current().capabilities().dialect(), model, text)
                .flatMap(call -> switch (call) {
                    case EngineCall.Success<TokenCount> success -> {
                        TokenCount count = success.value();
                        if (count.tokens().size() >= tokens) {
                            String proof =
                                    "exact: the prompt is " + tokens + " of the engine's own token ids (/tokenize)";
                            proven(proof);
                            yield Mono.just(new Plan.Ready(
                                    new Planned(count.tokens().subList(0, tokens), null, tokens, true, proof)));
                        }
                        if (count.tokens().isEmpty()) {
                            // A tokenizer that counts but returns no ids (or answers 200 with nothing): prove counts
                            // otherwise.
                            lackTokenize();
                            yield calibrated(model, tokens);
                        }
                        if (attempt >= MAX_ATTEMPTS) {
                            yield Mono.just(new Plan.Failed(EngineFailure.of(
                                    EngineFailure.Kind.MALFORMED_BODY,
                                    "/tokenize returned " + count.count() + " tokens for " + words
                                            + " words; cannot build " + tokens + " tokens")));
                        }
                        int more = (int) Math.ceil(words * (tokens * 1.2 / Math.max(1, count.count())));
                        yield tokenized(model, tokens, Math.max(words + 8, more), attempt + 1);
                    }
                    case EngineCall.Failure<TokenCount> failure -> {
                        if (failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                            lackTokenize();
                            yield calibrated(model, tokens);
                        }
                        yield Mono.just(new Plan.Failed(failure.failure()));
                    }
                });
    }

    /** A fresh sentence, counted by the engine 1, 2 and 4 times over, then repeated to about {@code tokens}. */
    private Mono<Plan> calibrated(String model, int tokens) {
        String unit = PromptText.of(UNIT_WORDS, random);
        List<Integer> counts = Collections.synchronizedList(new ArrayList<>(3));
        return count(model, unit, 1, counts)
                .switchIfEmpty(Mono.defer(() -> count(model, unit, 2, counts)))
                .switchIfEmpty(Mono.defer(() -> count(model, unit, 4, counts)))
                .<Plan>map(Plan.Failed::new)
                .switchIfEmpty(Mono.fromSupplier(
                        () -> plan(unit, tokens, new Calibration(counts.get(0), counts.get(1), counts.get(2)))));
    }

    private Plan plan(String unit, int tokens, Calibration calibration) {
        String counted = "1, 2 and 4 copies of a fresh sentence counted " + calibration.one() + ", " + calibration.two()
                + " and " + calibration.four() + " prompt tokens";
        if (calibration.shortfall()) {
            String proof = "no usable /tokenize, and " + counted + ": the engine counts a longer prompt as fewer"
                    + " tokens than its parts, so it drops prompt tokens (truncates prompts to its context)";
            proven("refuted by calibration: " + proof);
            return new Plan.Truncating(proof);
        }
        if (!calibration.additive()) {
            String proof = "unproven: no usable /tokenize, and " + counted + ", which do not add up: the"
                    + " engine's count of a longer prompt cannot be checked";
            proven(proof);
            // The best estimate still goes out: a tolerance may accept it (readygate.probe.representative).
            int copies = calibration.copiesFor(tokens);
            return new Plan.Ready(new Planned(null, repeat(unit, copies), calibration.expected(copies), false, proof));
        }
        int copies = calibration.copiesFor(tokens);
        int expected = calibration.expected(copies);
        String proof = "proven by calibration: " + counted + " (" + calibration.perCopy() + " a copy, the first "
                + calibration.one() + "), so " + copies + " copies are " + expected + " tokens";
        proven(proof);
        return new Plan.Ready(new Planned(null, repeat(unit, copies), expected, true, proof));
    }

    /** The engine's prompt count of {@code copies} copies, added to {@code counts}; a failure instead, if any. */
    private Mono<EngineFailure> count(String model, String unit, int copies, List<Integer> counts) {
        CompletionRequest request =
                new CompletionRequest(model, repeat(unit, copies), null, 1, 1, false, 0.0, null, null, false);
        return completions.stream(request, timeout).flatMap(call -> switch (call) {
            case EngineCall.Success<StreamedCompletion> ok -> {
                Integer prompt = ok.value().promptTokens();
                if (ok.value().errorEvent() != null) {
                    yield Mono.just(EngineFailure.of(
                            EngineFailure.Kind.MALFORMED_BODY,
                            "calibration (" + copies + " copies of a sentence): the stream carried an error event: "
                                    + ok.value().errorEvent()));
                }
                if (prompt == null) {
                    yield Mono.just(EngineFailure.of(
                            EngineFailure.Kind.MALFORMED_BODY,
                            "calibration (" + copies + " copies of a sentence): the stream had no usage chunk"
                                    + " (stream_options.include_usage), so prompt tokens cannot be counted"));
                }
                counts.add(prompt);
                yield Mono.<EngineFailure>empty();
            }
            case EngineCall.Failure<StreamedCompletion> failed -> Mono.just(failed.failure());
        });
    }

    private static String repeat(String unit, int copies) {
        StringBuilder text = new StringBuilder(unit.length() * copies + copies);
        for (int i = 0; i < copies; i++) {
            if (i > 0) {
                text.append(' ');
            }
            text.append(unit);
        }
        return text.toString();
    }

    private void lackTokenize() {
        facts.learn(f -> f.withCapabilities(f.capabilities().withoutTokenize()));
    }

    /** How this start's prompt counts were proven (or refuted), for {@code /status}. */
    private void proven(String how) {
        facts.learn(f -> f.withCapabilities(f.capabilities().withPromptTokens(how)));
    }
}
