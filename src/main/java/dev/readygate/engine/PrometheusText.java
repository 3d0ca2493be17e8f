package dev.readygate.engine;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Reads the few series readygate uses from a Prometheus text exposition (version 0.0.4, as vLLM's
 * {@code prometheus_client} writes it, in multiprocess mode too), line by line: {@code #} lines are skipped, every
 * sample line must parse, samples of one name are summed over their label sets (the {@code engine="N"} series of
 * each engine core, the finish reasons); of several {@code vllm:cache_config_info} series (one per engine core), the
 * one with the smallest KV cache is kept. Each engine's own name for a series counts ({@code
 * vllm:num_requests_running}, llama.cpp's {@code llamacpp:requests_processing}, ...; docs/engines.md), and the
 * families of names seen are kept, so {@code /status} can say what the engine's metrics can and cannot show.
 */
final class PrometheusText {

    static final String PROCESS_START = "process_start_time_seconds";
    static final String CACHE_CONFIG = "vllm:cache_config_info";
    static final String SLEEP_STATE = "vllm:engine_sleep_state";

    /** vLLM's {@code sleep_state} label values, by sleep level (vllm/v1/metrics/loggers.py). */
    private static final Map<String, Integer> SLEEP_LEVELS =
            Map.of("awake", 0, "weights_offloaded", 1, "discard_all", 2);

    /** The series readygate uses, whatever the engine calls them. */
    private enum Series {
        PROCESS_START,
        RUNNING,
        WAITING,
        GENERATION_TOKENS,
        PROMPT_TOKENS,
        REQUEST_SUCCESS,
        DECODE_STEPS,
        PREEMPTIONS
    }

    private static final Map<String, Series> NAMES = Map.ofEntries(
            Map.entry(PROCESS_START, Series.PROCESS_START),
            Map.entry("vllm:num_requests_running", Series.RUNNING),
            Map.entry("vllm:num_requests_waiting", Series.WAITING),
            Map.entry("vllm:generation_tokens_total", Series.GENERATION_TOKENS),
            Map.entry("vllm:prompt_tokens_total", Series.PROMPT_TOKENS),
            // Only vLLM's: at the first scrape it tells a snapshot restore (counters restored from the image).
            Map.entry("vllm:request_success_total", Series.REQUEST_SUCCESS),
            // A preempted request's stream pauses while the others go on: busy, not a stall.
            Map.entry("vllm:num_preemptions_total", Series.PREEMPTIONS),
            Map.entry("llamacpp:requests_processing", Series.RUNNING),
            Map.entry("llamacpp:requests_deferred", Series.WAITING),
            Map.entry("llamacpp:tokens_predicted_total", Series.GENERATION_TOKENS),
            Map.entry("llamacpp:prompt_tokens_total", Series.PROMPT_TOKENS),
            // llama-server adds to its token counters only when a request ends: its decode steps show progress.
            Map.entry("llamacpp:n_decode_total", Series.DECODE_STEPS),
            Map.entry("sglang:num_running_reqs", Series.RUNNING),
            Map.entry("sglang:num_queue_reqs", Series.WAITING),
            Map.entry("sglang:generation_tokens_total", Series.GENERATION_TOKENS),
            Map.entry("sglang:prompt_tokens_total", Series.PROMPT_TOKENS),
            Map.entry("tgi_batch_current_size", Series.RUNNING),
            Map.entry("tgi_queue_size", Series.WAITING),
            Map.entry("tgi_request_generated_tokens_sum", Series.GENERATION_TOKENS),
            Map.entry("tgi_request_input_length_sum", Series.PROMPT_TOKENS));

    /** The name prefixes that tell whose metrics these are. */
    static final java.util.List<String> FAMILIES =
            java.util.List.of("vllm:", "llamacpp:", "sglang:", "tgi_", "process_");

    private final String text;
    private int position;
    private int lineNumber;
    private final Map<Series, Double> sums = new java.util.EnumMap<>(Series.class);
    private final java.util.Set<String> families = new java.util.TreeSet<>();
    private @Nullable Map<String, String> cacheConfig;
    private @Nullable Integer sleepLevel;

    private PrometheusText(String text) {
        this.text = text;
    }

    /**
     * @throws EngineCallException {@code MALFORMED_BODY} naming the first line that is not a sample
     */
    static EngineMetricsSample parse(String text) {
        return new PrometheusText(text).read();
    }

    private EngineMetricsSample read() {
        int length = text.length();
        while (position < length) {
            int end = text.indexOf('\n', position);
            if (end < 0) {
                end = length;
            }
            lineNumber++;
            int lineEnd = end > position && text.charAt(end - 1) == '\r' ? end - 1 : end;
            sampleLine(position, lineEnd);
            position = end + 1;
        }
        Map<String, String> labels = cacheConfig;
        return new EngineMetricsSample(
                sums.get(Series.PROCESS_START),
                sums.get(Series.RUNNING),
                sums.get(Series.WAITING),
                sums.get(Series.GENERATION_TOKENS),
                sums.get(Series.PROMPT_TOKENS),
                sums.get(Series.REQUEST_SUCCESS),
                labels == null ? Map.of() : Map.copyOf(labels),
                families,
                sums.get(Series.DECODE_STEPS),
                sums.get(Series.PREEMPTIONS),
                sleepLevel);
    }

