package dev.readygate.simulator;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's {@code /metrics}: the {@code vllm:} series of vLLM 0.31 (V1 engine) plus the process collector's
 * {@code process_start_time_seconds}, rendered in Prometheus text format as {@code prometheus_client} does
 * (counters as {@code _total} with {@code _created}, histograms with cumulative {@code le} buckets). A fresh
 * instance is made on every engine start, so counters start at zero, except after a snapshot restore.
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
    private final String cacheConfigLabels;
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger waiting = new AtomicInteger();
    final AtomicInteger tokensInFlight = new AtomicInteger();
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

    EngineMetrics(String modelName, double startTimeSeconds, SimulatorProperties.Model model, int kvTokens) {
        this.modelName = modelName;
        this.startTimeSeconds = startTimeSeconds;
        this.kvCacheSizeTokens = kvTokens;
        int blockSize = 16;
        this.cacheConfigLabels = "block_size=\"%d\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"0\","
                        .formatted(blockSize)
                + "gpu_memory_utilization=\"0.9\",kv_cache_max_concurrency=\"%.2f\",kv_cache_size_tokens=\"%d\","
                        .formatted((double) kvTokens / model.maxModelLen(), kvTokens)
                + "num_gpu_blocks=\"%d\"".formatted(kvTokens / blockSize);
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

    String render() {
        StringBuilder out = new StringBuilder(16_384);
        String model = "model_name=\"" + escape(modelName) + "\"";
        String engine = "engine=\"0\"," + model;
        gauge(
                out,
                "python_info",
                "Python platform information",
                "implementation=\"CPython\",major=\"3\",minor=\"12\"," + "patchlevel=\"3\",version=\"3.12.3\"",
                1);
        gauge(
                out,
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                "",
                startTimeSeconds);
        gauge(out, "process_resident_memory_bytes", "Resident memory size in bytes.", "", 2.1e9);
        gauge(
                out,
                "vllm:num_requests_running",
                "Number of requests in model execution batches.",
                engine,
                running.get());
        gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", engine, waiting.get());
        gauge(
                out,
                "vllm:kv_cache_usage_perc",
                "KV-cache usage. 1 means 100 percent usage.",
                engine,
                Math.min(1.0, (double) Math.max(0, tokensInFlight.get()) / kvCacheSizeTokens));
        gauge(out, "vllm:cache_config_info", "Information of the LLMEngine CacheConfig", cacheConfigLabels, 1);
        counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", engine, preemptions);
        counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", engine, promptTokens);
        counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", engine, generationTokens);
        counter(
                out,
                "vllm:prefix_cache_queries",
                "Prefix cache queries, in terms of number of queried tokens.",
                engine,
                prefixQueries);
        counter(
                out,
                "vllm:prefix_cache_hits",
                "Prefix cache hits, in terms of number of cached tokens.",
                engine,
                prefixHits);
        header(out, "vllm:request_success", "Count of successfully processed requests.", "counter");
        for (String reason : new String[] {"stop", "length", "abort", "error"}) {
            LongAdder count = success.get(reason);
            sample(
                    out,
                    "vllm:request_success_total",
                    engine + ",finished_reason=\"" + reason + "\"",
                    count == null ? 0 : count.sum());
        }
        histogram(
                out,
                "vllm:iteration_tokens_total",
                "Histogram of number of tokens per engine_step.",
                engine,
                iterationTokens);
        histogram(
                out, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", engine, requestPromptTokens);
        histogram(
                out,
                "vllm:request_generation_tokens",
                "Number of generation tokens processed.",
                engine,
                requestGenerationTokens);
        histogram(out, "vllm:request_params_n", "Histogram of the n request parameter.", engine, nParam);
        histogram(
                out,
                "vllm:request_params_max_tokens",
                "Histogram of the max_tokens request parameter.",
                engine,
                maxTokensParam);
        histogram(
                out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", engine, ttft);
        histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", engine, itl);
        histogram(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", engine, e2e);
        histogram(
                out,
                "vllm:request_queue_time_seconds",
                "Histogram of time spent in WAITING phase for request.",
                engine,
                queue);
        histogram(
                out,
                "vllm:request_inference_time_seconds",
                "Histogram of time spent in RUNNING phase for request.",
                engine,
                inference);
        histogram(
                out,
                "vllm:request_prefill_time_seconds",
                "Histogram of time spent in PREFILL phase for request.",
                engine,
                prefill);
        histogram(
                out,
                "vllm:request_decode_time_seconds",
                "Histogram of time spent in DECODE phase for request.",
                engine,
                decode);
        return out.toString();
    }

    private void gauge(StringBuilder out, String name, String help, String labels, double value) {
        header(out, name, help, "gauge");
        sample(out, name, labels, value);
    }

    private void counter(StringBuilder out, String name, String help, String labels, LongAdder value) {
        header(out, name, help, "counter");
        sample(out, name + "_total", labels, value.sum());
        sample(out, name + "_created", labels, startTimeSeconds);
    }

    private void histogram(StringBuilder out, String name, String help, String labels, Histogram histogram) {
        header(out, name, help, "histogram");
        long[] counts = histogram.snapshot();
        long cumulative = 0;
        for (int i = 0; i < histogram.bounds.length; i++) {
            cumulative += counts[i];
            sample(out, name + "_bucket", labels + ",le=\"" + format(histogram.bounds[i]) + "\"", cumulative);
        }
        cumulative += counts[histogram.bounds.length];
        sample(out, name + "_bucket", labels + ",le=\"+Inf\"", cumulative);
        sample(out, name + "_count", labels, cumulative);
        sample(out, name + "_sum", labels, histogram.sum.sum());
        sample(out, name + "_created", labels, startTimeSeconds);
    }

    private static void header(StringBuilder out, String name, String help, String type) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static void sample(StringBuilder out, String name, String labels, double value) {
        out.append(name);
        if (!labels.isEmpty()) {
            out.append('{').append(labels).append('}');
        }
        out.append(' ').append(format(value)).append('\n');
    }

    private static String format(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return String.format(Locale.ROOT, "%.1f", value);
        }
        return Double.toString(value);
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
