package dev.readygate.restart;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * An engine's arguments, by name, as vLLM's {@code non-default args: {...}} line prints them (a Python dict) or as a
 * snapshot manifest's {@code engine_argv} lists them ({@code vllm serve MODEL --max-model-len 4096}); both read to the
 * same names ({@code max_model_len}) and plain values (quotes dropped), so a start logged by vLLM and one restored from
 * a snapshot of the same configuration compare equal.
 *
 * <p>The <em>configuration</em> is what makes two starts comparable: every argument but those that say where the
 * engine listens ({@code host}, {@code port}), which revision it serves (compared on its own), a secret
 * ({@code api_key}), and the preload daemon's loader ({@code load_format: ipc_cache} and its
 * {@code model_loader_extra_config}): that is the restart path itself, which the comparison puts side by side.
 *
 * @param values every argument, by name, in the order given
 */
public record EngineArguments(Map<String, String> values) {

    /** Arguments left out of the configuration: not what the engine is, or compared on their own. */
    private static final Set<String> NOT_CONFIGURATION =
            Set.of("model_tag", "host", "port", "revision", "api_key", "tokenizer_revision");

    /** The configuration hash of a start whose arguments are not known. */
    public static final String UNKNOWN_CONFIGURATION = "unknown";

    public EngineArguments {
        values = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** No arguments known. */
    public static final EngineArguments NONE = new EngineArguments(Map.of());

    /** The arguments of a {@code non-default args} dict, e.g. {@code {'model': 'Qwen/Qwen3-0.6B', 'port': 8000}}. */
    public static EngineArguments parse(@Nullable String line) {
        if (line == null) {
            return NONE;
        }
        String text = line.strip();
        int open = text.indexOf('{');
        int close = text.lastIndexOf('}');
        if (open < 0 || close <= open) {
            return NONE;
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (String entry : topLevel(text.substring(open + 1, close))) {
            int colon = colon(entry);
            if (colon <= 0) {
                continue;
            }
            String key = unquoted(entry.substring(0, colon).strip());
            if (!key.isEmpty()) {
                values.put(key, unquoted(entry.substring(colon + 1).strip()));
            }
        }
        return new EngineArguments(values);
    }

    /**
     * The arguments of a command line: {@code vllm serve MODEL --max-model-len 4096 --enforce-eager}; the model is
     * the first word after {@code serve}, a flag without a value is {@code True}.
     */
    public static EngineArguments ofArgv(List<String> argv) {
        Map<String, String> values = new LinkedHashMap<>();
        int serve = argv.indexOf("serve");
        int i = serve >= 0 ? serve + 1 : 0;
        if (i < argv.size() && !argv.get(i).startsWith("--")) {
            values.put("model", argv.get(i));
            i++;
        }
        for (; i < argv.size(); i++) {
            String word = argv.get(i);
            if (!word.startsWith("--")) {
                continue;
            }
            String flag = word.substring(2);
            int equals = flag.indexOf('=');
            if (equals > 0) {
                values.put(name(flag.substring(0, equals)), flag.substring(equals + 1));
            } else if (i + 1 < argv.size() && !argv.get(i + 1).startsWith("--")) {
                values.put(name(flag), argv.get(++i));
            } else {
                values.put(name(flag), "True");
            }
        }
        return new EngineArguments(values);
    }

    /** The arguments as vLLM's {@code non-default args} line writes them: {@code {'model': 'm', 'port': 8000}}. */
    public String line() {
        StringBuilder line = new StringBuilder("{");
        values.forEach((name, value) -> {
            if (line.length() > 1) {
                line.append(", ");
            }
            boolean bare = value.matches("-?[0-9]+(\\.[0-9]+)?|True|False|None");
            line.append('\'').append(name).append("': ");
            line.append(bare ? value : "'" + value.replace("'", "\\'") + "'");
        });
        return line.append('}').toString();
    }

    /** Whether nothing is known. */
    public boolean unknown() {
        return values.isEmpty();
    }

    /** An argument's value, or null. */
    public @Nullable String get(String name) {
        return values.get(name);
    }

    /** An integer argument ({@code tensor_parallel_size}), or 1 when absent or not a number (vLLM's default). */
    public int size(String name) {
        String value = values.get(name);
        if (value == null) {
            return 1;
        }
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException ex) {
            return 1;
        }
    }

    /** The configuration: the arguments without where it listens, the revision, secrets and the preload loader. */
    public Map<String, String> configuration() {
        boolean weightCache = "ipc_cache".equals(values.get("load_format"));
        Map<String, String> configuration = new TreeMap<>();
        values.forEach((name, value) -> {
            boolean loader = weightCache && (name.equals("load_format") || name.equals("model_loader_extra_config"));
            if (!NOT_CONFIGURATION.contains(name) && !loader && !isDefault(name, value)) {
                configuration.put(name, value);
            }
        });
        return configuration;
    }

    /**
     * Whether an argument has the value vLLM gives it anyway, which its {@code non-default args} line leaves out and a
     * command line may spell: a served model name that is the model's.
     */
    private boolean isDefault(String name, String value) {
        String model = values.get("model");
        return name.equals("served_model_name")
                && model != null
                && (value.equals(model) || value.equals("['" + model + "']"));
    }

    /** A short, stable hash of the configuration ({@value #UNKNOWN_CONFIGURATION} when no argument is known). */
    public String configurationHash() {
        if (unknown()) {
            return UNKNOWN_CONFIGURATION;
        }
        StringBuilder text = new StringBuilder();
        configuration()
                .forEach((name, value) ->
                        text.append(name).append('=').append(value).append('\n'));
        return RestartConfiguration.hash(text.toString()).substring(0, 8);
    }

    /**
     * What sets each configuration apart from the others, in words ({@code max_model_len=8192}, or {@code
     * enforce_eager unset} where another configuration sets it); empty for each when there is only one.
     */
    public static Map<String, List<String>> differences(Collection<EngineArguments> all) {
        Map<String, Map<String, String>> byHash = new LinkedHashMap<>();
        all.stream()
                .filter(arguments -> !arguments.unknown())
                .forEach(arguments -> byHash.putIfAbsent(arguments.configurationHash(), arguments.configuration()));
        Set<String> names = new TreeSet<>();
        byHash.values().forEach(configuration -> names.addAll(configuration.keySet()));
        Set<String> differing = new TreeSet<>();
        for (String name : names) {
            if (byHash.values().stream().map(c -> c.get(name)).distinct().count() > 1) {
                differing.add(name);
            }
        }
        Map<String, List<String>> words = new LinkedHashMap<>();
        byHash.forEach((hash, configuration) -> {
            List<String> differs = new ArrayList<>();
            for (String name : differing) {
                String value = configuration.get(name);
                differs.add(value == null ? name + " unset" : name + "=" + value);
            }
            words.put(hash, List.copyOf(differs));
        });
        return words;
    }

    private static String name(String flag) {
        return flag.replace('-', '_');
    }

    /** The entries of a dict's inside, split at commas outside quotes and brackets. */
    private static List<String> topLevel(String inside) {
        List<String> entries = new ArrayList<>();
        int depth = 0;
        char quote = 0;
        int start = 0;
        for (int i = 0; i < inside.length(); i++) {
            char c = inside.charAt(i);
            if (quote != 0) {
                if (c == '\\') {
                    i++;
                } else if (c == quote) {
                    quote = 0;
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (c == '{' || c == '[' || c == '(') {
                depth++;
            } else if (c == '}' || c == ']' || c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                entries.add(inside.substring(start, i));
                start = i + 1;
            }
        }
        if (start < inside.length()) {
            entries.add(inside.substring(start));
        }
        return entries;
    }

    /** Where an entry's key ends: its first colon outside quotes. */
    private static int colon(String entry) {
        char quote = 0;
        for (int i = 0; i < entry.length(); i++) {
            char c = entry.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (c == ':') {
                return i;
            }
        }
        return -1;
    }

    private static String unquoted(String value) {
        if (value.length() >= 2) {
            char first = value.charAt(0);
            if ((first == '\'' || first == '"') && value.charAt(value.length() - 1) == first) {
                return value.substring(1, value.length() - 1);
            }
        }
        return value;
    }
}
