package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The engine's arguments from vLLM's {@code non-default args} line and a snapshot manifest's {@code engine_argv}. */
class EngineArgumentsTests {

    static final String COLD = "{'model_tag': 'Qwen/Qwen3-0.6B', 'host': '127.0.0.1', 'port': 18000, 'model':"
            + " 'Qwen/Qwen3-0.6B', 'revision': 'c1899de289a04d12100db370d81485cdf75e47ca', 'max_model_len': 4096}";

    static final String PRELOAD = "{'model_tag': 'Qwen/Qwen3-0.6B', 'host': '127.0.0.1', 'port': 18000, 'model':"
            + " 'Qwen/Qwen3-0.6B', 'revision': 'rollout-2', 'max_model_len': 4096, 'load_format': 'ipc_cache',"
            + " 'model_loader_extra_config': {'socket_dir': '/run/vllm', 'mode': 'zero_copy'}}";

    @Test
    void parseReadsNamesAndPlainValuesWithNestedDictsWhole() {
        EngineArguments arguments = EngineArguments.parse("non-default args: " + PRELOAD);

        assertThat(arguments.values())
                .containsEntry("model", "Qwen/Qwen3-0.6B")
                .containsEntry("port", "18000")
                .containsEntry("max_model_len", "4096")
                .containsEntry("model_loader_extra_config", "{'socket_dir': '/run/vllm', 'mode': 'zero_copy'}");
        assertThat(arguments.values()).hasSize(8);
    }

    @Test
    void parseKeepsCommasAndColonsInsideQuotesAndBrackets() {
        EngineArguments arguments = EngineArguments.parse(
                "{'served_model_name': ['a, b', 'c'], 'chat_template': 'x: {y}', \"quoted\": \"it's\"}");

        assertThat(arguments.values())
                .containsExactly(
                        Map.entry("served_model_name", "['a, b', 'c']"),
                        Map.entry("chat_template", "x: {y}"),
                        Map.entry("quoted", "it's"));
    }

    @Test
    void parseOfNothingOrNoDictKnowsNothing() {
        assertThat(EngineArguments.parse(null).unknown()).isTrue();
        assertThat(EngineArguments.parse("not a dict").unknown()).isTrue();
        assertThat(EngineArguments.parse(null).configurationHash()).isEqualTo("unknown");
    }

    @Test
    void configurationLeavesOutWhereItListensTheRevisionAndThePreloadLoader() {
        assertThat(EngineArguments.parse(PRELOAD).configuration())
                .containsExactly(Map.entry("max_model_len", "4096"), Map.entry("model", "Qwen/Qwen3-0.6B"));
        // A cold start and a preload hit of another revision share a configuration: the path and revision are
        // compared on their own.
        assertThat(EngineArguments.parse(PRELOAD).configurationHash())
                .isEqualTo(EngineArguments.parse(COLD).configurationHash())
                .matches("[0-9a-f]{8}");
    }

    @Test
    void configurationKeepsAnotherLoadFormat() {
        EngineArguments runai = EngineArguments.parse("{'model': 'm', 'load_format': 'runai_streamer'}");

        assertThat(runai.configuration()).containsEntry("load_format", "runai_streamer");
        assertThat(runai.configurationHash())
                .isNotEqualTo(EngineArguments.parse("{'model': 'm'}").configurationHash());
    }

    @Test
    void ofArgvReadsASnapshotManifestsCommandLineAsTheLogPrintsTheSameConfiguration() {
        EngineArguments argv = EngineArguments.ofArgv(List.of(
                "vllm",
                "serve",
                "Qwen/Qwen3-0.6B",
                "--host",
                "127.0.0.1",
                "--port",
                "18000",
                "--revision",
                "c1899de289a04d12100db370d81485cdf75e47ca",
                "--max-model-len",
                "4096"));

        assertThat(argv.get("revision")).isEqualTo("c1899de289a04d12100db370d81485cdf75e47ca");
        assertThat(argv.configurationHash())
                .isEqualTo(EngineArguments.parse(COLD).configurationHash());
    }

    @Test
    void configurationLeavesOutAServedModelNameThatIsTheModelsAsTheLogDoes() {
        EngineArguments argv = EngineArguments.ofArgv(List.of(
                "vllm",
                "serve",
                "Qwen/Qwen3-0.6B",
                "--max-model-len",
                "4096",
                "--served-model-name",
                "Qwen/Qwen3-0.6B"));
        EngineArguments renamed = EngineArguments.ofArgv(
                List.of("vllm", "serve", "Qwen/Qwen3-0.6B", "--max-model-len", "4096", "--served-model-name", "qwen"));

        assertThat(argv.configurationHash())
                .isEqualTo(EngineArguments.parse(COLD).configurationHash());
        assertThat(renamed.configuration()).containsEntry("served_model_name", "qwen");
    }

    @Test
    void ofArgvReadsFlagsWithoutValueAndWithEquals() {
        EngineArguments argv =
                EngineArguments.ofArgv(List.of("vllm", "serve", "m", "--enforce-eager", "--dtype=float16"));

        assertThat(argv.values())
                .containsExactly(
                        Map.entry("model", "m"), Map.entry("enforce_eager", "True"), Map.entry("dtype", "float16"));
    }

    @Test
    void lineWritesWhatParseReadsBack() {
        EngineArguments argv = EngineArguments.ofArgv(
                List.of("vllm", "serve", "Qwen/Qwen3-0.6B", "--max-model-len", "4096", "--enforce-eager"));

        assertThat(argv.line()).isEqualTo("{'model': 'Qwen/Qwen3-0.6B', 'max_model_len': 4096, 'enforce_eager': True}");
        assertThat(EngineArguments.parse(argv.line())).isEqualTo(argv);
    }

    @Test
    void sizeReadsParallelSizesWithVllmsDefaultOfOne() {
        EngineArguments arguments = EngineArguments.parse("{'tensor_parallel_size': 2, 'data_parallel_size': 'x'}");

        assertThat(arguments.size("tensor_parallel_size")).isEqualTo(2);
        assertThat(arguments.size("data_parallel_size")).isEqualTo(1);
        assertThat(arguments.size("pipeline_parallel_size")).isEqualTo(1);
    }

    @Test
    void differencesNameWhatSetsEachConfigurationApart() {
        EngineArguments small = EngineArguments.parse("{'model': 'm', 'max_model_len': 4096}");
        EngineArguments large = EngineArguments.parse("{'model': 'm', 'max_model_len': 8192, 'enforce_eager': True}");

        Map<String, List<String>> differences =
                EngineArguments.differences(List.of(small, large, small, EngineArguments.NONE));

        assertThat(differences)
                .containsExactly(
                        Map.entry(small.configurationHash(), List.of("enforce_eager unset", "max_model_len=4096")),
                        Map.entry(large.configurationHash(), List.of("enforce_eager=True", "max_model_len=8192")));
        assertThat(EngineArguments.differences(List.of(small, small)))
                .containsExactly(Map.entry(small.configurationHash(), List.of()));
    }
}
