package dev.readygate.simulator;

import java.nio.file.Path;
import java.time.Duration;
import java.util.IllegalFormatException;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configuration of the vLLM 0.31 engine simulator ({@code readygate.simulator.*}). Every behaviour that
 * {@code vllm-0.31-surface.md} marks unconfirmed is a setting here, so tests can exercise both readings.
 *
 * @param host address the engine, admin and daemon listeners bind to
 * @param port the engine's OpenAI-compatible HTTP port (vLLM's {@code --port}); the admin API and the preload
 *     daemon's health port follow it ({@code port + 1}, {@code port + 2}) unless they are set
 * @param adminPort the simulator's admin API port (restarts, faults, state); default {@code port + 1}
 * @param startup the path of the first engine start
 * @param loadTime how long a cold start takes from process start to listening
 * @param scenario a scenario to run after the first start, or none: a YAML file's path, or {@code classpath:} and a
 *     resource in the jar ({@code classpath:simulator/demo.yaml}, the demo's)
 * @param timeScale every simulated duration is multiplied by this (scenario steps, start and load times, latencies,
 *     delays): {@code 0.25} runs the simulated world four times as fast; 1 by default
 * @param workDir where the log file, socket directory and snapshot directory live unless set one by one
 * @param logFile the engine's log file (vLLM lines, as a shared volume would hold them); default under work-dir
 * @param logToStdout whether the vLLM log lines are also written to standard output
 * @param apiKey when set, {@code /v1/*} requires {@code Authorization: Bearer <key>} (vLLM's {@code --api-key})
 * @param apiKeyProtectsHealth whether the API key also guards {@code /health}, {@code /metrics} and the rest
 *     (unconfirmed for 0.31; vLLM historically guarded {@code /v1/*} only)
 * @param hfToken the Hugging Face token the engine is started with (vLLM's {@code --hf-token}); it only shows in the
 *     engine's {@code non-default args} log line, as vLLM logs it (in clear, like the API key)
 * @param vllmVersion the version {@code /version} reports and the log lines print
 * @param pid the simulated engine's first process id (each start takes the next one)
 * @param autoRestart whether a crashed engine is started again (as a container restart policy would)
 * @param autoRestartDelay how long after a crash the engine is started again
 * @param openaiOnly behave as a plain OpenAI-compatible server: no {@code /tokenize}, {@code /detokenize},
 *     {@code /version}, {@code /metrics}, {@code /ping}, {@code /load}, and no {@code root} or {@code max_model_len} in
 *     the model card
 * @param sleepMode vLLM started with {@code --enable-sleep-mode} and {@code VLLM_SERVER_DEV_MODE=1}: {@code POST /sleep},
 *     {@code POST /wake_up}, {@code GET /is_sleeping} and {@code POST /collective_rpc} answer (404 without it); not with
 *     {@code openai-only}
 * @param errorShape {@code nested} ({@code {"error":{...}}}, recent vLLM) or {@code flat} (older vLLM)
 * @param model the served model and the simulated checkpoint
 * @param timing latency and duration model
 * @param preload the {@code vllm preload} weight-cache daemon
 * @param snapshot the CRIU initialized-engine snapshot artifacts
 * @param faults fault parameters
 * @param memory the simulated GPU memory
 * @param deployment how vLLM is deployed (collector prefix, data parallel, speculative decoding, loader) and which
 *     vLLM's formats it writes
 * @param engine which engine the simulator is: {@code vllm} (the default), or {@code sglang}: SGLang's log lines for a
 *     start (cold, a weight-cache hit, a fallback to disk), its model card, {@code /get_server_info},
 *     {@code /health_generate} and {@code sglang:*} metrics, over the same timeline (no sleep mode, snapshot restore,
 *     data parallel or {@code openai-only})
 */
@ConfigurationProperties("readygate.simulator")
public record SimulatorProperties(
        @DefaultValue("127.0.0.1") String host,
        @DefaultValue("18000") int port,
        @Nullable Integer adminPort,
        @DefaultValue("cold") StartupPath startup,
        @DefaultValue("3s") Duration loadTime,
        @Nullable String scenario,
        @DefaultValue("1") double timeScale,
        @Nullable Path workDir,
        @Nullable Path logFile,
        @DefaultValue("true") boolean logToStdout,
        @Nullable String apiKey,
        @DefaultValue("false") boolean apiKeyProtectsHealth,
        @Nullable String hfToken,
        @DefaultValue("0.31.0") String vllmVersion,
        @DefaultValue("4242") int pid,
        @DefaultValue("true") boolean autoRestart,
        @DefaultValue("1s") Duration autoRestartDelay,
        @DefaultValue("false") boolean openaiOnly,
        @DefaultValue("false") boolean sleepMode,
        @DefaultValue("nested") ErrorShape errorShape,
        @DefaultValue Model model,
        @DefaultValue Timing timing,
        @DefaultValue Preload preload,
        @DefaultValue Snapshot snapshot,
        @DefaultValue Faults faults,
        @DefaultValue Memory memory,
        @DefaultValue Deployment deployment,
        @DefaultValue("vllm") Engine engine) {

    public SimulatorProperties {
        requirePort("readygate.simulator.port", port);
        if (adminPort == null) {
            adminPort = followingPort("readygate.simulator.admin-port", port, 1);
        }
        requirePort("readygate.simulator.admin-port", adminPort);
        if (preload.healthPort == null) {
            preload = preload.withHealthPort(followingPort("readygate.simulator.preload.health-port", port, 2));
        }
        requirePositive("readygate.simulator.load-time", loadTime);
        if (port == adminPort) {
            throw new IllegalArgumentException(
                    "readygate.simulator.port must differ from readygate.simulator.admin-port (was " + port + ")");
        }
        int healthPort = preload.healthPort();
        if (healthPort == port || healthPort == adminPort) {
            throw new IllegalArgumentException("readygate.simulator.preload.health-port must differ from"
                    + " readygate.simulator.port and readygate.simulator.admin-port (was " + healthPort + ")");
        }
        if (sleepMode && openaiOnly) {
            throw new IllegalArgumentException("readygate.simulator.sleep-mode needs vLLM's own endpoints: it cannot be"
                    + " true with readygate.simulator.openai-only=true");
        }
        if (engine == Engine.SGLANG) {
            String without = sleepMode
                    ? "readygate.simulator.sleep-mode=true"
                    : openaiOnly
                            ? "readygate.simulator.openai-only=true"
                            : startup == StartupPath.SNAPSHOT_RESTORE
                                    ? "readygate.simulator.startup=snapshot-restore"
                                    : deployment.dataParallelSize() > 1
                                            ? "readygate.simulator.deployment.data-parallel-size > 1"
                                            : null;
            if (without != null) {
                throw new IllegalArgumentException("readygate.simulator.engine=sglang cannot be simulated with "
                        + without + ": the simulator models SGLang's starts only (cold, weight-cache hit, fallback)");
            }
        }
        if (!(timeScale > 0) || Double.isInfinite(timeScale)) {
            throw new IllegalArgumentException(
                    "readygate.simulator.time-scale must be a positive number (was " + timeScale + ")");
        }
        if (timeScale != 1) {
            loadTime = scaled(loadTime, timeScale);
            autoRestartDelay = scaled(autoRestartDelay, timeScale);
            timing = timing.scaled(timeScale);
            faults = faults.scaled(timeScale);
        }
    }

    /** The admin API's port, known once the record exists ({@code port + 1} unless set). */
    @Override
    public Integer adminPort() {
        return java.util.Objects.requireNonNull(adminPort);
    }

    /** The directory everything without an explicit path is written to. */
    public Path effectiveWorkDir() {
        return workDir != null ? workDir : Path.of(System.getProperty("java.io.tmpdir"), "readygate-simulator-" + port);
    }

    public Path effectiveLogFile() {
        return logFile != null ? logFile : effectiveWorkDir().resolve("engine.log");
    }

    /** Whether the simulator is an SGLang engine (its lines, routes, process names and warmup), not vLLM. */
    public boolean sglang() {
        return engine == Engine.SGLANG;
    }

    /** The engine the simulator is. */
    public enum Engine {
        VLLM,
        SGLANG
    }

    /** Shape of vLLM's error JSON. */
    public enum ErrorShape {
        NESTED,
        FLAT
    }

    /**
     * The served model. Two checkpoints with the same {@code layout} pass vLLM's weight-cache fingerprint check
     * (it hashes safetensors headers, not values: vLLM issue #59647), so a daemon holding another checkpoint of
     * the same layout serves the wrong weights.
     *
     * @param servedModelName the model id clients send ({@code --served-model-name})
     * @param root the model path or hub id ({@code args.model}, {@code ModelCard.root})
     * @param revision the checkpoint revision
     * @param checkpoint identity of the weights' values: the deterministic model's answers depend on it
     * @param layout identity of the weights' layout (tensor names, shapes, dtypes)
     * @param maxModelLen the effective {@code max_model_len}
     * @param kvCacheSizeTokens the KV cache size reported in {@code vllm:cache_config_info}
     * @param weightsGib GPU memory taken by the weights
     * @param tensors number of tensors (the {@code Mapped N tensors} line)
     * @param gpuName the GPU's name (manifest, logs)
     * @param gpuUuid the GPU's UUID (manifest, socket names)
     * @param driverVersion the NVIDIA driver version the simulated node runs (nvidia-smi, the snapshot manifest; a
     *     restore checks it)
     * @param eosEvery on average one token in this many is end-of-sequence when {@code ignore_eos} is off
     * @param maxNumSeqs the most sequences the engine runs at once (vLLM's {@code --max-num-seqs}); requests beyond
     *     them wait, first come first served, in {@code vllm:num_requests_waiting}
     * @param batchVariance how much a token's logprob moves when other requests run beside it: vLLM's kernels are not
     *     batch-invariant by default, so greedy output can change with the batch. With other requests running, every
     *     token's logprob moves by up to this much (at least half of it) and each token after the first may be another
     *     one (the runner-up); the first token stays, as a decisive one does. 0: batch-invariant (vLLM's
     *     {@code VLLM_BATCH_INVARIANT=1})
     */
    public record Model(
            @DefaultValue("Qwen/Qwen3-0.6B") String servedModelName,
            @DefaultValue("Qwen/Qwen3-0.6B") String root,

            @DefaultValue("c1899de289a04d12100db370d81485cdf75e47ca")
            String revision,

            @DefaultValue("qwen3-0.6b-base") String checkpoint,
            @DefaultValue("Qwen3ForCausalLM/28x1024/bf16") String layout,
            @DefaultValue("4096") int maxModelLen,
            @DefaultValue("65536") int kvCacheSizeTokens,
            @DefaultValue("1.1214") double weightsGib,
            @DefaultValue("339") int tensors,
            @DefaultValue("NVIDIA H200") String gpuName,

            @DefaultValue("GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da")
            String gpuUuid,

            @DefaultValue("580.159.04") String driverVersion,

            @DefaultValue("48") int eosEvery,
            @DefaultValue("256") int maxNumSeqs,
            @DefaultValue("0.03") double batchVariance) {

        public Model {
            if (maxModelLen < 16) {
                throw new IllegalArgumentException(
                        "readygate.simulator.model.max-model-len must be at least 16 (was " + maxModelLen + ")");
            }
            if (kvCacheSizeTokens < maxModelLen) {
                throw new IllegalArgumentException("readygate.simulator.model.kv-cache-size-tokens must be at least"
                        + " readygate.simulator.model.max-model-len, or vLLM refuses to start (was " + kvCacheSizeTokens
                        + ")");
            }
            if (eosEvery < 2) {
                throw new IllegalArgumentException(
                        "readygate.simulator.model.eos-every must be at least 2 (was " + eosEvery + ")");
            }
            if (maxNumSeqs < 1) {
                throw new IllegalArgumentException(
                        "readygate.simulator.model.max-num-seqs must be at least 1 (was " + maxNumSeqs + ")");
            }
            if (!(batchVariance >= 0 && batchVariance < 1)) {
                throw new IllegalArgumentException(
                        "readygate.simulator.model.batch-variance must be at least 0 and below 1 (was " + batchVariance
                                + ")");
            }
        }
    }

    /**
     * The latency model: time to first token grows with the uncached prompt tokens, each output token takes
     * {@code decode-per-token}, both stretched by concurrent requests; the first requests after a start pay a
     * warm-up penalty (lazy compilation).
     *
     * @param ttftBase fixed part of the time to first token
     * @param prefillPerToken prefill time per prompt token not served from the prefix cache
     * @param decodePerToken time per output token
     * @param batchSlowdown how much each additional running request stretches latency (0.1 = 10 %)
     * @param warmupRequests how many requests after each start pay the warm-up penalty
     * @param warmupPenalty extra time to first token of a warm-up request
     * @param preloadHitLoadTime start duration of a preload cache hit
     * @param fallbackDetectTime time the engine spends trying the weight cache before falling back to disk
     * @param snapshotRestoreTime start duration of a snapshot restore
     * @param shutdownTime time between a stop request and the listener going away
     * @param daemonLoadTime time the preload daemon needs to cache the weights
     * @param sglangWarmup with {@code engine: sglang}: how long after its port opens SGLang's {@code /health} (and
     *     {@code /health_generate}) still answer 503, while its own warmup request runs; then "fired up"
     */
    public record Timing(
            @DefaultValue("15ms") Duration ttftBase,
            @DefaultValue("20us") Duration prefillPerToken,
            @DefaultValue("8ms") Duration decodePerToken,
            @DefaultValue("0.05") double batchSlowdown,
            @DefaultValue("0") int warmupRequests,
            @DefaultValue("0ms") Duration warmupPenalty,
            @DefaultValue("800ms") Duration preloadHitLoadTime,
            @DefaultValue("300ms") Duration fallbackDetectTime,
            @DefaultValue("600ms") Duration snapshotRestoreTime,
            @DefaultValue("100ms") Duration shutdownTime,
            @DefaultValue("2s") Duration daemonLoadTime,
            @DefaultValue("500ms") Duration sglangWarmup) {

        public Timing {
            requireNonNegative("readygate.simulator.timing.sglang-warmup", sglangWarmup);
            requireNonNegative("readygate.simulator.timing.ttft-base", ttftBase);
            requireNonNegative("readygate.simulator.timing.prefill-per-token", prefillPerToken);
            requireNonNegative("readygate.simulator.timing.decode-per-token", decodePerToken);
            requireNonNegative("readygate.simulator.timing.warmup-penalty", warmupPenalty);
            requireNonNegative("readygate.simulator.timing.shutdown-time", shutdownTime);
            if (batchSlowdown < 0) {
                throw new IllegalArgumentException(
                        "readygate.simulator.timing.batch-slowdown must not be negative (was " + batchSlowdown + ")");
            }
            if (warmupRequests < 0) {
                throw new IllegalArgumentException(
                        "readygate.simulator.timing.warmup-requests must not be negative (was " + warmupRequests + ")");
            }
        }

        Timing scaled(double factor) {
            return new Timing(
                    SimulatorProperties.scaled(ttftBase, factor),
                    SimulatorProperties.scaled(prefillPerToken, factor),
                    SimulatorProperties.scaled(decodePerToken, factor),
                    batchSlowdown,
                    warmupRequests,
                    SimulatorProperties.scaled(warmupPenalty, factor),
                    SimulatorProperties.scaled(preloadHitLoadTime, factor),
                    SimulatorProperties.scaled(fallbackDetectTime, factor),
                    SimulatorProperties.scaled(snapshotRestoreTime, factor),
                    SimulatorProperties.scaled(shutdownTime, factor),
                    SimulatorProperties.scaled(daemonLoadTime, factor),
                    SimulatorProperties.scaled(sglangWarmup, factor));
        }
    }

    /**
     * The {@code vllm preload} weight-cache daemon. It outlives engine restarts.
     *
     * @param enabled whether the daemon runs (started with the simulator)
     * @param healthPort the daemon's {@code --weight-cache-health-port}; default the engine's {@code port + 2}; 0
     *     disables it
     * @param socketDir the daemon's {@code --weight-cache-socket-dir}; default under work-dir
     * @param logFile the daemon's log file; default under work-dir
     * @param checkpoint the checkpoint the daemon holds; default the engine's
     * @param layout the layout the daemon holds; default the engine's
     * @param socketNaming {@code gpu-index} ({@code vllm_weight_cache_gpu0.sock}) or {@code gpu-uuid}
     * @param mode {@code zero-copy} (the daemon keeps the weights) or {@code copy} (released after one hit)
     * @param heldOutsideLine the engine's line on a cache hit after {@code Mapped N tensors}, with {@code %.2f} for
     *     the weights' GiB (its text after the colon is unconfirmed, reference §4.5); empty for no such line
     * @param hitModelLoading what {@code Model loading took X GiB} reports on a cache hit (unconfirmed): {@code
     *     zero} (the weights are the daemon's) or {@code weights} (their size)
     */
    public record Preload(
            @DefaultValue("true") boolean enabled,
            @Nullable Integer healthPort,
            @Nullable Path socketDir,
            @Nullable Path logFile,
            @Nullable String checkpoint,
            @Nullable String layout,
            @DefaultValue("gpu-index") SocketNaming socketNaming,
            @DefaultValue("zero-copy") Mode mode,

            @DefaultValue("Weights are held outside this process: %.2f GiB")
            String heldOutsideLine,

            @DefaultValue("zero") HitModelLoading hitModelLoading) {

        public Preload {
            if (healthPort != null && healthPort != 0) {
                requirePort("readygate.simulator.preload.health-port", healthPort);
            }
            try {
                String.format(Locale.ROOT, heldOutsideLine, 1.0);
            } catch (IllegalFormatException ex) {
                throw new IllegalArgumentException(
                        "readygate.simulator.preload.held-outside-line must be a format with at most one %f for the "
                                + "GiB (was '" + heldOutsideLine + "'): " + ex.getMessage());
            }
        }

        /** What {@code Model loading took} reports on a cache hit. */
        public enum HitModelLoading {
            /** 0 GiB: the weights are held by the daemon. */
            ZERO,
            /** The weights' size, as if the daemon's memory were counted as the engine's. */
            WEIGHTS
        }

        /** The health port, known once the enclosing properties exist ({@code port + 2} unless set; 0: none). */
        @Override
        public Integer healthPort() {
            return java.util.Objects.requireNonNull(healthPort);
        }

        Preload withHealthPort(int port) {
            return new Preload(
                    enabled,
                    port,
                    socketDir,
                    logFile,
                    checkpoint,
                    layout,
                    socketNaming,
                    mode,
                    heldOutsideLine,
                    hitModelLoading);
        }

        /** How daemon socket files are named (the 0.31 naming is unconfirmed). */
        public enum SocketNaming {
            GPU_INDEX,
            GPU_UUID
        }

        /** The engine's {@code --model-loader-extra-config} mode. */
        public enum Mode {
            ZERO_COPY,
            COPY
        }
    }

    /**
     * Snapshot artifacts, as {@code vllm snapshot create} leaves them and {@code restore} uses them.
     *
     * @param dir the snapshot directory; default under work-dir
     * @param restoreLog where a restored engine's output goes: {@code none} (vLLM: the controller and the server log
     *     nothing, the restored child's streams go to /dev/null), {@code child-log} ({@code <dir>/child.log}, a newer
     *     controller) or {@code engine-log}
     * @param countersAtRestore requests already counted at the first scrape after a restore (two create-time
     *     canaries plus the restore canary)
     */
    public record Snapshot(
            @Nullable Path dir,
            @DefaultValue("none") RestoreLog restoreLog,
            @DefaultValue("3") int countersAtRestore) {

        /** Where a restored engine's log lines go. */
        public enum RestoreLog {
            CHILD_LOG,
            ENGINE_LOG,
            NONE
        }
    }

    /**
     * Fault parameters.
     *
     * @param slowFactor how much the {@code slow} fault stretches latency
     * @param stallAfterTokens how many tokens a stream sends before {@code stall-stream} stops it
     * @param truncatePromptLimit prompt tokens kept by {@code truncate-prompt}
     * @param kvTooSmallTokens largest prompt plus output that fits under {@code kv-too-small}
     * @param kvTooSmallBehavior what a request that does not fit does: {@code error} (HTTP 500) or {@code stuck}
     *     (waits forever in the queue)
     * @param wrongCheckpoint the checkpoint {@code wrong-weights} serves (same layout)
     * @param crashLoopUptime how long an engine stays up under {@code crash-loop}
     * @param startupFailure the root exception of a start that {@code startup-failure} makes die before serving, as
     *     vLLM's traceback ends
     */
    public record Faults(
            @DefaultValue("10") double slowFactor,
            @DefaultValue("2") int stallAfterTokens,
            @DefaultValue("256") int truncatePromptLimit,
            @DefaultValue("512") int kvTooSmallTokens,
            @DefaultValue("error") KvTooSmallBehavior kvTooSmallBehavior,
            @DefaultValue("qwen3-0.6b-finetune-step2000") String wrongCheckpoint,
            @DefaultValue("1500ms") Duration crashLoopUptime,

            @DefaultValue("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                    + "capacity of 139.81 GiB of which 1.06 GiB is free. Process 3112 has 122.40 GiB memory in "
                    + "use.")
            String startupFailure) {

        public Faults {
            if (slowFactor < 1) {
                throw new IllegalArgumentException(
                        "readygate.simulator.faults.slow-factor must be at least 1 (was " + slowFactor + ")");
            }
            if (truncatePromptLimit < 1) {
                throw new IllegalArgumentException("readygate.simulator.faults.truncate-prompt-limit must be at least 1"
                        + " (was " + truncatePromptLimit + ")");
            }
            if (kvTooSmallTokens < 1) {
                throw new IllegalArgumentException("readygate.simulator.faults.kv-too-small-tokens must be at least 1"
                        + " (was " + kvTooSmallTokens + ")");
            }
            if (stallAfterTokens < 0) {
                throw new IllegalArgumentException("readygate.simulator.faults.stall-after-tokens must not be negative"
                        + " (was " + stallAfterTokens + ")");
            }
        }

        Faults scaled(double factor) {
            return new Faults(
                    slowFactor,
                    stallAfterTokens,
                    truncatePromptLimit,
                    kvTooSmallTokens,
                    kvTooSmallBehavior,
                    wrongCheckpoint,
                    SimulatorProperties.scaled(crashLoopUptime, factor),
                    startupFailure);
        }

        /** Behaviour of a request that does not fit a too-small KV cache. */
        public enum KvTooSmallBehavior {
            ERROR,
            STUCK
        }
    }

    /**
     * The simulated GPU's memory, shown through a generated {@code nvidia-smi} script.
     *
     * @param leakPerCycleMib memory that each engine start leaves held for good (a leak across restarts)
     * @param staleCacheOnSwitch whether a daemon restarted with another checkpoint keeps the old one resident
     * @param leakShrinksKvCache whether the next start's KV cache shrinks by what leaked (as with vLLM, which sizes it
     *     from the memory left), so memory used at readiness stays flat while {@code kv_cache_size_tokens} drops
     */
    public record Memory(
            @DefaultValue("0") long leakPerCycleMib,
            @DefaultValue("false") boolean staleCacheOnSwitch,
            @DefaultValue("false") boolean leakShrinksKvCache) {

        public Memory {
            if (leakPerCycleMib < 0) {
                throw new IllegalArgumentException(
                        "readygate.simulator.memory.leak-per-cycle-mib must not be negative (was " + leakPerCycleMib
                                + ")");
            }
        }
    }

    /** A duration of the simulated world at {@code time-scale} {@code factor}. */
    static Duration scaled(Duration duration, double factor) {
        return Duration.ofNanos(Math.round(duration.toNanos() * factor));
    }

    /** The default of a port that follows the engine's: {@code port + offset}, which must still be a port. */
    private static int followingPort(String key, int port, int offset) {
        if (port + offset > 65535) {
            throw new IllegalArgumentException(key + " defaults to readygate.simulator.port + " + offset
                    + ", which is no TCP port for port " + port + ": set " + key);
        }
        return port + offset;
    }

    /**
     * How the simulated vLLM is deployed, and whose formats it writes: each style readygate must read in production.
     *
     * @param formats {@code v0-31} (vLLM 0.31: its banner, one KV cache line, {@code init engine ... took %.2f s
     *     (compilation: %.2f s)}, {@code Model loading took} from {@code [model_runner.py]}, a single engine core as
     *     {@code EngineCore}, uvicorn behind the {@code (APIServer pid=N)} prefix, {@code vllm preload}'s per-node
     *     READY line, a final usage chunk without {@code prompt_tokens_details}, {@code /metrics} numbers as {@code
     *     prometheus_client} writes them, e.g. {@code 1.759672931123e+09}) or {@code legacy} (vLLM 0.10.1's log
     *     lines: no API server prefix, {@code EngineCore_0}, {@code init engine ... took %.2f seconds}; docs/simulator.md
     *     lists each line's source)
     * @param logPrefix the log collector's prefix before every line of the engine and daemon logs: {@code none},
     *     {@code compose} ({@code <service-name>  | }), {@code iso-bracket} ({@code [2026-10-05T14:02:11Z] }),
     *     {@code docker-desktop} ({@code 2026-10-05 14:02:11.609 | }) or {@code cri} (Kubernetes' node log format)
     * @param serviceName the service name in {@code compose} prefixes
     * @param dataParallelSize engine cores ({@code --data-parallel-size}, 1 to 4): each logs its own header and
     *     start; above 1 vLLM runs one API server per core and serves {@code /metrics} in Prometheus multiprocess mode
     *     (no {@code process_start_time_seconds}, {@code engine="N"} series per core)
     * @param tensorParallelSize GPUs per engine core ({@code --tensor-parallel-size}, 1 to 8): above 1 each engine core
     *     runs that many worker processes ({@code Worker_TP<r>}, with data parallel {@code Worker_DP<i>_TP<r>}; 0.10.1:
     *     {@code VllmWorker TP<r>}), each loading its shard and writing its own weights, compile and graph lines
     * @param pipelineParallelSize pipeline stages per engine core ({@code --pipeline-parallel-size}, 1 to 8): above 1
     *     the core's workers are one per stage and tensor-parallel rank ({@code Worker_PP<p>}, {@code Worker_PP<p>_TP<t>}
     *     as vLLM's multiproc executor names them), each loading its stage's layers; in 0.31's formats only
     * @param distributedExecutorBackend how the engine core runs its workers ({@code --distributed-executor-backend}):
     *     {@code mp} (processes of their own, each with its own prefix) or {@code ray} (Ray actors, whose lines come
     *     through the engine core's output: {@code (EngineCore pid=N) (RayWorkerWrapper pid=M)}); 0.31's formats only
     * @param speculativeDecoding whether a speculative-decoding drafter is loaded after the model (a second {@code
     *     Loading weights took} line)
     * @param loadFormat {@code auto}, or a loader that logs no {@code Loading weights took}: {@code runai-streamer},
     *     {@code tensorizer}
     * @param timeZone the engine's local time zone, in which vLLM writes its log timestamps ({@code %m-%d %H:%M:%S},
     *     Python's local time: the container's {@code TZ}); an IANA name or an offset such as {@code +05:30}
     */
    public record Deployment(
            @DefaultValue("v0-31") Formats formats,
            @DefaultValue("none") LogPrefix logPrefix,
            @DefaultValue("vllm-1") String serviceName,
            @DefaultValue("1") int dataParallelSize,
            @DefaultValue("1") int tensorParallelSize,
            @DefaultValue("1") int pipelineParallelSize,
            @DefaultValue("mp") ExecutorBackend distributedExecutorBackend,
            @DefaultValue("false") boolean speculativeDecoding,
            @DefaultValue("auto") LoadFormat loadFormat,
            @DefaultValue("UTC") String timeZone) {

        public Deployment {
            try {
                java.time.ZoneId.of(timeZone);
            } catch (java.time.DateTimeException ex) {
                throw new IllegalArgumentException(
                        "readygate.simulator.deployment.time-zone must be a time zone such as "
                                + "UTC, Europe/Berlin or +05:30 (was '" + timeZone + "')");
            }
            if (dataParallelSize < 1 || dataParallelSize > 4) {
                throw new IllegalArgumentException(
                        "readygate.simulator.deployment.data-parallel-size must be between 1 and 4 (was "
                                + dataParallelSize + ")");
            }
            if (tensorParallelSize < 1 || tensorParallelSize > 8) {
                throw new IllegalArgumentException(
                        "readygate.simulator.deployment.tensor-parallel-size must be between 1 and 8 (was "
                                + tensorParallelSize + ")");
            }
            if (pipelineParallelSize < 1 || pipelineParallelSize > 8) {
                throw new IllegalArgumentException(
                        "readygate.simulator.deployment.pipeline-parallel-size must be between 1 and 8 (was "
                                + pipelineParallelSize + ")");
            }
            if (distributedExecutorBackend == ExecutorBackend.RAY && formats == Formats.LEGACY) {
                throw new IllegalArgumentException("readygate.simulator.deployment.distributed-executor-backend ray is"
                        + " modelled in vLLM 0.31's formats only (readygate.simulator.deployment.formats: v0-31)");
            }
            if (pipelineParallelSize > 1 && formats == Formats.LEGACY) {
                throw new IllegalArgumentException("readygate.simulator.deployment.pipeline-parallel-size above 1 is"
                        + " modelled in vLLM 0.31's formats only (readygate.simulator.deployment.formats: v0-31)");
            }
            if (!serviceName.matches("[A-Za-z0-9][\\w.-]{0,60}")) {
                throw new IllegalArgumentException("readygate.simulator.deployment.service-name must be a compose "
                        + "service name (letters, digits, '.', '-', '_'), was '" + serviceName + "'");
            }
        }

        /** The worker processes of one engine core: one per pipeline stage and tensor-parallel rank (1: none). */
        public int ranksPerCore() {
            return tensorParallelSize * pipelineParallelSize;
        }

        /** Whose log line, usage chunk and number formats the simulator writes. */
        public enum Formats {
            /** vLLM 0.31's. */
            V0_31,
            /** vLLM 0.10 to 0.30's. */
            LEGACY
        }

        /** The log collector that prefixes each line. */
        public enum LogPrefix {
            NONE,
            COMPOSE,
            ISO_BRACKET,
            DOCKER_DESKTOP,
            CRI
        }

        /** The engine's {@code --distributed-executor-backend}. */
        public enum ExecutorBackend {
            /** Worker processes of the engine core's own (vLLM's multiproc executor). */
            MP,
            /** Ray actors ({@code RayWorkerWrapper}), their output forwarded through the engine core's. */
            RAY;

            /** As vLLM names it in its arguments. */
            public String vllmName() {
                return name().toLowerCase(Locale.ROOT);
            }
        }

        /** The engine's {@code --load-format}. */
        public enum LoadFormat {
            /** The default loader: logs {@code Loading weights took}. */
            AUTO,
            /** The Run:ai model streamer: no {@code Loading weights took}. */
            RUNAI_STREAMER,
            /** Tensorizer: no {@code Loading weights took}. */
            TENSORIZER;

            /** As vLLM names it in its arguments. */
            public String vllmName() {
                return name().toLowerCase(Locale.ROOT);
            }
        }

        /** {@link #timeZone} as a zone. */
        public java.time.ZoneId zone() {
            return java.time.ZoneId.of(timeZone);
        }

        /** API server processes: vLLM defaults {@code --api-server-count} to the data-parallel size. */
        public int apiServers() {
            return dataParallelSize;
        }
    }

    private static void requirePort(String key, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(key + " must be a TCP port between 1 and 65535 (was " + port + ")");
        }
    }

    private static void requirePositive(String key, Duration duration) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(key + " must be positive (was " + duration + ")");
        }
    }

    private static void requireNonNegative(String key, Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException(key + " must not be negative (was " + duration + ")");
        }
    }
}
