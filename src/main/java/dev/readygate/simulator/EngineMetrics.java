package dev.readygate.simulator;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's {@code /metrics}: the {@code vllm:} series of vLLM 0.31 (V1 engine) plus the process collector's
 * {@code process_start_time_seconds}, rendered in Prometheus text format as {@code prometheus_client} does
 * (counters as {@code _total} with {@code _created}, histograms with cumulative {@code le} buckets, numbers as its
 * {@code floatToGoString} writes them, e.g. {@code 1.759672931123e+09}, with {@code formats: v0-31}). A fresh
 * instance is made on every engine start, so counters start at zero, except after a snapshot restore.
 *
 * <p>With data parallel, every series has one {@code engine="N"} label set per engine core (the simulator counts every
 * request under engine 0; the others stay at zero), and with more than one API server {@code /metrics} is served as
 * Prometheus multiprocess mode serves it: no process collector ({@code process_start_time_seconds}) and no {@code
 * _created} samples.
 */
final class EngineMetrics {

    private static final double[] LATENCY_BUCKETS = {
        0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
        160.0, 640.0, 2560.0
    };
    private static final double[] ITL_BUCKETS = {
        0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0
    };
    private static final double[] REQUEST_LATENCY_BUCKETS = {
        0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
        1920.0, 7680.0
    };
    private static final double[] TOKEN_BUCKETS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
    private static final double[] N_BUCKETS = {1, 2, 5, 10, 20};

    private final String modelName;
    private final double startTimeSeconds;
    private final SimulatorProperties.Model model;
    private final SimulatorProperties.Deployment deployment;
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger waiting = new AtomicInteger();
    final AtomicInteger tokensInFlight = new AtomicInteger();
    /** Sleep mode's level: 0 awake, 1 or 2 while asleep (a partial wake keeps the level). */
    volatile int sleepLevel;

    private final int kvCacheSizeTokens;
    private final LongAdder promptTokens = new LongAdder();
    private final LongAdder generationTokens = new LongAdder();
    private final LongAdder prefixQueries = new LongAdder();
    private final LongAdder prefixHits = new LongAdder();
    private final LongAdder preemptions = new LongAdder();
    private final Map<String, LongAdder> success = new ConcurrentHashMap<>();
    private final Histogram ttft = new Histogram(LATENCY_BUCKETS);
    private final Histogram itl = new Histogram(ITL_BUCKETS);
    private final Histogram e2e = new Histogram(REQUEST_LATENCY_BUCKETS);
    private final Histogram queue = new Histogram(REQUEST_LATENCY_BUCKETS);
    private final Histogram inference = new Histogram(REQUEST_LATENCY_BUCKETS);
    private final Histogram prefill = new Histogram(REQUEST_LATENCY_BUCKETS);
    private final Histogram decode = new Histogram(REQUEST_LATENCY_BUCKETS);
    private final Histogram requestPromptTokens = new Histogram(TOKEN_BUCKETS);
    private final Histogram requestGenerationTokens = new Histogram(TOKEN_BUCKETS);
    private final Histogram maxTokensParam = new Histogram(TOKEN_BUCKETS);
    private final Histogram nParam = new Histogram(N_BUCKETS);
    private final Histogram iterationTokens = new Histogram(TOKEN_BUCKETS);

    EngineMetrics(
            String modelName,
            double startTimeSeconds,
            SimulatorProperties.Model model,
            int kvTokens,
            SimulatorProperties.Deployment deployment) {
        this.modelName = modelName;
        this.startTimeSeconds = startTimeSeconds;
        this.kvCacheSizeTokens = kvTokens;
        this.model = model;
        this.deployment = deployment;
    }

    private String cacheConfigLabels(int engine) {
        int blockSize = 16;
        return String.format(
                Locale.ROOT,
                "block_size=\"%d\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"%d\","
                        + "gpu_memory_utilization=\"0.9\",kv_cache_max_concurrency=\"%.2f\","
                        + "kv_cache_size_tokens=\"%d\",num_gpu_blocks=\"%d\"",
                blockSize,
                engine,
                (double) kvCacheSizeTokens / model.maxModelLen(),
                kvCacheSizeTokens,
                kvCacheSizeTokens / blockSize);
    }

