package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** {@link PrometheusText} on expositions shaped like vLLM's, and on text that is not one. */
class PrometheusTextTests {

    static final String VLLM = """
            # HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
            # TYPE process_start_time_seconds gauge
            process_start_time_seconds 1.7599e+09
            # HELP vllm:num_requests_running Number of requests in model execution batches.
            # TYPE vllm:num_requests_running gauge
            vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-0.6B"} 2.0
            vllm:num_requests_running{engine="1",model_name="Qwen/Qwen3-0.6B"} 1.0
            vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-0.6B"} 0.0
            vllm:cache_config_info{block_size="16",engine="0",kv_cache_size_tokens="65536",note="a \\"quoted\\", \\\\ back\\nslash"} 1.0
            vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 1200.0
            vllm:prompt_tokens_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7599e+09
            vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 96.0 1759900000000
            vllm:request_success_total{engine="0",finished_reason="stop",model_name="Qwen/Qwen3-0.6B"} 3.0
            vllm:request_success_total{engine="0",finished_reason="length",model_name="Qwen/Qwen3-0.6B"} 4.0
            vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="Qwen/Qwen3-0.6B"} 7.0
            vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-0.6B"} NaN
            """;

    /** llama-server's /metrics (--metrics) with one slot busy on a long request and one request deferred. */
    static final String LLAMA_BUSY = """
            # HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
            # TYPE llamacpp:prompt_tokens_total counter
            llamacpp:prompt_tokens_total 2
            # HELP llamacpp:tokens_predicted_total Number of generation tokens processed.
            # TYPE llamacpp:tokens_predicted_total counter
            llamacpp:tokens_predicted_total 0
            # HELP llamacpp:n_decode_total Total number of llama_decode() calls
            # TYPE llamacpp:n_decode_total counter
            llamacpp:n_decode_total 489
            # HELP llamacpp:kv_cache_tokens KV-cache tokens.
            # TYPE llamacpp:kv_cache_tokens gauge
            llamacpp:kv_cache_tokens 337
            # HELP llamacpp:requests_processing Number of requests processing.
            # TYPE llamacpp:requests_processing gauge
            llamacpp:requests_processing 1
            # HELP llamacpp:requests_deferred Number of requests deferred.
            # TYPE llamacpp:requests_deferred gauge
            llamacpp:requests_deferred 1
            """;

    @Test
    void llamaServersDecodeStepsAreReadBesideItsTokenCounters() {
        EngineMetricsSample sample = PrometheusText.parse(LLAMA_BUSY);

        assertThat(sample.decodeSteps()).isEqualTo(489.0);
        assertThat(sample.generationTokens()).isEqualTo(0.0);
        assertThat(sample.requestsRunning()).isEqualTo(1.0);
        assertThat(sample.requestsWaiting()).isEqualTo(1.0);
        assertThat(PrometheusText.parse(VLLM).decodeSteps()).isNull();
    }

    @Test
    void llamaServersRatesOverNoTimeYetAreReadAsPrometheusReadsThem() {
        // llama-server writes its rates with C++ streams: before the first generation they are nan, -nan or inf,
        // which Prometheus (Go's ParseFloat) reads; they cost readygate all its /metrics evidence before.
        String text = LLAMA_BUSY + """
                # HELP llamacpp:prompt_tokens_seconds Average prompt throughput in tokens/s.
                # TYPE llamacpp:prompt_tokens_seconds gauge
                llamacpp:prompt_tokens_seconds inf
                # HELP llamacpp:predicted_tokens_seconds Average generation throughput in tokens/s.
                # TYPE llamacpp:predicted_tokens_seconds gauge
                llamacpp:predicted_tokens_seconds -nan
                # HELP llamacpp:n_busy_slots_per_decode Average number of busy slots per llama_decode() call
                # TYPE llamacpp:n_busy_slots_per_decode gauge
                llamacpp:n_busy_slots_per_decode nan
                llamacpp:other_rate -Infinity
                """;
        EngineMetricsSample sample = PrometheusText.parse(text);

        assertThat(sample.decodeSteps()).isEqualTo(489.0);
        assertThat(sample.requestsWaiting()).isEqualTo(1.0);
    }

