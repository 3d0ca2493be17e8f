package dev.readygate.engine;

import dev.readygate.engine.EngineSurface.Availability;
import dev.readygate.engine.EngineSurface.Endpoint;
import dev.readygate.engine.EngineSurface.Observed;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.function.Tuple3;
import reactor.util.function.Tuples;

/**
 * Finds out what an engine start really offers, once, by asking: the dialect (configured, else named by
 * {@code /v1/models}'s {@code owned_by}, else recognized by llama.cpp's {@code /props} or TGI's {@code /info}, else a
 * generic OpenAI-compatible server), what {@code /tokenize} gives for a known text in that dialect's form, whether
 * {@code /detokenize} gives the text back, {@code /version}, {@code /metrics}, and the context length. Nothing is taken
 * from a name alone: an endpoint is usable only if it answered what readygate needs.
 */
public final class EngineDiscovery {

    /** A text every tokenizer splits into a handful of tokens. */
    static final String KNOWN_TEXT = "The quick brown fox jumps over the lazy dog.";

    private static final int KNOWN_WORDS = 9;

    private final EngineClient client;
    private final Optional<EngineDialect> configured;
    private final @Nullable Integer configuredMaxModelLen;

    /**
     * @param client the engine
     * @param configured the dialect {@code readygate.engine.dialect} names, empty for {@code auto}
     * @param configuredMaxModelLen {@code readygate.engine.max-model-len}, used when the engine does not say
     */
    public EngineDiscovery(
            EngineClient client, Optional<EngineDialect> configured, @Nullable Integer configuredMaxModelLen) {
        this.client = client;
        this.configured = configured;
        this.configuredMaxModelLen = configuredMaxModelLen;
    }

    private record Choice(
            EngineDialect dialect,
            String evidence,
            @Nullable EngineCall<ServerInfo> info) {}

    /** The dialect {@code readygate.engine.dialect} names; empty for {@code auto}. */
    public Optional<EngineDialect> configured() {
        return configured;
    }

    /** Asks the engine that serves {@code card}; never fails (what could not be asked is {@code FAILED}). */
    public Mono<EngineSurface> discover(ModelCard card) {
        return dialect(card)
                .flatMap(choice -> serverInfo(choice).flatMap(info -> {
                    // The three questions are independent: asked at once (each writes its own answers), they add one
                    // round trip, not three, to the time from listening to verified. Kept in the fixed order after.
                    // One at a time where every open connection takes one of the server's few HTTP threads
                    // (llama-server): three at once would take them all from the engine's clients.
                    Map<Endpoint, Observed> tokenizing = new LinkedHashMap<>();
                    Map<Endpoint, Observed> versioning = new LinkedHashMap<>();
                    Map<Endpoint, Observed> scraping = new LinkedHashMap<>();
                    Mono<Boolean> tokenized =
                            tokenize(choice.dialect(), card, tokenizing).thenReturn(true);
                    Mono<String> versioned = version(choice.dialect(), info, versioning);
                    Mono<Set<String>> scraped = metrics(scraping);
                    Mono<Tuple3<Boolean, String, Set<String>>> asked = choice.dialect()
                                    .connectionsCostNoThread()
                            ? Mono.zip(tokenized, versioned, scraped)
                            : tokenized.flatMap(t -> versioned.flatMap(v -> scraped.map(m -> Tuples.of(t, v, m))));
                    return asked.map(answers -> {
                        Map<Endpoint, Observed> endpoints = new LinkedHashMap<>(tokenizing);
                        endpoints.putAll(versioning);
                        endpoints.putAll(scraping);
                        endpoints.put(Endpoint.SERVER_INFO, serverInfoObserved(choice.dialect(), info));
                        return surface(choice, card, info, answers.getT2(), answers.getT3(), endpoints);
                    });
                }));
    }

