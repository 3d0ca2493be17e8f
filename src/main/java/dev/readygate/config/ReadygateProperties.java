package dev.readygate.config;

import dev.readygate.secret.SecretRedaction;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * readygate's configuration, {@code readygate.*}.
 *
 * @param engine the vLLM engine readygate gates
 * @param stateDir where readygate keeps what must survive its own restarts (learned canary baselines, ...)
 * @param probe how and how often readygate verifies the engine
 * @param evidence where readygate finds what the engine leaves behind (snapshot directory, ...)
 * @param restart restart tracking and its history
 * @param node facts about the node readygate runs on
 * @param gpu where readygate reads GPU memory
 * @param memory what readygate calls a leak, a stale cache or memory held after a stop
 * @param server readygate's own HTTP server: how many connections it holds and for how long
 * @param check the one-shot {@code readygate check} command
 * @param gateway gateway mode: readygate in the traffic path, on a port of its own (off by default)
 */
@ConfigurationProperties("readygate")
public record ReadygateProperties(
        @DefaultValue Engine engine,
        @DefaultValue("./state") Path stateDir,
        @DefaultValue Probe probe,
        @DefaultValue Evidence evidence,
        @DefaultValue Restart restart,
        @DefaultValue Node node,
        @DefaultValue Gpu gpu,
        @DefaultValue Memory memory,
        @DefaultValue Server server,
        @DefaultValue Check check,
        @DefaultValue Gateway gateway) {

    public ReadygateProperties {
        requireDirectoryOrAbsent("readygate.state-dir", stateDir);
        if (engine.requestTimeout().compareTo(probe.readyInterval()) > 0) {
            throw new IllegalArgumentException("readygate.engine.request-timeout must not be longer than its interval"
                    + " readygate.probe.ready-interval (was " + engine.requestTimeout() + ")");
        }
    }

    /**
     * The engine and how readygate talks to it.
     *
     * @param baseUrl the engine's base URL, e.g. {@code http://127.0.0.1:8000}; required: a sidecar that does not know
     *     its engine must not start (the demo profile points it at the embedded simulator)
     * @param connectTimeout TCP connect timeout (a refused connection fails at once regardless)
     * @param requestTimeout timeout of the cheap calls ({@code /health}, {@code /v1/models}, {@code /metrics}, ...)
     * @param maxBodySize the largest response body readygate reads; a larger one is abandoned as
     *     {@code body_too_large} (streams: the largest single event and the whole stream)
     * @param apiKeyFile a file holding the engine's API key (vLLM's {@code --api-key}), sent as {@code Authorization:
     *     Bearer}; read at start, never logged
     * @param apiKeyEnv the name of an environment variable holding the API key (used when no file is set)
     * @param dialect which engine it is: {@code auto} (found out at run time: docs/engines.md), {@code vllm},
     *     {@code llama-cpp}, {@code sglang}, {@code tgi} or {@code openai} (any other OpenAI-compatible server)
     * @param maxModelLen the engine's context length (prompt plus output tokens of one request), for engines that do
     *     not report it; what the engine reports wins (vLLM's {@code max_model_len}, llama.cpp's {@code /props})
     */
    public record Engine(
            @Nullable URI baseUrl,
            @DefaultValue("500ms") Duration connectTimeout,
            @DefaultValue("800ms") Duration requestTimeout,
            @DefaultValue("4MB") DataSize maxBodySize,
            @Nullable Path apiKeyFile,
            @Nullable String apiKeyEnv,
            @DefaultValue("auto") String dialect,
            @Nullable Integer maxModelLen) {

        /** The names {@code readygate.engine.dialect} accepts (dots and underscores read as dashes). */
        private static final java.util.regex.Pattern VARIABLE_NAME =
                java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

        public static final java.util.Set<String> DIALECTS =
                java.util.Set.of("auto", "vllm", "llama-cpp", "sglang", "tgi", "openai");

        public Engine {
            if (baseUrl == null) {
                throw new IllegalArgumentException("readygate.engine.base-url is not set: point it at the vLLM engine"
                        + " this sidecar gates (e.g. http://127.0.0.1:8000), or run with the demo profile"
                        + " (--spring.profiles.active=demo) to gate the embedded simulator");
            }
            String scheme = baseUrl.getScheme();
            if (scheme == null || baseUrl.getHost() == null || !(scheme.equals("http") || scheme.equals("https"))) {
                throw new IllegalArgumentException("readygate.engine.base-url must be an http(s) URL with a host, e.g."
                        + " http://127.0.0.1:8000 (was " + SecretRedaction.redact(baseUrl) + ")");
            }
            requirePositive("readygate.engine.connect-timeout", connectTimeout);
            requirePositive("readygate.engine.request-timeout", requestTimeout);
            if (maxBodySize.toBytes() < 1024) {
                throw new IllegalArgumentException(
                        "readygate.engine.max-body-size must be at least 1KB (was " + maxBodySize + ")");
            }
            String normalized = dialect.strip()
                    .toLowerCase(java.util.Locale.ROOT)
                    .replace('.', '-')
                    .replace('_', '-');
            if (!DIALECTS.contains(normalized)) {
                throw new IllegalArgumentException("readygate.engine.dialect must be auto, vllm, llama-cpp, sglang,"
                        + " tgi or openai (was " + dialect + ")");
            }
            if (maxModelLen != null) {
                requireAtLeast("readygate.engine.max-model-len", maxModelLen, 1);
            }
            requireFileOrAbsent("readygate.engine.api-key-file", apiKeyFile);
            if (apiKeyEnv != null
                    && !apiKeyEnv.isBlank()
                    && !VARIABLE_NAME.matcher(apiKeyEnv).matches()) {
                // The value is not echoed: what stands where a variable's name belongs may be the key itself.
                throw new IllegalArgumentException("readygate.engine.api-key-env must be the name of an environment"
                        + " variable (letters, digits and underscores, e.g. VLLM_API_KEY), not the key itself");
            }
        }

        /** The base URL, known to be set once the record exists. */
        public URI requiredBaseUrl() {
            return java.util.Objects.requireNonNull(baseUrl);
        }
    }

    static void requirePositive(String key, Duration duration) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(key + " must be positive (was " + duration + ")");
        }
    }

    /**
     * Probing: cadence, thresholds and the two heavy probes.
     *
     * @param notReadyInterval how often the cheap check runs while the engine is not ready
     * @param downInterval how often the cheap check runs while nothing listens on the engine's port (connection
     *     refused): such a check costs the engine nothing, and it decides how soon a start that begins listening is
     *     noticed
     * @param readyInterval how often the full cheap check ({@code /health}, {@code /metrics}, ...) runs while the
     *     engine is ready
     * @param healthInterval how often {@code /health} alone is checked while the engine is ready, between full cheap
     *     checks: an engine that dies (refused, 503) is taken out within this (an exit that closes the connection
     *     readygate holds to the engine's port is checked at once)
     * @param heavyInterval how often the heavy probes re-verify a ready engine (when it is idle; real traffic defers them
     *     by at most another interval, then they run under load)
     * @param heavyRetryInterval how soon heavy probes run again after a failed verification, before readiness
     * @param heavyTimeout how long one heavy probe may take (a stream that sends nothing for this long fails)
     * @param successThreshold consecutive verifications needed to become ready, first or again
     * @param failureThreshold consecutive failures that take a ready engine out of service (refused connections and
     *     {@code /health} 503 take it out at once)
     * @param maxTokensPerMinute the most prompt plus output tokens heavy probes may spend per minute
     * @param suspendAfterFailures consecutive heavy-probe failures after which heavy probes are suspended (the circuit
     *     breaker opens; cheap checks go on)
     * @param suspension how long heavy probes stay suspended before one is let through (half-open)
     * @param representative the probe shaped like real traffic
     * @param canary the deterministic probe with a known answer
     * @param generation the light generation check between the heavy probes
     */
    public record Probe(
            @DefaultValue("100ms") Duration notReadyInterval,
            @DefaultValue("10ms") Duration downInterval,
            @DefaultValue("1s") Duration readyInterval,
            @DefaultValue("50ms") Duration healthInterval,
            @DefaultValue("5m") Duration heavyInterval,
            @DefaultValue("1s") Duration heavyRetryInterval,
            @DefaultValue("30s") Duration heavyTimeout,
            @DefaultValue("1") int successThreshold,
            @DefaultValue("3") int failureThreshold,
            @DefaultValue("20000") int maxTokensPerMinute,
            @DefaultValue("5") int suspendAfterFailures,
            @DefaultValue("30s") Duration suspension,
            @DefaultValue Representative representative,
            @DefaultValue Canary canary,
            @DefaultValue Generation generation) {

        public Probe {
            requirePositive("readygate.probe.not-ready-interval", notReadyInterval);
            requirePositive("readygate.probe.down-interval", downInterval);
            requirePositive("readygate.probe.ready-interval", readyInterval);
            requirePositive("readygate.probe.health-interval", healthInterval);
            requirePositive("readygate.probe.heavy-interval", heavyInterval);
            requirePositive("readygate.probe.heavy-retry-interval", heavyRetryInterval);
            requirePositive("readygate.probe.heavy-timeout", heavyTimeout);
            requirePositive("readygate.probe.suspension", suspension);
            requireAtLeast("readygate.probe.success-threshold", successThreshold, 1);
            requireAtLeast("readygate.probe.failure-threshold", failureThreshold, 1);
            requireAtLeast("readygate.probe.suspend-after-failures", suspendAfterFailures, 1);
            requireAtLeast("readygate.probe.max-tokens-per-minute", maxTokensPerMinute, 1);
            if (healthInterval.compareTo(readyInterval) > 0) {
                throw new IllegalArgumentException("readygate.probe.health-interval must not be longer than"
                        + " readygate.probe.ready-interval (was " + healthInterval + ")");
            }
            if (heavyTimeout.compareTo(heavyInterval) > 0) {
                throw new IllegalArgumentException("readygate.probe.heavy-timeout must not be longer than its interval"
                        + " readygate.probe.heavy-interval (was " + heavyTimeout + ")");
            }
        }
    }

    /**
     * The representative probe: a streamed completion with the model's normal prompt and output length.
     *
     * @param enabled whether it runs
     * @param promptTokens prompt length: a count ({@code 512}) or a fraction of {@code max_model_len} ({@code 0.25})
     * @param outputTokens output length ({@code min_tokens} = {@code max_tokens}, {@code ignore_eos})
     * @param promptTokenTolerance how many prompt tokens the engine's count may differ from the plan (0: exact, so an
     *     engine that silently truncates prompts fails)
     * @param maxTimeToFirstToken latency objective: a slower first token fails the probe as {@code slow}; none by
     *     default
     * @param maxInterTokenLatency latency objective for the largest gap between tokens; none by default
     */
    public record Representative(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("512") TokenBudget promptTokens,
            @DefaultValue("64") int outputTokens,
            @DefaultValue("0") int promptTokenTolerance,
            @Nullable Duration maxTimeToFirstToken,
            @Nullable Duration maxInterTokenLatency) {

        public Representative {
            requireAtLeast("readygate.probe.representative.output-tokens", outputTokens, 1);
            requireAtLeast("readygate.probe.representative.prompt-token-tolerance", promptTokenTolerance, 0);
            if (maxTimeToFirstToken != null) {
                requirePositive("readygate.probe.representative.max-time-to-first-token", maxTimeToFirstToken);
            }
            if (maxInterTokenLatency != null) {
                requirePositive("readygate.probe.representative.max-inter-token-latency", maxInterTokenLatency);
            }
        }
    }

    /**
     * The canary: a deterministic request (temperature 0, fixed seed, logprobs, token ids) whose answer is known.
     * The expectation comes from the configuration, else the snapshot manifest's oracle, else a baseline learned on
     * a trusted start.
     *
     * @param enabled whether it runs
     * @param prompt the prompt (vLLM's snapshot oracle uses "The capital of France is")
     * @param maxTokens tokens to generate ({@code min_tokens} = {@code max_tokens})
     * @param seed the sampling seed
     * @param expectedTokenIds configured expected token ids (empty: not configured)
     * @param expectedText configured expected text
     * @param expectedLogprob configured expected logprob of the first token
     * @param logprobTolerance how far the logprob may differ (logprobs vary slightly between GPUs)
     * @param logprobToleranceUnderLoad how far the first token's logprob may differ when other requests ran beside
     *     the canary: vLLM is not batch-invariant by default, so under load only the first token and its logprob
     *     within this tolerance are compared
     * @param learnBaseline whether to learn the expected answer on a trusted start when nothing else gives it
     * @param learnWhenStartPathUnknown whether a start whose restart path is unknown counts as trusted for learning
     *     (a start known to map cached weights or restore a snapshot never does)
     */
    public record Canary(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("The capital of France is") String prompt,
            @DefaultValue("1") int maxTokens,
            @DefaultValue("0") long seed,
            @DefaultValue List<Integer> expectedTokenIds,
            @Nullable String expectedText,
            @Nullable Double expectedLogprob,
            @DefaultValue("0.01") double logprobTolerance,
            @DefaultValue("0.1") double logprobToleranceUnderLoad,
            @DefaultValue("true") boolean learnBaseline,
            @DefaultValue("true") boolean learnWhenStartPathUnknown) {

        public Canary {
            requireAtLeast("readygate.probe.canary.max-tokens", maxTokens, 1);
            if (prompt.isBlank()) {
                throw new IllegalArgumentException("readygate.probe.canary.prompt must not be blank");
            }
            if (logprobTolerance < 0) {
                throw new IllegalArgumentException(
                        "readygate.probe.canary.logprob-tolerance must not be negative (was " + logprobTolerance + ")");
            }
            if (logprobToleranceUnderLoad < logprobTolerance) {
                throw new IllegalArgumentException("readygate.probe.canary.logprob-tolerance-under-load must not be"
                        + " below readygate.probe.canary.logprob-tolerance (was " + logprobToleranceUnderLoad + ")");
            }
        }

        /** Whether the configuration states an expected answer. */
        public boolean configured() {
            return !expectedTokenIds.isEmpty() || expectedText != null || expectedLogprob != null;
        }
    }

    /**
     * The light generation check: on an engine that serves, idle or busy, a streamed completion of a fresh prompt of a
     * few words and {@code output-tokens} tokens every {@code interval}, and every {@code canary-every}-th time the
     * canary instead, so that a fault that makes generation fail or hang, stalls streams or swaps the weights is seen
     * within seconds between the heavy probes. A failed check is retried at the next cycle ({@code health-interval});
     * its failures count toward {@code failure-threshold} as {@code generation_failed}, {@code generation_timed_out},
     * {@code generation_stalled} or {@code overlong_stream} (a stream past the tokens asked, cut at once).
     *
     * @param enabled whether it runs
     * @param interval how often it runs on an engine that serves
     * @param timeout the least it waits for its answer on an idle engine, and what it waits before the engine's speed
     *     was measured: a slower engine gets 4 x what the speed its latest passed representative probe (or generation
     *     check on the idle engine) measured gives, at most {@code heavy-timeout}; it grows with the engine's queue (x
     *     (1 + waiting requests), at most {@code heavy-timeout}), and a check that times out while the engine makes
     *     progress on other work is busy, not failed; without {@code /metrics} it is {@code heavy-timeout}
     * @param outputTokens tokens it generates ({@code min_tokens} = {@code max_tokens}, {@code ignore_eos})
     * @param canaryEvery every this many checks, the canary instead (0: never)
     */
    public record Generation(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("2s") Duration interval,
            @DefaultValue("750ms") Duration timeout,
            @DefaultValue("2") int outputTokens,
            @DefaultValue("2") int canaryEvery) {

        public Generation {
            requirePositive("readygate.probe.generation.interval", interval);
            requirePositive("readygate.probe.generation.timeout", timeout);
            requireAtLeast("readygate.probe.generation.output-tokens", outputTokens, 1);
            requireAtLeast("readygate.probe.generation.canary-every", canaryEvery, 0);
            if (timeout.compareTo(interval) > 0) {
                throw new IllegalArgumentException("readygate.probe.generation.timeout must not be longer than its"
                        + " interval readygate.probe.generation.interval (was " + timeout + ")");
            }
        }
    }

    /**
     * What the engine leaves behind that readygate reads to tell how each start came up. Each is optional (the chart
     * mounts them).
     *
     * @param snapshotDir the CRIU snapshot directory ({@code manifest.json}, {@code release.json}); its oracle is the
     *     canary's expected answer when none is configured
     * @param engineLog the engine's log file on a shared volume (vLLM's stdout), tailed through rotation and
     *     truncation
     * @param logPollInterval how often the log file is checked for new lines
     * @param daemonHealthUrl the preload daemon's health URL ({@code --weight-cache-health-port}), e.g.
     *     {@code http://127.0.0.1:8001/health}
     * @param daemonSocketDir the preload daemon's socket directory (vLLM's {@code --weight-cache-socket-dir}; SGLang's
     *     sockets and {@code .ready} files, {@code /tmp} by default)
     * @param daemonLog the preload daemon's log file (its READY line)
     * @param daemonHealthTimeout how long connecting to the daemon's health URL, and then its answer, may each take
     * @param engineContainerFile the file the engine container writes when it starts ({@code {"container_start":
     *     "<id>"}}; the chart's engine entrypoint writes it beside the engine log): tells an engine process restarted
     *     in its container from a restarted container
     * @param logTimeZone the engine container's time zone (its {@code TZ}), in which vLLM writes its log's zone-less
     *     times, e.g. {@code America/Los_Angeles} or {@code +08:00}; unset, readygate learns it from the log (a log
     *     collector's zoned clock on the same lines, lines read as they are written, a start's first line against its
     *     process start time) and says so where it cannot (times read as UTC)
     */
    public record Evidence(
            @Nullable Path snapshotDir,
            @Nullable Path engineLog,
            @DefaultValue("250ms") Duration logPollInterval,
            @Nullable URI daemonHealthUrl,
            @Nullable Path daemonSocketDir,
            @Nullable Path daemonLog,
            @DefaultValue("1s") Duration daemonHealthTimeout,
            @Nullable Path engineContainerFile,
            @Nullable ZoneId logTimeZone) {

        public Evidence {
            requirePositive("readygate.evidence.log-poll-interval", logPollInterval);
            requirePositive("readygate.evidence.daemon-health-timeout", daemonHealthTimeout);
            requireDirectoryOrAbsent("readygate.evidence.snapshot-dir", snapshotDir);
            requireFileOrAbsent("readygate.evidence.engine-log", engineLog);
            requireDirectoryOrAbsent("readygate.evidence.daemon-socket-dir", daemonSocketDir);
            requireFileOrAbsent("readygate.evidence.daemon-log", daemonLog);
            requireFileOrAbsent("readygate.evidence.engine-container-file", engineContainerFile);
            if (daemonHealthUrl != null && !isHttpUrl(daemonHealthUrl)) {
                throw new IllegalArgumentException("readygate.evidence.daemon-health-url must be an http(s) URL with a"
                        + " host, e.g. http://127.0.0.1:8001/health (was " + SecretRedaction.redact(daemonHealthUrl)
                        + ")");
            }
        }
    }

    /**
     * Restart tracking.
     *
     * @param historyMaxSize the restart history file's size before it rotates
     * @param historyFiles how many rotated history files are kept
     * @param loopWindow the window in which {@code loop-starts} starts make a restart loop
     * @param loopStarts how many starts within {@code loop-window} make a restart loop
     * @param loopHold how long a start that began in a restart loop must stay up before it is verified again and
     *     serves ({@code /readyz} stays 503 meanwhile, reason {@code restart_loop}), and how long a start must have
     *     stayed up for the next not to be held as well (the loop's second start); 0 turns the hold off
     * @param loopHoldMax the longest hold: each start of the loop beyond {@code loop-starts} doubles the hold, up to
     *     this
     * @param readinessObjectives how soon an engine start should be verified ready, per restart path ({@code cold},
     *     {@code preload-hit}, {@code preload-fallback}, {@code snapshot-restore}, {@code wake}, {@code unknown});
     *     exported as
     *     {@code readygate_readiness_objective_seconds{path}} for alerts and dashboards; none by default. Keys are
     *     held as the paths' metric labels ({@code preload_hit})
     */
    public record Restart(
            @DefaultValue("10MB") DataSize historyMaxSize,
            @DefaultValue("3") int historyFiles,
            @DefaultValue("10m") Duration loopWindow,
            @DefaultValue("3") int loopStarts,
            @DefaultValue("1m") Duration loopHold,
            @DefaultValue("15m") Duration loopHoldMax,
            @DefaultValue Map<String, Duration> readinessObjectives) {

        /** The restart paths' labels, by their names without separators (map keys bind without underscores). */
        private static final Map<String, String> PATHS = Map.of(
                "cold", "cold",
                "preloadhit", "preload_hit",
                "preloadfallback", "preload_fallback",
                "snapshotrestore", "snapshot_restore",
                "wake", "wake",
                "unknown", "unknown");

        public Restart {
            requirePositiveSize("readygate.restart.history-max-size", historyMaxSize);
            requireAtLeast("readygate.restart.history-files", historyFiles, 1);
            requireAtLeast("readygate.restart.loop-starts", loopStarts, 2);
            requirePositive("readygate.restart.loop-window", loopWindow);
            if (loopHold.isNegative()) {
                throw new IllegalArgumentException(
                        "readygate.restart.loop-hold must not be negative (was " + loopHold + ")");
            }
            if (loopHoldMax.compareTo(loopHold) < 0) {
                throw new IllegalArgumentException("readygate.restart.loop-hold-max must not be shorter than"
                        + " readygate.restart.loop-hold (was " + loopHoldMax + ")");
            }
            Map<String, Duration> byPath = new java.util.TreeMap<>();
            readinessObjectives.forEach((key, objective) -> {
                String path = PATHS.get(key.replaceAll("[-_]", "").toLowerCase(java.util.Locale.ROOT));
                if (path == null) {
                    throw new IllegalArgumentException("readygate.restart.readiness-objectives." + key
                            + " is not a restart path: use cold, preload-hit, preload-fallback, snapshot-restore,"
                            + " wake or unknown");
                }
                requirePositive("readygate.restart.readiness-objectives." + key, objective);
                byPath.put(path, objective);
            });
            readinessObjectives = java.util.Collections.unmodifiableMap(byPath);
        }
    }

    /**
     * The node and the pod; recorded with every restart, and compared with the start before to tell what a start
     * recovered from (a process or container restart, a new pod or node, another GPU or driver).
     *
     * @param name the node's name (the chart passes {@code spec.nodeName})
     * @param gpuName the GPU's name, part of a learned canary baseline's key (logprobs differ by GPU)
     * @param gpuUuid the GPU's UUID, when no GPU reading gives it
     * @param driverVersion the NVIDIA driver version, when no GPU reading gives it
     * @param podUid the pod's UID (the chart passes {@code metadata.uid})
     * @param bootIdFile where the kernel's boot id is read, once at start (a new one after every boot)
     */
    public record Node(
            @DefaultValue("") String name,
            @DefaultValue("unknown") String gpuName,
            @DefaultValue("") String gpuUuid,
            @DefaultValue("") String driverVersion,
            @DefaultValue("") String podUid,
            @DefaultValue("/proc/sys/kernel/random/boot_id") Path bootIdFile) {

        public Node {
            requireFileOrAbsent("readygate.node.boot-id-file", bootIdFile);
        }
    }

    /**
     * GPU memory, read from {@code nvidia-smi} or the DCGM exporter (in that order: the first that works); optional:
     * without either {@code /status} says {@code not_configured}.
     *
     * @param nvidiaSmi the {@code nvidia-smi} binary (a path, or a name looked up on the PATH)
     * @param nvidiaSmiFormat {@code csv} (two {@code --query-*} runs) or {@code xml} (one {@code -q -x} run)
     * @param dcgmUrl the DCGM exporter's metrics URL (framebuffer used and free per GPU; it lists no processes)
     * @param uuids the GPUs to watch (all when empty)
     * @param interval how often memory is read
     * @param timeout how long one {@code nvidia-smi} run or DCGM scrape may take before it is abandoned
     */
    public record Gpu(
            @Nullable Path nvidiaSmi,
            @DefaultValue("csv") NvidiaSmiFormat nvidiaSmiFormat,
            @Nullable URI dcgmUrl,
            @DefaultValue List<String> uuids,
            @DefaultValue("10s") Duration interval,
            @DefaultValue("5s") Duration timeout) {

        public Gpu {
            requirePositive("readygate.gpu.interval", interval);
            requirePositive("readygate.gpu.timeout", timeout);
            if (timeout.compareTo(interval) > 0) {
                throw new IllegalArgumentException("readygate.gpu.timeout must not be longer than its interval"
                        + " readygate.gpu.interval (was " + timeout + ")");
            }
            requireFileOrAbsent("readygate.gpu.nvidia-smi", nvidiaSmi);
            if (dcgmUrl != null && !isHttpUrl(dcgmUrl)) {
                throw new IllegalArgumentException("readygate.gpu.dcgm-url must be an http(s) URL with a host, e.g."
                        + " http://dcgm-exporter:9400/metrics (was " + SecretRedaction.redact(dcgmUrl) + ")");
            }
        }
    }

    /**
     * What readygate calls a leak across restarts, memory held after a stop, a stale weight cache and a shrinking KV
     * cache (see docs/operations.md).
     *
     * @param afterStopDelay how long after the engine went away its memory is read (the driver frees a dead process's
     *     memory within about a second)
     * @param leakCycles the fewest ready cycles with the same configuration and path that can show a leak
     * @param window how many of the latest such cycles the drift is fitted over
     * @param driftThreshold growth of memory at readiness per cycle above which it is a leak
     * @param tolerance memory below which nothing is called held after a stop, or a stale cache
     * @param daemonOverhead what a preload daemon holds beyond the weights it serves (its CUDA context: about 520 MiB on
     *     an H200)
     * @param kvShrinkFraction a drop of {@code kv_cache_size_tokens} larger than this fraction of the earlier size is
     *     a shrinking KV cache
     */
    public record Memory(
            @DefaultValue("2s") Duration afterStopDelay,
            @DefaultValue("3") int leakCycles,
            @DefaultValue("6") int window,
            @DefaultValue("64MB") DataSize driftThreshold,
            @DefaultValue("256MB") DataSize tolerance,
            @DefaultValue("1GB") DataSize daemonOverhead,
            @DefaultValue("0.01") double kvShrinkFraction) {

        public Memory {
            if (afterStopDelay.isNegative()) {
                throw new IllegalArgumentException(
                        "readygate.memory.after-stop-delay must not be negative (was " + afterStopDelay + ")");
            }
            requireAtLeast("readygate.memory.leak-cycles", leakCycles, 2);
            if (window < leakCycles) {
                throw new IllegalArgumentException(
                        "readygate.memory.window must be at least readygate.memory.leak-cycles (was " + window + ")");
            }
            requirePositiveSize("readygate.memory.drift-threshold", driftThreshold);
            requirePositiveSize("readygate.memory.tolerance", tolerance);
            if (daemonOverhead.toBytes() < 0) {
                throw new IllegalArgumentException(
                        "readygate.memory.daemon-overhead must not be negative (was " + daemonOverhead + ")");
            }
            if (!(kvShrinkFraction > 0 && kvShrinkFraction < 1)) {
                throw new IllegalArgumentException(
                        "readygate.memory.kv-shrink-fraction must be between 0 and 1 (was " + kvShrinkFraction + ")");
            }
        }
    }

    /**
     * readygate's own HTTP server ({@code /readyz}, {@code /livez}, {@code /status}, the metrics), so that no client
     * can make it unanswerable: idle connections are closed, and at the cap the least recently active connection
     * makes room for a new one, so the kubelet's probes are answered through a flood of idle sockets. The listen
     * address is Spring Boot's {@code server.address} (all interfaces by default: in a pod, its IP and loopback).
     *
     * @param idleTimeout how long a connection may stay open without a request before it is closed (overrides Spring
     *     Boot's {@code server.netty.idle-timeout})
     * @param maxConnections the most connections held open at once; a new one beyond it closes the least recently
     *     active other one without a request waiting for its answer (a connection whose request waits is never
     *     closed, nor one accepted in the last second that has not sent its first request yet), and at the cap
     *     answers close their connection instead of keeping it alive
     * @param maxHeavyRequests the most requests to {@code /status} (the page, the JSON, its exports) answered at once,
     *     and apart from them the most {@code /actuator/prometheus} scrapes; one more is answered 503 with
     *     {@code Retry-After}, half a second after it came, so that pollers never hold up the kubelet's probes, which
     *     have no such limit
     * @param schedulerSlice the time slice readygate's server loops and the gateway's ask Linux's scheduler for, so
     *     that a probe or a client's request is taken up at once even when another thread has the core (Linux 6.12 or
     *     later; {@code 0}: the kernel's default, 1.4 ms on two cores; {@link dev.readygate.server.SchedulerSlice})
     */
    public record Server(
            @DefaultValue("60s") Duration idleTimeout,
            @DefaultValue("256") int maxConnections,
            @DefaultValue("2") int maxHeavyRequests,
            @DefaultValue("100us") Duration schedulerSlice) {

        public Server {
            requirePositive("readygate.server.idle-timeout", idleTimeout);
            requireAtLeast("readygate.server.max-connections", maxConnections, 8);
            requireAtLeast("readygate.server.max-heavy-requests", maxHeavyRequests, 1);
            if (!schedulerSlice.isZero()
                    && (schedulerSlice.toNanos() < 100_000 || schedulerSlice.compareTo(Duration.ofMillis(100)) > 0)) {
                throw new IllegalArgumentException("readygate.server.scheduler-slice must be 0 (the kernel's default)"
                        + " or from 100us to 100ms, the kernel's bounds (was " + schedulerSlice + ")");
            }
        }
    }

    /**
     * {@code readygate check}: runs every probe once against a live engine and says whether readygate would gate it
     * correctly (docs/engines.md).
     *
     * @param waitForEngine how long it waits for the engine to answer {@code /health} 200 and list its model (an
     *     engine that is still starting), before it gives up
     */
    public record Check(@DefaultValue("60s") Duration waitForEngine) {

        public Check {
            if (waitForEngine.isNegative()) {
                throw new IllegalArgumentException(
                        "readygate.check.wait-for-engine must not be negative (was " + waitForEngine + ")");
            }
        }
    }

    /**
     * Gateway mode (docs/routing.md, "Gateway mode"): readygate proxies the engine's OpenAI-compatible routes on a
     * traffic port of its own, with its own event loops and connection budget, apart from readygate's port (the probes,
     * {@code /status}, the metrics). Off by default: then nothing listens on {@code port}.
     *
     * @param enabled whether the traffic port is opened
     * @param port the traffic port, where clients send their requests (0: any free port, for tests)
     * @param maxRequestSize the largest request body forwarded; a larger one is answered 413
     * @param connectTimeout how long a connection to the engine may take; beyond it the client gets 504
     * @param firstByteTimeout how long the engine may take to send the first byte of its answer's body (a non-streamed
     *     completion's whole body); beyond it the client gets 504, as nothing was sent yet
     * @param betweenEventsTimeout how long the engine may send nothing once its answer began; beyond it the stream is cut
     *     (the client saw a status already)
     * @param maxConnections the most client connections the traffic port holds at once; one more is closed at once
     * @param maxInFlight the most requests forwarded to the engine at once; one more waits in the queue for a free one,
     *     and with the queue full is answered 429 with {@code Retry-After}
     * @param maxQueued the most requests waiting at once (for a free stream, through a short start with {@code hold},
     *     or to be sent once more); one more is answered at once
     * @param maxWait the longest a request waits in the queue; then it is answered 429 (the engine serves, every stream
     *     is taken) or 503 with {@code Retry-After}
     * @param hold whether a request that arrives during a start expected to be short (a preload hit, a snapshot
     *     restore) and verified within {@code maxWait} waits for it instead of being refused
     * @param retryBeforeFirstByte whether a request whose connection to the engine failed before any byte of an answer
     *     (refused, closed: the engine went away) waits for the engine's next verified start and is sent once more,
     *     never after a byte reached the client
     * @param drainTimeout on SIGTERM, how long requests in flight may run to completion while new ones are refused
     *     (503, {@code Connection: close}); what remains then is cut and counted. Shorter than the pod's grace period,
     *     the engine's preStop and {@code spring.lifecycle.timeout-per-shutdown-phase}
     */
    public record Gateway(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("8000") int port,
            @DefaultValue("16MB") DataSize maxRequestSize,
            @DefaultValue("2s") Duration connectTimeout,
            @DefaultValue("60s") Duration firstByteTimeout,
            @DefaultValue("30s") Duration betweenEventsTimeout,
            @DefaultValue("1024") int maxConnections,
            @DefaultValue("512") int maxInFlight,
            @DefaultValue("256") int maxQueued,
            @DefaultValue("30s") Duration maxWait,
            @DefaultValue("false") boolean hold,
            @DefaultValue("false") boolean retryBeforeFirstByte,
            @DefaultValue("8s") Duration drainTimeout) {

        public Gateway {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(
                        "readygate.gateway.port must be a TCP port, 0 to 65535 (was " + port + ")");
            }
            requirePositiveSize("readygate.gateway.max-request-size", maxRequestSize);
            requirePositive("readygate.gateway.connect-timeout", connectTimeout);
            requirePositive("readygate.gateway.first-byte-timeout", firstByteTimeout);
            requirePositive("readygate.gateway.between-events-timeout", betweenEventsTimeout);
            requireAtLeast("readygate.gateway.max-connections", maxConnections, 1);
            requireAtLeast("readygate.gateway.max-in-flight", maxInFlight, 1);
            requireAtLeast("readygate.gateway.max-queued", maxQueued, 0);
            requirePositive("readygate.gateway.max-wait", maxWait);
            requirePositive("readygate.gateway.drain-timeout", drainTimeout);
        }
    }

    private static boolean isHttpUrl(URI url) {
        return url.getHost() != null && ("http".equals(url.getScheme()) || "https".equals(url.getScheme()));
    }

    /**
     * A file readygate reads, which may appear later: one that exists must not be a directory. Said when the settings
     * are bound, not when the file is first read.
     */
    static void requireFileOrAbsent(String key, @Nullable Path file) {
        if (file != null && java.nio.file.Files.isDirectory(file)) {
            throw new IllegalArgumentException(key + " must name a file, and names a directory (was " + file + ")");
        }
    }

    /** A directory readygate reads or writes, which may appear later: what exists there must be a directory. */
    static void requireDirectoryOrAbsent(String key, @Nullable Path directory) {
        if (directory != null && java.nio.file.Files.exists(directory) && !java.nio.file.Files.isDirectory(directory)) {
            throw new IllegalArgumentException(
                    key + " must name a directory, and names a file (was " + directory + ")");
        }
    }

    static void requirePositiveSize(String key, DataSize size) {
        if (size.toBytes() <= 0) {
            throw new IllegalArgumentException(key + " must be positive (was " + size + ")");
        }
    }

    static void requireAtLeast(String key, int value, int minimum) {
        if (value < minimum) {
            throw new IllegalArgumentException(key + " must be at least " + minimum + " (was " + value + ")");
        }
    }
}
