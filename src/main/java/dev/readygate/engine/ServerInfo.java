package dev.readygate.engine;

import org.jspecify.annotations.Nullable;

/**
 * What an engine's own server-information endpoint says (llama.cpp's {@code /props}, TGI's {@code /info}, SGLang's
 * {@code /get_server_info}): the context a request may use, the version, the parallel slots.
 *
 * @param path the endpoint that said it
 * @param contextLength the most prompt plus output tokens one request may use, or null
 * @param contextSource where exactly {@code contextLength} came from (e.g. {@code /props default_generation_settings.n_ctx})
 * @param maxInputTokens the most prompt tokens, where the engine limits the prompt separately (TGI), or null
 * @param version the engine's version or build, or null
 * @param slots how many requests it serves in parallel (llama.cpp's {@code total_slots}), or null
 */
public record ServerInfo(
        String path,
        @Nullable Integer contextLength,
        String contextSource,
        @Nullable Integer maxInputTokens,
        @Nullable String version,
        @Nullable Integer slots) {}