    private void sampleLine(int start, int end) {
        int i = skipSpaces(start, end);
        if (i == end || text.charAt(i) == '#') {
            return;
        }
        int nameEnd = i;
        while (nameEnd < end && isNameChar(text.charAt(nameEnd), nameEnd == i)) {
            nameEnd++;
        }
        if (nameEnd == i) {
            throw malformed("does not start with a metric name");
        }
        String name = text.substring(i, nameEnd);
        i = nameEnd;
        Map<String, String> labels = null;
        if (i < end && text.charAt(i) == '{') {
            labels = new LinkedHashMap<>();
            i = labels(i + 1, end, labels);
        }
        int valueStart = skipSpaces(i, end);
        if (valueStart == i || valueStart == end) {
            throw malformed("has no value");
        }
        int valueEnd = valueStart;
        while (valueEnd < end && text.charAt(valueEnd) != ' ' && text.charAt(valueEnd) != '\t') {
            valueEnd++;
        }
        double value = value(text.substring(valueStart, valueEnd));
        // What may follow (a timestamp) is not used.
        for (String family : FAMILIES) {
            if (name.startsWith(family)) {
                families.add(family);
            }
        }
        if (name.equals(CACHE_CONFIG)) {
            if (labels != null && (cacheConfig == null || smallerKvCache(labels, cacheConfig))) {
                cacheConfig = labels;
            }
        } else if (name.equals(SLEEP_STATE)) {
            Integer level = labels == null ? null : SLEEP_LEVELS.get(labels.get("sleep_state"));
            if (level != null) {
                // One series per state, the current one at 1; the deepest over engine cores.
                int now = value == 1 ? level : 0;
                sleepLevel = sleepLevel == null ? now : Math.max(sleepLevel, now);
            }
        } else {
            Series series = NAMES.get(name);
            if (series != null) {
                sums.merge(series, value, Double::sum);
            }
        }
    }

    /** Parses {@code name="value",...}} from just after the brace; returns the index after the closing brace. */
    private int labels(int start, int end, Map<String, String> labels) {
        int i = start;
        while (true) {
            i = skipSpaces(i, end);
            if (i < end && text.charAt(i) == '}') {
                return i + 1;
            }
            int nameStart = i;
            while (i < end && isNameChar(text.charAt(i), i == nameStart) && text.charAt(i) != ':') {
                i++;
            }
            if (i == nameStart) {
                throw malformed("has a label without a name");
            }
            String name = text.substring(nameStart, i);
            i = skipSpaces(i, end);
            if (i >= end || text.charAt(i) != '=') {
                throw malformed("has a label without a value");
            }
            i = skipSpaces(i + 1, end);
            if (i >= end || text.charAt(i) != '"') {
                throw malformed("has a label value that is not quoted");
            }
            i++;
            StringBuilder value = new StringBuilder();
            while (true) {
                if (i >= end) {
                    throw malformed("has an unterminated label value");
                }
                char c = text.charAt(i++);
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    if (i >= end) {
                        throw malformed("has an unterminated label value");
                    }
                    char escaped = text.charAt(i++);
                    value.append(escaped == 'n' ? '\n' : escaped);
                } else {
                    value.append(c);
                }
            }
            labels.put(name, value.toString());
            i = skipSpaces(i, end);
            if (i < end && text.charAt(i) == ',') {
                i++;
            } else if (i >= end || text.charAt(i) != '}') {
                throw malformed("has labels that are not comma-separated");
            }
        }
    }

    /**
     * A sample's value as Prometheus reads it (Go's {@code ParseFloat}: {@code NaN}, {@code Inf} and {@code Infinity}
     * in any case, with a sign), and {@code -nan} too: llama-server prints its rates with C++ streams, which write
     * {@code nan}, {@code -nan} and {@code inf} for a rate over no time yet.
     */
    private double value(String token) {
        String special = token.toLowerCase(java.util.Locale.ROOT);
        return switch (special) {
            case "+inf", "inf", "+infinity", "infinity" -> Double.POSITIVE_INFINITY;
            case "-inf", "-infinity" -> Double.NEGATIVE_INFINITY;
            case "nan", "+nan", "-nan" -> Double.NaN;
            default -> {
                try {
                    yield Double.parseDouble(token);
                } catch (NumberFormatException ex) {
                    throw malformed("has a value that is not a number");
                }
            }
        };
    }

    /**
     * Whether {@code labels} describe a smaller KV cache than {@code kept}: with several engine cores (data parallel,
     * one {@code engine="N"} series each) the smallest bounds what one request can use and shrinks first.
     */
    private static boolean smallerKvCache(Map<String, String> labels, Map<String, String> kept) {
        long size = tokens(labels);
        long keptSize = tokens(kept);
        return size >= 0 && (keptSize < 0 || size < keptSize);
    }

    private static long tokens(Map<String, String> labels) {
        Long tokens = EngineMetricsSample.kvCacheSizeTokens(labels);
        return tokens == null ? -1 : tokens;
    }

    private static boolean isNameChar(char c, boolean first) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || c == '_'
                || c == ':'
                || (!first && c >= '0' && c <= '9');
    }

    private int skipSpaces(int start, int end) {
        int i = start;
        while (i < end && (text.charAt(i) == ' ' || text.charAt(i) == '\t')) {
            i++;
        }
        return i;
    }

    private EngineCallException malformed(String what) {
        // The line number only: a line's text may be anything the server sent.
        return EngineCallException.of(
                EngineFailure.Kind.MALFORMED_BODY,
                "/metrics line " + lineNumber + " " + what + " (not Prometheus text)");
    }
}
