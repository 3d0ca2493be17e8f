package dev.readygate.engine;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Reads the few series readygate uses from a Prometheus text exposition (version 0.0.4, as vLLM's
 * {@code prometheus_client} writes it, in multiprocess mode too), line by line: {@code #} lines are skipped, every
 * sample line must parse, samples of one name are summed over their label sets (the {@code engine="N"} series of
 * each engine core, the finish reasons); of several {@code vllm:cache_config_info} series (one per engine core), the
 * one with the smallest KV cache is kept.
 */
final class PrometheusText {

    static final String PROCESS_START = "process_start_time_seconds";
    static final String RUNNING = "vllm:num_requests_running";
    static final String WAITING = "vllm:num_requests_waiting";
    static final String GENERATION_TOKENS = "vllm:generation_tokens_total";
    static final String PROMPT_TOKENS = "vllm:prompt_tokens_total";
    static final String REQUEST_SUCCESS = "vllm:request_success_total";
    static final String CACHE_CONFIG = "vllm:cache_config_info";

    private final String text;
    private int position;
    private int lineNumber;
    private final Map<String, Double> sums = new HashMap<>();
    private @Nullable Map<String, String> cacheConfig;

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
                sums.get(PROCESS_START),
                sums.get(RUNNING),
                sums.get(WAITING),
                sums.get(GENERATION_TOKENS),
                sums.get(PROMPT_TOKENS),
                sums.get(REQUEST_SUCCESS),
                labels == null ? Map.of() : Map.copyOf(labels));
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
        if (name.equals(CACHE_CONFIG)) {
            if (labels != null && (cacheConfig == null || smallerKvCache(labels, cacheConfig))) {
                cacheConfig = labels;
            }
        } else if (isUsed(name)) {
            sums.merge(name, value, Double::sum);
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

    private double value(String token) {
        return switch (token) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
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
        try {
            return Long.parseLong(
                    labels.getOrDefault("kv_cache_size_tokens", "").strip());
        } catch (NumberFormatException ex) {
            return -1;
        }
    }

    private static boolean isUsed(String name) {
        return switch (name) {
            case PROCESS_START, RUNNING, WAITING, GENERATION_TOKENS, PROMPT_TOKENS, REQUEST_SUCCESS -> true;
            default -> false;
        };
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
