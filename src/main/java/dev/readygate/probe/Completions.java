package dev.readygate.probe;

import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.probe.EngineCapabilities.Generation;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * Sends the probes' completions through what the engine offers: {@code POST /v1/completions}, or, on a server that
 * answers it does not have it (404, 405, 501), {@code POST /v1/chat/completions} with the same text as one user
 * message. What a start offers is learned once ({@link EngineCapabilities#generation()}); a server with neither is a
 * failure that names both answers. Once plain completions answered on a start, a later 404 there is a fault of that
 * start (a proxy or a broken engine), returned as the failure it is, never taken for a server without them. A prompt
 * of token ids cannot go through chat: its failure comes back as it is, for the caller to plan a text prompt.
 */
final class Completions {

    /** What shows that plain completions are there: they answered on this start. */
    private static final String ANSWERED = "POST /v1/completions answered on this start";

    private final EngineClient client;
    private final EngineFactsHolder facts;

    Completions(EngineClient client, EngineFactsHolder facts) {
        this.client = client;
        this.facts = facts;
    }

    /** The endpoint this start's probes generate through. */
    Generation generation() {
        return facts.current().capabilities().generation();
    }

    Mono<EngineCall<StreamedCompletion>> stream(CompletionRequest request, Duration timeout) {
        EngineCapabilities capabilities = facts.current().capabilities();
        return switch (capabilities.generation()) {
            case NONE ->
                Mono.just(new EngineCall.Failure<>(
                        EngineFailure.of(
                                EngineFailure.Kind.NOT_SUPPORTED, String.valueOf(capabilities.generationEvidence())),
                        Duration.ZERO));
            case CHAT ->
                request.promptText() == null
                        ? Mono.just(new EngineCall.Failure<>(
                                EngineFailure.of(
                                        EngineFailure.Kind.NOT_SUPPORTED,
                                        "a prompt of token ids cannot be sent through chat completions"),
                                Duration.ZERO))
                        : chat(request, timeout, String.valueOf(capabilities.generationEvidence()));
            case COMPLETIONS ->
                client.streamCompletion(request, timeout).flatMap(call -> {
                    if (call instanceof EngineCall.Success<StreamedCompletion>
                            && capabilities.generationEvidence() == null) {
                        facts.learn(f ->
                                f.withCapabilities(f.capabilities().withGeneration(Generation.COMPLETIONS, ANSWERED)));
                    }
                    if (!(call instanceof EngineCall.Failure<StreamedCompletion> missing)
                            || missing.failure().kind() != EngineFailure.Kind.NOT_SUPPORTED
                            || ANSWERED.equals(capabilities.generationEvidence())) {
                        return Mono.just(call);
                    }
                    String plain = missing.failure().detail();
                    facts.learn(f -> f.withCapabilities(f.capabilities().withGeneration(Generation.CHAT, plain)));
                    return request.promptText() == null ? Mono.just(call) : chat(request, timeout, plain);
                });
        };
    }

    private Mono<EngineCall<StreamedCompletion>> chat(CompletionRequest request, Duration timeout, String plain) {
        return client.streamCompletion(request.asChat(), timeout).map(call -> {
            if (call instanceof EngineCall.Failure<StreamedCompletion> missing
                    && missing.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                String neither = "the engine offers neither plain nor chat completions, and readygate generates its"
                        + " probes through one of them (" + plain + "; "
                        + missing.failure().detail() + ")";
                facts.learn(f -> f.withCapabilities(f.capabilities().withGeneration(Generation.NONE, neither)));
                return new EngineCall.Failure<>(
                        new EngineFailure(
                                EngineFailure.Kind.NOT_SUPPORTED,
                                missing.failure().httpStatus(),
                                neither),
                        call.elapsed());
            }
            return call;
        });
    }
}