    @Test
    void parseWhenASeriesHasSeveralLabelSetsSumsThem() {
        EngineMetricsSample sample = PrometheusText.parse(VLLM);

        assertThat(sample.processStartTimeSeconds()).isEqualTo(1.7599e9);
        assertThat(sample.requestsRunning()).isEqualTo(3.0);
        assertThat(sample.requestsWaiting()).isZero();
        assertThat(sample.promptTokens()).isEqualTo(1200.0);
        assertThat(sample.generationTokens()).isEqualTo(96.0);
        assertThat(sample.requestSuccess()).isEqualTo(7.0);
    }

    @Test
    void parseReadsVllmsPreemptionsSummedOverItsEngineCores() {
        EngineMetricsSample sample = PrometheusText.parse("""
                # HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
                # TYPE vllm:num_preemptions_total counter
                vllm:num_preemptions_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 2.0
                vllm:num_preemptions_total{engine="1",model_name="Qwen/Qwen3-0.6B"} 3.0
                """);

        assertThat(sample.preemptions()).isEqualTo(5.0);
        assertThat(PrometheusText.parse("up 1\n").preemptions()).isNull();
    }

    @Test
    void parseWhenCacheConfigLabelsHaveEscapesUnescapesThem() {
        EngineMetricsSample sample = PrometheusText.parse(VLLM);

        assertThat(sample.kvCacheSizeTokens()).isEqualTo(65536L);
        assertThat(sample.cacheConfig())
                .containsEntry("block_size", "16")
                .containsEntry("engine", "0")
                .containsEntry("note", "a \"quoted\", \\ back\nslash");
    }

    @Test
    void parseWhenSeriesAreAbsentReturnsNullForThem() {
        EngineMetricsSample sample = PrometheusText.parse("# only comments\r\n\r\nup 1\r\n");

        assertThat(sample)
                .isEqualTo(new EngineMetricsSample(
                        null, null, null, null, null, null, Map.of(), java.util.Set.of(), null, null));
        assertThat(sample.kvCacheSizeTokens()).isNull();
    }

