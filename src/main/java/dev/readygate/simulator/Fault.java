package dev.readygate.simulator;

import java.util.Arrays;
import java.util.Locale;

/** The faults the simulator can inject, switchable at run time and from scenarios. */
public enum Fault {
    /** Inference requests are accepted and never answered. */
    HANG(true),
    /** Streams stop after a few tokens and stay open; non-streamed requests never answer. */
    STALL_STREAM(true),
    /** Every latency is stretched by {@code faults.slow-factor}; answers stay correct. */
    SLOW(false),
    /** Inference requests answer HTTP 500 with vLLM's error JSON. */
    ERROR_5XX(true),
    /** Inference requests answer HTTP 429. */
    BUSY_429(true),
    /** JSON endpoints answer 200 with a body that is not valid JSON. */
    MALFORMED_JSON(true),
    /** Streams end mid-event without {@code [DONE]}; non-streamed bodies are cut short. */
    TRUNCATED_SSE(true),
    /** Inference connections are reset (TCP RST). */
    RESET(true),
    /** The engine serves another checkpoint with the same layout (vLLM issue #59647). */
    WRONG_WEIGHTS(true),
    /** Prompt tokens beyond {@code faults.truncate-prompt-limit} are dropped silently. */
    TRUNCATE_PROMPT(true),
    /** Requests longer than {@code faults.kv-too-small-tokens} fail; short ones pass. */
    KV_TOO_SMALL(true),
    /** {@code /health} stays 200 but generation fails, as after a GPU fault. */
    GENERATION_FAILS(true),
    /** The engine core died: {@code /health} answers 503, requests fail. */
    ENGINE_DEAD(true),
    /** Every start crashes after {@code faults.crash-loop-uptime}. */
    CRASH_LOOP(true),
    /**
     * Every start (but a snapshot restore) dies while it profiles, before serving, with {@code faults.startup-failure}
     * as vLLM's root exception; with auto-restart the engine starts again, as a container would.
     */
    STARTUP_FAILURE(true),
    /**
     * Every start (but a snapshot restore) fails its configuration check in the API server, before any engine core
     * exists: pydantic's uncaught {@code ValidationError} for {@code VllmConfig} (an AWQ quantization the checkpoint has
     * no config for), the port never opens; with auto-restart the engine starts again, as a container would.
     */
    CONFIG_ERROR(true),
    /**
     * With {@code sleep-mode}: the next wake of the weights brings them back corrupted, whatever the sleep level, as
     * reported in public ({@code /health} 200, {@code is_sleeping} false, other answers); {@code reload_weights} or a
     * restart restores them. Nothing changes while the engine is awake: it takes a sleep and a wake.
     */
    WAKE_CORRUPTS(false);

    private final boolean blocksServing;

    Fault(boolean blocksServing) {
        this.blocksServing = blocksServing;
    }

    /** Whether an engine with this fault active cannot serve a representative request correctly. */
    public boolean blocksServing() {
        return blocksServing;
    }

    public String value() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Fault fromValue(String value) {
        String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        return Arrays.stream(values())
                .filter(fault -> fault.name().equals(normalized))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown fault '" + value + "' (expected one of "
                        + Arrays.stream(values()).map(Fault::value).toList() + ")"));
    }
}