    /** More than one API server: {@code /metrics} comes from Prometheus multiprocess mode. */
    private boolean multiprocess() {
        return deployment.apiServers() > 1;
    }

    /** A request entered the engine. */
    void requestStarted(int promptTokenCount, int cachedTokens, int maxTokens) {
        running.incrementAndGet();
        tokensInFlight.addAndGet(promptTokenCount + maxTokens);
        prefixQueries.add(promptTokenCount);
        prefixHits.add(cachedTokens);
        maxTokensParam.observe(maxTokens);
        nParam.observe(1);
    }

    void prefillDone(int promptTokenCount, double ttftSeconds) {
        promptTokens.add(promptTokenCount);
        iterationTokens.observe(promptTokenCount);
        ttft.observe(ttftSeconds);
    }

    void tokenGenerated(double interTokenSeconds) {
        generationTokens.increment();
        iterationTokens.observe(1);
        if (interTokenSeconds >= 0) {
            itl.observe(interTokenSeconds);
        }
    }

    /** A request left the engine; {@code finishReason} null when it was aborted (client went away, error). */
    void requestFinished(
            int promptTokenCount,
            int maxTokens,
            int generated,
            String finishReason,
            double e2eSeconds,
            double prefillSeconds) {
        running.decrementAndGet();
        tokensInFlight.addAndGet(-(promptTokenCount + maxTokens));
        if (finishReason == null) {
            return;
        }
        success.computeIfAbsent(finishReason, reason -> new LongAdder()).increment();
        e2e.observe(e2eSeconds);
        queue.observe(0.0);
        inference.observe(e2eSeconds);
        prefill.observe(prefillSeconds);
        decode.observe(Math.max(0, e2eSeconds - prefillSeconds));
        requestPromptTokens.observe(promptTokenCount);
        requestGenerationTokens.observe(generated);
    }

    /** Counts requests the engine served before the first scrape (the snapshot canaries). */
    void preloadServedRequests(int count) {
        for (int i = 0; i < count; i++) {
            requestStarted(5, 0, 1);
            prefillDone(5, 0.01);
            tokenGenerated(-1);
            requestFinished(5, 1, 1, "length", 0.012, 0.01);
        }
    }

    long generationTokens() {
        return generationTokens.sum();
    }

    /**
     * SGLang's exposition of the same engine ({@code --enable-metrics}): the series SGLang's production metrics
     * document (docs/references/production_metrics.md, python/sglang/srt/metrics/collector.py), labelled {@code
     * model_name}; multiprocess only, so no {@code process_start_time_seconds}.
     */
    String renderSglang() {
        StringBuilder out = new StringBuilder(2_048);
        String model = "model_name=\"" + escape(modelName) + "\"";
        double usage = Math.min(1.0, (double) Math.max(0, tokensInFlight.get()) / kvCacheSizeTokens);
        header(out, "sglang:prompt_tokens_total", "Number of prefill tokens processed.", "counter");
        sample(out, "sglang:prompt_tokens_total", model, promptTokens.sum());
        header(out, "sglang:generation_tokens_total", "Number of generation tokens processed.", "counter");
        sample(out, "sglang:generation_tokens_total", model, generationTokens.sum());
        header(out, "sglang:num_running_reqs", "The number of running requests.", "gauge");
        sample(out, "sglang:num_running_reqs", model, running.get());
        header(out, "sglang:num_queue_reqs", "The number of requests in the waiting queue.", "gauge");
        sample(out, "sglang:num_queue_reqs", model, waiting.get());
        header(out, "sglang:token_usage", "The token usage.", "gauge");
        sample(out, "sglang:token_usage", model, usage);
        return out.toString();
    }