    @Test
    void parseWhenALineIsNotASampleThrowsMalformedBodyNamingTheLineOnly() {
        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> PrometheusText.parse("up 1\n<html><body>secret</body></html>\n"))
                .satisfies(ex -> {
                    assertThat(ex.failure().kind()).isEqualTo(EngineFailure.Kind.MALFORMED_BODY);
                    assertThat(ex.failure().detail())
                            .isEqualTo("/metrics line 2 does not start with a metric name (not Prometheus text)");
                });
    }

    @Test
    void parseWhenALabelValueIsUnterminatedThrowsMalformedBody() {
        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> PrometheusText.parse("vllm:cache_config_info{engine=\"0} 1\n"))
                .satisfies(ex -> assertThat(ex.failure().detail()).contains("line 1"));
    }

    @Test
    void parseWhenAValueIsNotANumberThrowsMalformedBody() {
        assertThatExceptionOfType(EngineCallException.class)
                .isThrownBy(() -> PrometheusText.parse("vllm:num_requests_running{engine=\"0\"} many\n"))
                .satisfies(ex -> assertThat(ex.failure().detail()).contains("not a number"));
    }

    static String resource(String name) {
        try (InputStream in = PrometheusTextTests.class.getResourceAsStream(name)) {
            return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Test
    void parseWhenDataParallelInMultiprocessModeSumsTheEngineCoresAndKeepsTheSmallestKvCache() {
        EngineMetricsSample sample =
                PrometheusText.parse(resource("/vllm-metrics/v0.31-data-parallel-multiprocess.txt"));

        // Multiprocess mode has no process collector: restarts are not told by a start time.
        assertThat(sample.processStartTimeSeconds()).isNull();
        assertThat(sample.requestsRunning()).isEqualTo(6.0);
        assertThat(sample.requestsWaiting()).isEqualTo(1.0);
        assertThat(sample.promptTokens()).isEqualTo(102_400.0);
        assertThat(sample.generationTokens()).isEqualTo(12_800.0);
        assertThat(sample.requestSuccess()).isEqualTo(200.0);
        // What one request can use, and what shrinks first: the smallest engine core's KV cache.
        assertThat(sample.kvCacheSizeTokens()).isEqualTo(868_352L);
        assertThat(sample.cacheConfig()).containsEntry("engine", "2");
    }

    @Test
    void parseWhenCacheConfigHasOnlyBlocksReadsTheKvCacheSizeAsBlocksTimesBlockSize() {
        // vLLM before 0.29 has no kv_cache_size_tokens label: 2340 blocks of 16 tokens.
        EngineMetricsSample sample = PrometheusText.parse(resource("/vllm-metrics/v0.10-cache-config-blocks.txt"));

        assertThat(sample.kvCacheSizeTokens()).isEqualTo(37_440L);
    }

    @Test
    void parseWhenEngineCoresHaveOnlyBlocksKeepsTheSmallestKvCache() {
        EngineMetricsSample sample = PrometheusText.parse("""
                vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="10000"} 1.0
                vllm:cache_config_info{block_size="16",engine="1",num_gpu_blocks="9271"} 1.0
                vllm:cache_config_info{block_size="16",engine="2",num_gpu_blocks="None"} 1.0
                """);

        assertThat(sample.kvCacheSizeTokens()).isEqualTo(148_336L);
        assertThat(sample.cacheConfig()).containsEntry("engine", "1");
    }

    @Test
    void kvCacheSizeTokensWhenBlocksAreNotKnownYetIsNull() {
        assertThat(EngineMetricsSample.kvCacheSizeTokens(Map.of("block_size", "16", "num_gpu_blocks", "None")))
                .isNull();
        assertThat(EngineMetricsSample.kvCacheSizeTokens(Map.of("block_size", "16")))
                .isNull();
    }

    @Test
    void parseReadsVllmsSleepStateTheDeepestOverEngineCores() {
        // vllm/v1/metrics/loggers.py: one series per sleep_state, the current one at 1 (issue 29).
        String awake = """
                # TYPE vllm:engine_sleep_state gauge
                vllm:engine_sleep_state{engine="0",model_name="Qwen/Qwen3-0.6B",sleep_state="awake"} 1.0
                vllm:engine_sleep_state{engine="0",model_name="Qwen/Qwen3-0.6B",sleep_state="weights_offloaded"} 0.0
                vllm:engine_sleep_state{engine="0",model_name="Qwen/Qwen3-0.6B",sleep_state="discard_all"} 0.0
                """;
        String levelOne = awake.replace("sleep_state=\"awake\"} 1.0", "sleep_state=\"awake\"} 0.0")
                .replace("sleep_state=\"weights_offloaded\"} 0.0", "sleep_state=\"weights_offloaded\"} 1.0");
        String twoCores = levelOne + """
                vllm:engine_sleep_state{engine="1",model_name="Qwen/Qwen3-0.6B",sleep_state="awake"} 0.0
                vllm:engine_sleep_state{engine="1",model_name="Qwen/Qwen3-0.6B",sleep_state="discard_all"} 1.0
                """;

        assertThat(PrometheusText.parse(awake).sleepLevel()).isZero();
        assertThat(PrometheusText.parse(levelOne).sleepLevel()).isEqualTo(1);
        assertThat(PrometheusText.parse(twoCores).sleepLevel()).isEqualTo(2);
        assertThat(PrometheusText.parse(resource("/vllm-metrics/v0.10-cache-config-blocks.txt"))
                        .sleepLevel())
                .isNull();
    }
}