    private Mono<Choice> dialect(ModelCard card) {
        if (configured.isPresent()) {
            return Mono.just(new Choice(
                    configured.get(),
                    "readygate.engine.dialect=" + configured.get().value() + " (configured)",
                    null));
        }
        Optional<EngineDialect> owner = EngineDialect.ownedBy(card.ownedBy());
        if (owner.isPresent()) {
            return Mono.just(new Choice(owner.get(), "/v1/models owned_by " + card.ownedBy(), null));
        }
        String unnamed = card.ownedBy() == null
                ? "/v1/models names no owner"
                : "/v1/models owned_by " + card.ownedBy() + " names no engine readygate knows";
        return client.serverInfo(EngineDialect.LLAMA_CPP).flatMap(props -> {
            if (props instanceof EngineCall.Success<ServerInfo>) {
                return Mono.just(
                        new Choice(EngineDialect.LLAMA_CPP, unnamed + "; /props answers like llama.cpp's", props));
            }
            return client.serverInfo(EngineDialect.TGI)
                    .map(info -> info instanceof EngineCall.Success<ServerInfo>
                            ? new Choice(EngineDialect.TGI, unnamed + "; /info answers like TGI's", info)
                            : new Choice(
                                    EngineDialect.OPENAI,
                                    unnamed + "; neither llama.cpp's /props nor TGI's /info answers: a generic"
                                            + " OpenAI-compatible server",
                                    null));
        });
    }

    private Mono<EngineCall<ServerInfo>> serverInfo(Choice choice) {
        return choice.info() != null ? Mono.just(choice.info()) : client.serverInfo(choice.dialect());
    }

    private Mono<Void> tokenize(EngineDialect dialect, ModelCard card, Map<Endpoint, Observed> endpoints) {
        return client.tokenize(dialect, card.id(), KNOWN_TEXT).flatMap(call -> switch (call) {
            case EngineCall.Success<TokenCount> ok -> {
                TokenCount count = ok.value();
                if (count.tokens().isEmpty()) {
                    endpoints.put(
                            Endpoint.TOKENIZE,
                            new Observed(
                                    Availability.UNUSABLE,
                                    "answered 200 with "
                                            + (count.count() > 0
                                                    ? "a count of " + count.count() + " but no token ids"
                                                    : "no tokens")
                                            + " for a " + KNOWN_WORDS + "-word text in the " + dialect.value()
                                            + " form; prompts are calibrated from the engine's usage instead"));
                    endpoints.put(
                            Endpoint.DETOKENIZE,
                            new Observed(Availability.UNUSABLE, "not asked: no token ids to send"));
                    yield Mono.<Void>empty();
                }
                endpoints.put(
                        Endpoint.TOKENIZE,
                        new Observed(
                                Availability.USABLE,
                                "gave " + count.tokens().size() + " token ids for a " + KNOWN_WORDS + "-word text ("
                                        + dialect.value() + " form); prompts are sent as the engine's own ids"));
                yield detokenize(dialect, card, count.tokens(), endpoints);
            }
            case EngineCall.Failure<TokenCount> failed -> {
                endpoints.put(Endpoint.TOKENIZE, failed(failed.failure(), "prompts are calibrated from usage"));
                endpoints.put(
                        Endpoint.DETOKENIZE, new Observed(Availability.UNUSABLE, "not asked: no token ids to send"));
                yield Mono.<Void>empty();
            }
        });
    }

    private Mono<Void> detokenize(
            EngineDialect dialect, ModelCard card, List<Integer> ids, Map<Endpoint, Observed> endpoints) {
        return client.detokenize(dialect, card.id(), ids)
                .doOnNext(call -> endpoints.put(
                        Endpoint.DETOKENIZE,
                        switch (call) {
                            case EngineCall.Success<String> ok ->
                                ok.value().contains(KNOWN_TEXT.substring(4))
                                        ? new Observed(Availability.USABLE, "the ids decode back to the text")
                                        : new Observed(
                                                Availability.UNUSABLE, "answered, but the ids decode to another text");
                            case EngineCall.Failure<String> failed -> failed(failed.failure(), "not needed");
                        }))
                .then();
    }

    private Mono<String> version(
            EngineDialect dialect, EngineCall<ServerInfo> info, Map<Endpoint, Observed> endpoints) {
        if (dialect != EngineDialect.VLLM && dialect != EngineDialect.OPENAI) {
            endpoints.put(
                    Endpoint.VERSION,
                    new Observed(
                            Availability.MISSING,
                            "not asked: " + dialect.value()
                                    + " has no /version; the version comes from its server information"));
            return Mono.just(
                    info instanceof EngineCall.Success<ServerInfo> ok
                                    && ok.value().version() != null
                            ? ok.value().version()
                            : "");
        }
        return client.version().map(call -> switch (call) {
            case EngineCall.Success<String> ok -> {
                endpoints.put(Endpoint.VERSION, new Observed(Availability.USABLE, "version " + ok.value()));
                yield ok.value();
            }
            case EngineCall.Failure<String> failed -> {
                endpoints.put(Endpoint.VERSION, failed(failed.failure(), "engine version unknown"));
                yield "";
            }
        });
    }