    String render() {
        StringBuilder out = new StringBuilder(16_384);
        String model = "model_name=\"" + escape(modelName) + "\"";
        int engines = deployment.dataParallelSize();
        if (!multiprocess()) {
            header(out, "python_info", "Python platform information", "gauge");
            sample(
                    out,
                    "python_info",
                    "implementation=\"CPython\",major=\"3\",minor=\"12\",patchlevel=\"3\",version=\"3.12.3\"",
                    1);
            header(
                    out,
                    "process_start_time_seconds",
                    "Start time of the process since unix epoch in seconds.",
                    "gauge");
            sample(out, "process_start_time_seconds", "", startTimeSeconds);
            header(out, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge");
            sample(out, "process_resident_memory_bytes", "", 2.1e9);
        }
        double usage = Math.min(1.0, (double) Math.max(0, tokensInFlight.get()) / kvCacheSizeTokens);
        gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.", model, running.get());
        gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", model, waiting.get());
        if (deployment.formats() == SimulatorProperties.Deployment.Formats.V0_31) {
            sleepState(out, model);
        }
        gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", model, usage);
        header(out, "vllm:cache_config_info", "Information of the LLMEngine CacheConfig", "gauge");
        for (int engine = 0; engine < engines; engine++) {
            sample(out, "vllm:cache_config_info", cacheConfigLabels(engine), 1);
        }
        counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", model, preemptions);
        counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", model, promptTokens);
        counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", model, generationTokens);
        counter(
                out,
                "vllm:prefix_cache_queries",
                "Prefix cache queries, in terms of number of queried tokens.",
                model,
                prefixQueries);
        counter(
                out,
                "vllm:prefix_cache_hits",
                "Prefix cache hits, in terms of number of cached tokens.",
                model,
                prefixHits);
        header(out, "vllm:request_success", "Count of successfully processed requests.", "counter");
        for (int engine = 0; engine < engines; engine++) {
            for (String reason : new String[] {"stop", "length", "abort", "error"}) {
                LongAdder count = success.get(reason);
                sample(
                        out,
                        "vllm:request_success_total",
                        engine(engine, model) + ",finished_reason=\"" + reason + "\"",
                        engine == 0 && count != null ? count.sum() : 0);
            }
        }
        histogram(
                out,
                "vllm:iteration_tokens_total",
                "Histogram of number of tokens per engine_step.",
                model,
                iterationTokens);
        histogram(out, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", model, requestPromptTokens);
        histogram(
                out,
                "vllm:request_generation_tokens",
                "Number of generation tokens processed.",
                model,
                requestGenerationTokens);
        histogram(out, "vllm:request_params_n", "Histogram of the n request parameter.", model, nParam);
        histogram(
                out,
                "vllm:request_params_max_tokens",
                "Histogram of the max_tokens request parameter.",
                model,
                maxTokensParam);
        histogram(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", model, ttft);
        histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", model, itl);
        histogram(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", model, e2e);
        histogram(
                out,
                "vllm:request_queue_time_seconds",
                "Histogram of time spent in WAITING phase for request.",
                model,
                queue);
        histogram(
                out,
                "vllm:request_inference_time_seconds",
                "Histogram of time spent in RUNNING phase for request.",
                model,
                inference);
        histogram(
                out,
                "vllm:request_prefill_time_seconds",
                "Histogram of time spent in PREFILL phase for request.",
                model,
                prefill);
        histogram(
                out,
                "vllm:request_decode_time_seconds",
                "Histogram of time spent in DECODE phase for request.",
                model,
                decode);
        return out.toString();
    }

    /**
     * vLLM's {@code vllm:engine_sleep_state} (v1/metrics/loggers.py, PrometheusStatLogger: registered whether or not
     * sleep mode is on, {@code awake} at 1 by default): one series per state, the current one at 1.
     */
    private void sleepState(StringBuilder out, String model) {
        header(
                out,
                "vllm:engine_sleep_state",
                "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake;"
                        + " weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
                "gauge");
        int level = sleepLevel;
        String[] states = {"awake", "weights_offloaded", "discard_all"};
        for (int i = 0; i < states.length; i++) {
            for (int engine = 0; engine < deployment.dataParallelSize(); engine++) {
                sample(
                        out,
                        "vllm:engine_sleep_state",
                        engine(engine, model) + ",sleep_state=\"" + states[i] + "\"",
                        level == i ? 1 : 0);
            }
        }
    }

    private static String engine(int engine, String model) {
        return "engine=\"" + engine + "\"," + model;
    }

    /** One sample per engine core: engine 0 carries the value, the others zero. */
    private void gauge(StringBuilder out, String name, String help, String model, double value) {
        header(out, name, help, "gauge");
        for (int engine = 0; engine < deployment.dataParallelSize(); engine++) {
            sample(out, name, engine(engine, model), engine == 0 ? value : 0);
        }
    }

    private void counter(StringBuilder out, String name, String help, String model, LongAdder value) {
        header(out, name, help, "counter");
        for (int engine = 0; engine < deployment.dataParallelSize(); engine++) {
            String labels = engine(engine, model);
            sample(out, name + "_total", labels, engine == 0 ? value.sum() : 0);
            if (!multiprocess()) {
                sample(out, name + "_created", labels, startTimeSeconds);
            }
        }
    }

    private void histogram(StringBuilder out, String name, String help, String model, Histogram histogram) {
        header(out, name, help, "histogram");
        long[] counts = histogram.snapshot();
        for (int engine = 0; engine < deployment.dataParallelSize(); engine++) {
            boolean counted = engine == 0;
            String labels = engine(engine, model);
            long cumulative = 0;
            for (int i = 0; i < histogram.bounds.length; i++) {
                cumulative += counted ? counts[i] : 0;
                sample(out, name + "_bucket", labels + ",le=\"" + format(histogram.bounds[i]) + "\"", cumulative);
            }
            cumulative += counted ? counts[histogram.bounds.length] : 0;
            sample(out, name + "_bucket", labels + ",le=\"+Inf\"", cumulative);
            sample(out, name + "_count", labels, cumulative);
            sample(out, name + "_sum", labels, counted ? histogram.sum.sum() : 0);
            if (!multiprocess()) {
                sample(out, name + "_created", labels, startTimeSeconds);
            }
        }
    }

    private static void header(StringBuilder out, String name, String help, String type) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private void sample(StringBuilder out, String name, String labels, double value) {
        out.append(name);
        if (!labels.isEmpty()) {
            out.append('{').append(labels).append('}');
        }
        String number =
                deployment.formats() == SimulatorProperties.Deployment.Formats.V0_31 ? goFloat(value) : format(value);
        out.append(' ').append(number).append('\n');
    }

    /** The simulator's older number format: {@code 3.0}, else Java's shortest form ({@code 1.7599E9}). */
    private static String format(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return String.format(Locale.ROOT, "%.1f", value);
        }
        return Double.toString(value);
    }

    /**
     * A sample value as {@code prometheus_client}'s {@code floatToGoString} writes it: Python's {@code repr}, switched
     * to an exponent sooner, as Go does, for positive numbers with more than six digits before the point ({@code
     * 1.759672931123e+09}).
     */
    static String goFloat(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "+Inf" : "-Inf";
        }
        String repr = pythonRepr(value);
        int dot = repr.indexOf('.');
        if (value > 0 && dot > 6) {
            String digits = repr.charAt(0) + "." + repr.substring(1, dot) + repr.substring(dot + 1);
            String mantissa = digits.replaceAll("[0.]+$", "");
            return mantissa + "e+0" + (dot - 1);
        }
        return repr;
    }

    /** Python's {@code repr(float)}: the shortest digits that read back, plain between 1e-4 and 1e16. */
    static String pythonRepr(double value) {
        if (value == 0) {
            return 1 / value < 0 ? "-0.0" : "0.0";
        }
        BigDecimal shortest = new BigDecimal(Double.toString(value)).stripTrailingZeros();
        int exponent = shortest.precision() - shortest.scale() - 1;
        if (exponent >= -4 && exponent < 16) {
            String plain = shortest.toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }
        String digits = shortest.unscaledValue().abs().toString();
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return (value < 0 ? "-" : "")
                + mantissa
                + (exponent < 0 ? "e-" : "e+")
                + String.format(Locale.ROOT, "%02d", Math.abs(exponent));
    }

    private static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** A Prometheus histogram: per-bucket counts (not cumulative) plus the sum. */
    private static final class Histogram {
        private final double[] bounds;
        private final LongAdder[] counts;
        private final DoubleAdder sum = new DoubleAdder();

        Histogram(double[] bounds) {
            this.bounds = bounds;
            this.counts = new LongAdder[bounds.length + 1];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = new LongAdder();
            }
        }

        void observe(double value) {
            int i = 0;
            while (i < bounds.length && value > bounds[i]) {
                i++;
            }
            counts[i].increment();
            sum.add(value);
        }

        long[] snapshot() {
            long[] out = new long[counts.length];
            for (int i = 0; i < counts.length; i++) {
                out[i] = counts[i].sum();
            }
            return out;
        }
    }
}
