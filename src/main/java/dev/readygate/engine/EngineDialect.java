package dev.readygate.engine;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The engines whose surfaces readygate knows beyond the OpenAI-compatible {@code /v1/models} and
 * {@code /v1/completions}: how each one's {@code /tokenize} and {@code /detokenize} are spoken, where it says its
 * context length and version, and which metric names it exports. {@link #OPENAI} is any other OpenAI-compatible
 * server: vLLM's shapes are tried, and what answers is used. Sources: docs/engines.md.
 */
public enum EngineDialect {
    /** vLLM: {@code /tokenize {model, prompt}} gives {@code count}, {@code tokens} and {@code max_model_len}. */
    VLLM("vllm", "vllm", "vllm:", "vllm:generation_tokens_total"),
    /**
     * llama.cpp's llama-server: {@code /tokenize {content}} gives {@code tokens} only, {@code /props} gives the
     * context, {@code /metrics} (with {@code --metrics}) has {@code llamacpp:*} series and no process start time.
     */
    LLAMA_CPP("llama.cpp", "llamacpp", "llamacpp:", "llamacpp:tokens_predicted_total"),
    /** SGLang: vLLM-shaped {@code /tokenize}, {@code /get_server_info} for the version, {@code sglang:*} metrics. */
    SGLANG("sglang", "sglang", "sglang:", "sglang:generation_tokens_total"),
    /**
     * Hugging Face's text-generation-inference: {@code /tokenize {inputs}} gives an array of tokens, {@code /info}
     * gives {@code max_total_tokens} and the version, {@code tgi_*} metrics.
     */
    TGI("tgi", "tgi", "tgi_", "tgi_request_generated_tokens_sum"),
    /** Any other OpenAI-compatible server: nothing is assumed beyond {@code /health}, models and completions. */
    OPENAI("openai", "", "", "");

    private final String value;
    private final String ownedBy;
    private final String metricPrefix;
    private final String generationTokens;

    EngineDialect(String value, String ownedBy, String metricPrefix, String generationTokens) {
        this.value = value;
        this.ownedBy = ownedBy;
        this.metricPrefix = metricPrefix;
        this.generationTokens = generationTokens;
    }

    /** Its counter of generated tokens (a restart resets it), or empty for OPENAI. */
    public String generationTokensSeries() {
        return generationTokens;
    }

    /**
     * Whether the server keeps an open connection, idle or waiting for a slot, for the price of a socket: an event-loop
     * server (uvicorn for vLLM and SGLang, tokio for TGI). llama-server gives every open connection one thread of a
     * small pool ({@code --threads-http}, {@code -np} + 2 on a small machine) for as long as it stays open, and an
     * unknown server may do the same: readygate holds no idle connection to those, and sends them no request that
     * would only wait for a slot.
     */
    public boolean connectionsCostNoThread() {
        return this == VLLM || this == SGLANG || this == TGI;
    }

    /**
     * Whether its {@code /health} runs a generation: SGLang's, in 2026 builds, submits a one-token request unless the
     * engine runs with {@code SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=false}. readygate then checks it once per
     * {@code ready-interval} (with the full cheap check), never every {@code health-interval} between. vLLM's and
     * llama-server's answer from the process's own state.
     */
    public boolean healthGenerates() {
        return this == SGLANG;
    }

    /**
     * What readygate cannot see of this engine, in words, as {@code /status} shows it ({@code engine.unseen}; the whole
     * table in docs/engines.md): none for vLLM, whose surface readygate reads whole.
     */
    public List<String> unseen() {
        return switch (this) {
            case VLLM -> List.of();
            case LLAMA_CPP ->
                List.of(
                        "restart paths: llama-server has no weight cache or snapshot; its starts are recorded as"
                                + " unknown",
                        "process start time: llama-server exports none, so a start is dated by what readygate saw (a"
                                + " bound)");
            case SGLANG ->
                List.of(
                        "restart paths only from SGLang's log (readygate.evidence.engine-log): a weight-cache hit"
                                + " ([IpcModelLoader] Fetched ...) is preload_hit, its fallback to disk"
                                + " preload_fallback; without the log they are unknown",
                        "/health and /health_generate run a one-token generation in 2026 builds (503 until its warmup"
                                + " passed): readygate checks /health once per ready-interval (1 s), not every"
                                + " health-interval, so a dead SGLang engine is seen within a second, not 50 ms (also"
                                + " when SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=false, which it cannot see); its 503"
                                + " (empty body) says warming up and unhealthy alike: before a start's first 200 it is"
                                + " read as the warmup (engine_loading), after it as engine_dead",
                        "process start time: SGLang's /metrics exports only its multiprocess series; a restart is seen"
                                + " by the port and the counters, a start dated by its log or by what readygate saw",
                        "the weight-cache daemon: its .ready files (pid, model, revision, rank; whether its process"
                                + " still runs where readygate sees it) and sockets are read from"
                                + " readygate.evidence.daemon-socket-dir; its socket's status request (pickled) and"
                                + " its own /metrics are not, nor SGLang's parity gate (the canary is readygate's)",
                        "/release_memory_occupation: an engine that released its memory is probed as any other");
            case TGI, OPENAI ->
                List.of(
                        "restart paths: no evidence of how a start got its weights; recorded as unknown",
                        "sleep or memory release: not read");
        };
    }

    /** The name in {@code /status}, {@code readygate check} and docs: {@code vllm}, {@code llama.cpp}, ... */
    public String value() {
        return value;
    }

    /** The prefix of this engine's own metric names ({@code vllm:}, {@code llamacpp:}, ...); empty for OPENAI. */
    public String metricPrefix() {
        return metricPrefix;
    }

    /** The dialect a {@code /v1/models} card's {@code owned_by} names, if any. */
    public static Optional<EngineDialect> ownedBy(@Nullable String ownedBy) {
        if (ownedBy == null || ownedBy.isBlank()) {
            return Optional.empty();
        }
        String owner = ownedBy.strip().toLowerCase(Locale.ROOT);
        return Arrays.stream(values())
                .filter(dialect -> !dialect.ownedBy.isEmpty() && dialect.ownedBy.equals(owner))
                .findFirst();
    }

    /**
     * The dialect a {@code readygate.engine.dialect} setting names ({@code vllm}, {@code llama-cpp} or
     * {@code llama.cpp}, {@code sglang}, {@code tgi}, {@code openai}); empty for {@code auto}.
     *
     * @throws IllegalArgumentException for any other name
     */
    public static Optional<EngineDialect> setting(String name) {
        String normalized =
                name.strip().toLowerCase(Locale.ROOT).replace('.', '-').replace('_', '-');
        if (normalized.equals("auto")) {
            return Optional.empty();
        }
        return Optional.of(Arrays.stream(values())
                .filter(dialect -> dialect.name()
                        .toLowerCase(Locale.ROOT)
                        .replace('_', '-')
                        .equals(normalized))
                .findFirst()
                .orElseThrow(
                        () -> new IllegalArgumentException("readygate.engine.dialect must be auto, vllm, llama-cpp,"
                                + " sglang, tgi or openai (was " + name + ")")));
    }
}