    private Mono<Set<String>> metrics(Map<Endpoint, Observed> endpoints) {
        return client.metrics().map(call -> switch (call) {
            case EngineCall.Success<EngineMetricsSample> ok -> {
                Set<String> families = ok.value().families();
                boolean known = families.stream().anyMatch(family -> !family.equals("process_"));
                endpoints.put(
                        Endpoint.METRICS,
                        new Observed(
                                known ? Availability.USABLE : Availability.UNUSABLE,
                                "reachable, "
                                        + (families.contains("vllm:") ? "vllm:* series" : "no vllm:* series")
                                        + families.stream()
                                                .filter(family -> !family.equals("vllm:") && !family.equals("process_"))
                                                .map(family -> ", " + family + "* series")
                                                .reduce("", String::concat)
                                        + (families.contains("process_")
                                                ? ", process_start_time_seconds"
                                                : ", no process start time")));
                yield families;
            }
            case EngineCall.Failure<EngineMetricsSample> failed -> {
                endpoints.put(
                        Endpoint.METRICS,
                        failed(failed.failure(), "no busy detection and no restart detection by process start"));
                yield Set.<String>of();
            }
        });
    }

    private static Observed serverInfoObserved(EngineDialect dialect, EngineCall<ServerInfo> info) {
        return switch (info) {
            case EngineCall.Success<ServerInfo> ok ->
                new Observed(
                        Availability.USABLE,
                        ok.value().path() + " gave "
                                + (ok.value().contextLength() == null
                                        ? "no context length"
                                        : "a context of " + ok.value().contextLength() + " tokens")
                                + (ok.value().version() == null
                                        ? ""
                                        : ", version " + ok.value().version())
                                + (ok.value().slots() == null
                                        ? ""
                                        : ", " + ok.value().slots() + " slot(s)"));
            case EngineCall.Failure<ServerInfo> failed ->
                dialect == EngineDialect.VLLM || dialect == EngineDialect.OPENAI
                        ? new Observed(Availability.MISSING, failed.failure().detail())
                        : failed(failed.failure(), "context length and version unknown from the engine");
        };
    }

    private EngineSurface surface(
            Choice choice,
            ModelCard card,
            EngineCall<ServerInfo> info,
            String version,
            Set<String> families,
            Map<Endpoint, Observed> endpoints) {
        List<String> problems = new ArrayList<>();
        Integer context = card.maxModelLen();
        String source = "/v1/models max_model_len";
        if (context == null
                && info instanceof EngineCall.Success<ServerInfo> ok
                && ok.value().contextLength() != null) {
            context = ok.value().contextLength();
            source = ok.value().contextSource();
        }
        if (context == null && configuredMaxModelLen != null) {
            context = configuredMaxModelLen;
            source = "readygate.engine.max-model-len (the engine does not report it)";
        } else if (context == null) {
            source = "unknown: the engine reports no max_model_len and readygate.engine.max-model-len is not set";
        } else if (configuredMaxModelLen != null && !configuredMaxModelLen.equals(context)) {
            problems.add("readygate.engine.max-model-len is " + configuredMaxModelLen + " but the engine reports "
                    + context + " (" + source + "); the engine's value is used");
        }
        return new EngineSurface(
                choice.dialect(),
                choice.evidence(),
                endpoints,
                context,
                source,
                version.isEmpty() ? null : version,
                version.isEmpty()
                        ? "unknown"
                        : choice.dialect() == EngineDialect.VLLM || choice.dialect() == EngineDialect.OPENAI
                                ? "/version"
                                : info instanceof EngineCall.Success<ServerInfo> ok
                                        ? ok.value().path()
                                        : "unknown",
                families,
                problems,
                info instanceof EngineCall.Success<ServerInfo> ok ? ok.value().slots() : null);
    }

    private static Observed failed(EngineFailure failure, String consequence) {
        Availability availability =
                failure.kind() == EngineFailure.Kind.NOT_SUPPORTED ? Availability.MISSING : Availability.FAILED;
        return new Observed(availability, failure.detail() + "; " + consequence);
    }
}
